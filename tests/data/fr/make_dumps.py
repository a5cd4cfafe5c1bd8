#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Writes small synthetic PyTorch Flight Recorder dumps, one folder per scenario, each with a
truth.json (the exact culprit set and causes; the first divergence where there is one).

Python 3 standard library only (no torch): the dumps follow the format PyTorch writes (keys of
FlightRecorder.hpp, version 2.x; pickles of plain dicts, lists, tuples, str, int, float, bool,
None; the JSON form with pg_status as strings, absent times as 0 and no frames).

    python3 tests/data/fr/make_dumps.py [OUT_DIR]    (default: beside this script)
"""
import json
import os
import pickle
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = ("0", "default_pg")
T0 = 1_700_000_000_000_000_000


_FRAMES = {}


def frame(name, filename, line):
    # One dict per distinct frame, shared by every entry, as PyTorch's dump shares them (the
    # pickle memo then keeps the files small).
    return _FRAMES.setdefault((name, filename, line),
                              {"name": name, "filename": filename, "line": line})


def frames_for(op, line):
    return [frame(f["name"], f["filename"], f["line"]) for f in [
        {"name": op, "filename": "torch/distributed/distributed_c10d.py", "line": 2696},
        {"name": "wrapper", "filename": "torch/distributed/c10d_logger.py", "line": 83},
        {"name": "train_step", "filename": "train.py", "line": line},
        {"name": "<module>", "filename": "train.py", "line": 120},
    ]]


class Rank:
    """One rank's ring and process groups."""

    def __init__(self, rank, backend="nccl", version="2.10", timing=True, ring_size=2000):
        self.rank = rank
        self.backend = backend
        self.version = version
        self.timing = timing
        self.ring_size = ring_size
        self.entries = []
        self.groups = {}  # name -> (desc, ranks, pg_id)
        self.seq = {}  # group name -> last collective seq
        self.record = 0
        self.ranks_as_text = True

    def group(self, name, desc, ranks):
        self.groups[name] = (desc, list(ranks), len(self.groups))
        self.seq.setdefault(name, 0)
        return self

    def call(self, op, state="completed", group=WORLD[0], size=(4, 4), dtype="Float",
             out_size=None, out_dtype=None, line=40):
        desc, _, pg_id = self.groups[group]
        self.seq[group] += 1
        seq = self.seq[group]
        created = T0 + self.record * 1_000_000
        if not self.timing:
            state = "scheduled"
        e = {
            "record_id": self.record,
            "pg_id": pg_id,
            "process_group": (group, desc),
            "collective_seq_id": seq,
            "p2p_seq_id": 0,
            "op_id": seq,
            "profiling_name": f"{self.backend}:{op}",
            "time_created_ns": created,
            "input_sizes": [list(size)],
            "input_dtypes": [dtype],
            "output_sizes": [list(out_size or size)],
            "output_dtypes": [out_dtype or dtype],
            "state": state,
            "time_discovered_started_ns": created + 1000 if state != "scheduled" else None,
            "time_discovered_completed_ns": created + 5000 if state == "completed" else None,
            "retired": state == "completed",
            "timeout_ms": 600000,
            "is_p2p": False,
            "frames": frames_for(op, line),
            "thread_id": "140000000000000",
            "thread_name": "pt_main_thread",
        }
        if state == "completed":
            e["duration_ms"] = 0.25
        self.entries.append(e)
        self.record += 1
        return self

    def p2p(self, op, peer_text, state="started", group=WORLD[0]):
        """A send or recv: its own p2p_seq_id; the collective seq does not move."""
        self.call(f"{op} {peer_text}", state=state, group=group)
        e = self.entries[-1]
        self.seq[group] -= 1
        e["collective_seq_id"] = self.seq[group]
        e["is_p2p"] = True
        self.p2p_seq = getattr(self, "p2p_seq", 0) + 1
        e["p2p_seq_id"] = self.p2p_seq
        return self

    def calls(self, n, op="all_reduce", **kw):
        for _ in range(n):
            self.call(op, **kw)
        return self

    def status(self):
        out = {}
        for name, (desc, ranks, pg_id) in self.groups.items():
            mine = [e for e in self.entries if e["process_group"][0] == name]
            enq = max([e["collective_seq_id"] for e in mine], default=-1)
            done = max([e["collective_seq_id"] for e in mine if e["state"] == "completed"],
                       default=-1)
            started = max([e["collective_seq_id"] for e in mine if e["state"] != "scheduled"],
                          default=-1)
            out[str(pg_id)] = {"last_enqueued_collective": enq,
                               "last_started_collective": started if self.timing else -1,
                               "last_completed_collective": done}
        return out

    def dump(self, status=None):
        config = {}
        for name, (desc, ranks, _) in self.groups.items():
            shown = "[" + ", ".join(str(r) for r in ranks) + "]" if self.ranks_as_text else ranks
            config[name] = {"name": name, "desc": desc, "ranks": shown}
        d = {"version": self.version, "comm_lib_version": "2.21.5", "pg_config": config,
             "pg_status": self.status() if status is None else status,
             "entries": self.entries[-self.ring_size:]}
        return d


def world(n=4, **kw):
    return [Rank(r, **kw).group(*WORLD, range(n)) for r in range(n)]


def write(name, ranks, truth, protocol=4, form="pickle", skip=(), empty=(), prefix="_dump_",
          statuses=None):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    for r in ranks:
        if r.rank in skip:
            continue
        path = os.path.join(folder, f"{prefix}{r.rank}")
        if r.rank in empty:
            open(path, "wb").close()
            continue
        d = r.dump((statuses or {}).get(r.rank))
        if form == "json":
            for e in d["entries"]:
                e.pop("frames", None)
                e["process_group"] = list(e["process_group"])
                for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
                    e[k] = e[k] or 0
            d["pg_status"] = {k: {kk: str(vv) for kk, vv in v.items()}
                              for k, v in d["pg_status"].items()}
            with open(path + ".json", "w") as f:
                json.dump(d, f)
        else:
            with open(path, "wb") as f:
                pickle.dump(d, f, protocol=protocol)
    truth = dict(truth)
    truth["culprits"] = {str(k): v for k, v in truth.get("culprits", {}).items()}
    with open(os.path.join(folder, "truth.json"), "w") as f:
        json.dump(truth, f, indent=2, sort_keys=True)
        f.write("\n")


def scenarios():
    rs = world()
    for r in rs:
        r.calls(8)
    write("all_matched", rs, {"stuck": False, "culprits": {}})

    rs = world()
    for r in rs:
        r.calls(4)
    for r in rs:
        if r.rank == 2:  # skipped the all_reduce: its seq 5 is the next call, a broadcast
            r.call("broadcast", state="started", line=44)
        else:
            r.call("all_reduce", state="started", line=42)
    write("skipped_collective", rs, {"stuck": True, "culprits": {2: "desync"},
                                     "mismatch": {"seq": 5, "state": "COLLECTIVE_TYPE_MISMATCH"}})

    rs = world()
    for r in rs:
        r.calls(4).call("all_reduce", state="started", size=(8, 4) if r.rank == 1 else (4, 4))
    write("size_mismatch", rs, {"stuck": True, "culprits": {1: "desync"},
                                "mismatch": {"seq": 5, "state": "SIZE_OR_SYNTAX_MISMATCH"}})

    rs = world()
    for r in rs:
        r.calls(4).call("all_reduce", state="started", dtype="Half" if r.rank == 3 else "Float")
    write("dtype_mismatch", rs, {"stuck": True, "culprits": {3: "desync"},
                                 "mismatch": {"seq": 5, "state": "COLLECTIVE_DTYPE_MISMATCH"}})

    rs = world()
    for r in rs:
        r.calls(4)
        if r.rank != 2:  # rank 2 is stuck on its host after #4
            r.call("all_reduce", state="started")
    write("host_stuck", rs, {"stuck": True, "culprits": {2: "not_reached"},
                             "mismatch": {"seq": 5, "state": "MISSING_RANKS"}})
    write("json_form", rs, {"stuck": True, "culprits": {2: "not_reached"}}, form="json")

    rs = world()
    for r in rs:
        r.calls(4)
        if r.rank == 1:  # its #5 started and never completed; the others went on to #6
            r.call("all_reduce", state="started")
        else:
            r.call("all_reduce").call("all_reduce", state="started")
    write("started_not_completed", rs, {"stuck": True, "culprits": {1: "not_completed"}})

    rs = world()
    for r in rs:
        r.calls(4).call("all_reduce", state="scheduled" if r.rank == 1 else "started")
    write("not_started", rs, {"stuck": True, "culprits": {1: "not_completed"}})

    rs = world()
    for r in rs:
        r.calls(4).call("all_reduce", state="started")
    write("missing_dump", rs, {"stuck": True, "culprits": {3: "no_dump"}}, skip=(3,))
    write("empty_dump", rs, {"stuck": True, "culprits": {2: "no_dump"}}, empty=(2,))
    write("all_waiting", rs, {"stuck": True, "culprits": {}, "undetermined": True})
    write("two_missing", rs, {"stuck": True, "culprits": {}, "undetermined": True}, skip=(1, 3))

    rs = world()
    for r in rs:
        r.calls(4)
    rs[0].call("all_reduce", state="started")  # one rank ahead of three: extra call or three stuck?
    write("one_ahead", rs, {"stuck": True, "culprits": {}, "undetermined": True})

    rs = world(ring_size=6)
    for r in rs:
        r.calls(18)
        if r.rank != 3:
            r.call("all_reduce", state="started")
    write("wrapped_ring", rs, {"stuck": True, "culprits": {3: "not_reached"}})

    # Rank 0 dumped after two calls, the others after eight, all completed: an older dump, not a
    # hang (its group's status line was empty).
    rs = world()
    for r in rs:
        r.calls(2 if r.rank == 0 else 8)
    write("older_dump", rs, {"stuck": False, "culprits": {}})

    rs = world(timing=False)
    for r in rs:
        r.calls(5)
        if r.rank != 2:
            r.call("all_reduce")
    # Without timing every entry is scheduled; pg_status says how far each rank got.
    statuses = {r.rank: {"0": {"last_enqueued_collective": 6 if r.rank != 2 else 5,
                               "last_started_collective": -1,
                               "last_completed_collective": 5}} for r in rs}
    write("all_scheduled", rs, {"stuck": True, "culprits": {2: "not_reached"}},
          statuses=statuses)
    no_status = {r.rank: {} for r in rs}
    write("all_scheduled_no_status", rs, {"stuck": False, "culprits": {2: "not_reached"}},
          statuses=no_status)

    rs = world()
    for r in rs:
        r.group("1", "tp", [0, 2])
    for r in rs:
        r.calls(3)
        if r.rank == 0:
            r.call("all_gather", group="1", out_size=(8, 4)).call(
                "all_gather", group="1", state="started", out_size=(8, 4))
        if r.rank == 2:
            r.call("all_gather", group="1", out_size=(8, 4))
    write("ranks_string", rs, {"stuck": True, "culprits": {2: "not_reached"}})

    rs = world()
    for r in rs:
        r.calls(4).call("all_reduce", state="started", line=41)
    write("proto2", rs, {"stuck": True, "culprits": {0: "no_dump"}}, protocol=2, skip=(0,))
    write("proto5", rs, {"stuck": True, "culprits": {1: "no_dump"}}, protocol=5, empty=(1,))

    rs = world()
    for r in rs[:3]:
        r.group("1", "dp", range(4))
    for r in rs:
        r.calls(4)
        if r.rank != 3:  # rank 3 never created group 1; the others wait in its first call
            r.call("all_reduce", group="1", state="started")
    write("group_count_disagree", rs, {"stuck": True, "culprits": {3: "not_reached"}})

    rs = world(backend="gloo")
    for r in rs:
        r.calls(6).call("all_reduce", state="scheduled")
    write("gloo_killed", rs, {"stuck": True, "culprits": {3: "no_dump"}}, skip=(3,))

    rs = world()
    for r in rs:
        r.group("1", "pp", [1, 2])
    for r in rs:
        r.calls(5)
        if r.rank in (0, 3):
            r.call("all_reduce", state="started")
        if r.rank == 1:  # waits in group 1 for rank 2, which hangs on its host
            r.call("broadcast", group="1", state="started")
    write("cross_group_victim", rs, {"stuck": True, "culprits": {2: "not_reached"}})

    rs = world()
    for r in rs:
        r.calls(4)
    rs[0].p2p("send", "0->1")  # rank 1 never posts the recv: it holds rank 0
    write("p2p_stuck", rs, {"stuck": True, "culprits": {1: "not_reached"}})

    rs = world()
    for r in rs:
        r.calls(4)
    rs[0].p2p("send", "0->1")  # paired by p2p_seq_id: rank 1 posted the recv
    rs[1].p2p("recv", "1<-0")
    rs[2].p2p("send", "2->3")  # rank 3 never posts the recv of p2p #1
    write("p2p_unposted_recv", rs, {"stuck": True, "culprits": {3: "not_reached"},
                                    "mismatch": {"seq": 1, "state": "MISSING_RANKS"}})

    rs = [Rank(r, version="2.0").group(*WORLD, range(4)) for r in range(4)]
    for r in rs:
        r.ranks_as_text = False
        r.calls(3)
        if r.rank != 0:
            r.call("all_reduce", state="started")
    write("version_2_0_list_ranks", rs, {"stuck": True, "culprits": {0: "not_reached"}},
          protocol=2)


if __name__ == "__main__":
    OUT = sys.argv[1] if len(sys.argv) > 1 else HERE
    for entry in os.listdir(OUT) if os.path.isdir(OUT) else []:
        path = os.path.join(OUT, entry)
        if os.path.isdir(path):
            shutil.rmtree(path)
    scenarios()
