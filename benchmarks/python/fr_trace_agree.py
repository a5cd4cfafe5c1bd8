# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""`fr_trace_peer.py agree`: PyTorch's fr_trace and `tdiag fr analyze` on the same planted faults.

What fr_trace (torch/distributed/flight_recorder, PyTorch 2.11) needs and says, read from its
sources (fr_trace.py, components/{loader,builder,utils,types,config_manager,fr_logger}.py):

- Input: a folder walked with os.walk (sub-folders too); every file whose name contains the
  prefix (--prefix, else inferred when all names are PREFIX<digits>) is unpickled, the rank
  being the number after the prefix. The JSON form is not read. Each pickle is a dict with
  `version` ("X.Y", equal on every rank), `pg_config` ({name: {desc, ranks: "[0, 1]"}}) and
  `entries`. An entry's `process_group[0]` must be a key of its rank's pg_config, and its
  `profiling_name` must start with "nccl:" or "xccl:" (Op raises "AssertionError: name
  formatting error?" otherwise; "gloo:" joined that list in April 2026, pytorch#179842, after
  2.11). Every member of every group needs a file, or it stops with "AssertionError: Missing dump
  files from ranks {..}" unless --allow-incomplete-ranks.
- Matching: greedy. It takes the first remaining entry of the first rank in load (directory)
  order and looks on every other member of its group for the entry with the same
  collective_seq_id, comparing (Op.match) type, input/output sizes (all_gather / reduce_scatter
  element counts against the group size), dtypes, then state. A rank that differs is named
  "Culprit rank N" against that first rank, so when the first rank loaded is the odd one every
  other rank is named (its own comment says so). After a group's first mismatch nothing of it
  matches any more; past --mismatch_cap (10) mismatches it stops ("Too many mismatches").
- Output: log lines on stderr (format "%(message)s"), exit status 0 whatever it finds; no
  machine-readable verdict (-o pickles its flat DB of torch namedtuples; -j/--just_print_entries
  prints each rank's entries as a table and matches nothing; -v adds the tables). Per mismatch a
  block: "Not all ranks joining collective, sequence number: N" with "missing ranks: {..}";
  "Collective sequence number: N has errors" with "error msg: Culprit rank R; Error type:
  <MatchState>, <detail>"; "Input/output mismatch in the collective sequence number: N"
  (all_to_all totals); "We cannot decide what's wrong with this collective entry because we
  missed FR dumps from ranks ({..})"; "No errors found for this collective entry". MatchState:
  FULLY_MATCHED, COLLECTIVE_TYPE_MISMATCH, SIZE_OR_SYNTAX_MISMATCH, COLLECTIVE_STATE_MISMATCH,
  COLLECTIVE_DTYPE_MISMATCH, UNDECIDED (all_to_all). This module parses those lines.
- `KeyError: ('0', 3)` on PyTorch 2.11's gloo dumps: build_groups_memberships keys its
  (group name, rank) -> group map by pg_config's keys, and gloo names the default group "" there
  while its entries say ("0", "default_pg"); build_collectives then looks up
  (entry's process_group[0], first rank loaded) = ("0", 3) (`pg_name = _pg_guids[...]`). Naming
  the pg_config entry as the entries do gets past it, then Op rejects "gloo:". The adjusted copy
  below makes exactly those two changes (and re-pickles the JSON form); fr_trace's failure on the
  dumps as written is reported beside its verdict on the copy.

Standard library only; fr_trace runs in a subprocess of the given Python, tdiag as a subprocess.
"""
import importlib.util
import json
import os
import pickle
import re
import shutil
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FR_TRACE = "torch.distributed.flight_recorder.fr_trace"
MATCHED = "FULLY_MATCHED"
NO_DUMP = "NO_DUMP"  # fr_trace: "Missing dump files from ranks" / "missed FR dumps from ranks"

# The real dumps' faults (tests/data/fr_real/*/truth.json names the rank): what a matcher sees.
REAL_KIND = {"skip": "COLLECTIVE_TYPE_MISMATCH", "size": "SIZE_OR_SYNTAX_MISMATCH",
             "dtype": NO_DUMP, "gil_held": NO_DUMP, "killed": NO_DUMP,
             "host_stuck": "MISSING_RANKS", "matched": MATCHED, "nccl_single": MATCHED}


def _make_dumps():
    """tests/data/fr/make_dumps.py, the synthetic dumps' writer, as a module."""
    path = os.path.join(ROOT, "tests", "data", "fr", "make_dumps.py")
    spec = importlib.util.spec_from_file_location("tdiag_fr_make_dumps", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def truth(kind, ranks, culprits, seq, what):
    return {"kind": kind, "ranks": sorted(ranks), "culprits": culprits, "seq": seq, "what": what}


def planted_jobs(n, k, r):
    """{name: (ranks, ranks without a file, truth)}: n ranks, k collectives, rank r at fault."""
    md = _make_dumps()
    jobs = {}

    def job(name, last, skip=(), **t):
        rs = md.world(n)
        for x in rs:
            x.calls(k - 1)
            last(x)
        jobs[name] = (rs, skip, truth(**t))

    job("clean", lambda x: x.call("all_reduce"),
        kind=MATCHED, ranks=[], culprits={}, seq=None, what=f"all {k} all_reduces complete")
    job("skip", lambda x: x.rank != r and x.call("all_reduce", state="started"),
        kind="MISSING_RANKS", ranks=[r], culprits={r: "not_reached"}, seq=k,
        what=f"rank {r} never issues #{k}")
    job("size", lambda x: x.call("all_reduce", state="started",
                                 size=(8, 4) if x.rank == r else (4, 4)),
        kind="SIZE_OR_SYNTAX_MISMATCH", ranks=[r], culprits={r: "desync"}, seq=k,
        what=f"rank {r}'s #{k} is 8x4, not 4x4")
    job("dtype", lambda x: x.call("all_reduce", state="started",
                                  dtype="Half" if x.rank == r else "Float"),
        kind="COLLECTIVE_DTYPE_MISMATCH", ranks=[r], culprits={r: "desync"}, seq=k,
        what=f"rank {r}'s #{k} is Half, not Float")
    job("type", lambda x: (x.call("all_gather", state="started", out_size=(4 * n, 4))
                           if x.rank == r else x.call("all_reduce", state="started")),
        kind="COLLECTIVE_TYPE_MISMATCH", ranks=[r], culprits={r: "desync"}, seq=k,
        what=f"rank {r}'s #{k} is all_gather, not all_reduce")
    job("state", lambda x: (x.call("all_reduce", state="started") if x.rank == r
                            else x.call("all_reduce").call("all_reduce", state="started")),
        kind="COLLECTIVE_STATE_MISMATCH", ranks=[r], culprits={r: "not_completed"}, seq=k,
        what=f"rank {r}'s #{k} started, never completed; the others completed it and wait "
             f"in #{k + 1}")
    job("no_dump", lambda x: x.call("all_reduce", state="started"), skip=(r,),
        kind=NO_DUMP, ranks=[r], culprits={r: "no_dump"}, seq=None,
        what=f"rank {r} wrote no file; the others wait in #{k}")
    return jobs


def write_job(folder, ranks, skip, t):
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    for x in ranks:
        if x.rank not in skip:
            with open(os.path.join(folder, f"_dump_{x.rank}"), "wb") as f:
                pickle.dump(x.dump(), f, protocol=4)
    with open(os.path.join(folder, "truth.json"), "w") as f:
        json.dump(t, f, indent=2, sort_keys=True)


def real_jobs(out, source):
    """Copies of the real dumps under `source`: {name: (folder, adjusted folder or None,
    adjustments, truth)}."""
    jobs = {}
    for name in sorted(os.listdir(source)):
        src = os.path.join(source, name)
        if not os.path.isfile(os.path.join(src, "truth.json")):
            continue
        with open(os.path.join(src, "truth.json")) as f:
            planted = json.load(f)
        culprits = {int(k): v for k, v in planted.get("culprits", {}).items()}
        base = re.sub(r"(_w\d+|_json)$", "", name)
        kind = REAL_KIND.get(base, "?")
        ranks = [] if kind == MATCHED else sorted(culprits)
        seq = re.search(r"#(\d+)", planted.get("planted", ""))
        seq = int(seq.group(1)) if seq and kind not in (MATCHED, NO_DUMP) else None
        t = truth(kind, ranks, culprits, seq, planted.get("planted", ""))
        folder = os.path.join(out, "real_" + name)
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        shutil.copytree(src, folder)
        adjusted, changes = adjusted_copy(folder)
        jobs["real_" + name] = (folder, adjusted, changes, t)
    return jobs


def adjusted_copy(folder):
    """A sibling copy fr_trace can read, changed only where it must be: (folder, changes) or
    (None, []) when nothing needs changing."""
    changes = set()
    dumps = {}
    for f in sorted(os.listdir(folder)):
        m = re.fullmatch(r"(_dump_\d+)(\.json)?", f)
        if not m:
            continue
        path = os.path.join(folder, f)
        if m.group(2):
            with open(path) as fh:
                d = json.load(fh)
            for e in d.get("entries") or []:
                e["process_group"] = tuple(e["process_group"])  # a tuple in the pickle
            changes.add("re-pickled from the JSON form")
        else:
            with open(path, "rb") as fh:
                d = pickle.load(fh)  # noqa: S301 (the repository's own test data)
        config = d.get("pg_config") or {}
        entries = d.get("entries") or []
        used = {tuple(e["process_group"])[:2] for e in entries}
        unknown = {u for u in used if u[0] not in config}
        if "" in config and len(unknown) == 1:
            name = unknown.pop()[0]
            config[name] = dict(config.pop(""), name=name)
            changes.add(f"pg_config's nameless group keyed '{name}' as its entries name it")
        for e in entries:
            backend, _, op = e.get("profiling_name", "").partition(":")
            if backend not in ("nccl", "xccl"):
                e["profiling_name"] = "nccl:" + op
                changes.add(f"'{backend}:' profiling names read as 'nccl:'")
        dumps[m.group(1)] = d
    if not changes:
        return None, []
    out = folder + ".adjusted"
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for f, d in dumps.items():
        with open(os.path.join(out, f), "wb") as fh:
            pickle.dump(d, fh, protocol=4)
    return out, sorted(changes)


def probe_peer(python):
    """(torch version, None) when `python` can run fr_trace, else (None, why not)."""
    code = (f"import importlib, torch; importlib.import_module('{FR_TRACE}'); "
            "print(torch.__version__)")
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{python}: {e}"
    if done.returncode == 0:
        return done.stdout.strip(), None
    if "No module named 'torch'" in done.stderr:
        return None, "no torch"
    return None, (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1]


def run_peer(python, folder, extra, timeout):
    """(exit status or None past the timeout, stdout + stderr, seconds)."""
    cmd = [python, "-m", FR_TRACE, folder, "--prefix", "_dump_"] + extra
    t0 = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        text = "".join(x.decode(errors="replace") if isinstance(x, bytes) else x
                       for x in (e.stdout, e.stderr) if x)
        return None, text, time.perf_counter() - t0
    return done.returncode, done.stdout + done.stderr, time.perf_counter() - t0


def failure(text):
    """The exception of a traceback, with the frame that raised it."""
    lines = [x for x in text.strip().splitlines() if x.strip()]
    last = lines[-1].strip() if lines else "no output"
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', text)
    if frames:
        path, line, func = frames[-1]
        last += f" (at {os.path.basename(path)}:{line} in {func})"
    return last


def ints(text):
    return {int(x) for x in re.findall(r"\d+", text)}


HEADERS = [
    (re.compile(r"Not all ranks joining collective, sequence number: (\d+)"), "MISSING_RANKS"),
    (re.compile(r"Collective sequence number: (\d+) has errors"), "errors"),
    (re.compile(r"Input/output mismatch in the collective sequence number: (\d+)"),
     "SIZE_OR_SYNTAX_MISMATCH"),
    (re.compile(r"missed FR dumps from ranks \((.*?)\)"), NO_DUMP),
    (re.compile(r"No errors found for this collective entry"), "no errors"),
]


def parse_peer(text):
    """fr_trace's verdict blocks, in order: [{kind, seq, ranks, detail}]."""
    blocks = []
    for line in text.splitlines():
        for pattern, kind in HEADERS:
            m = pattern.search(line)
            if m:
                b = {"kind": kind, "seq": None, "ranks": set(), "detail": line.strip()}
                if kind == NO_DUMP:
                    b["ranks"] = ints(m.group(1))
                elif m.groups():
                    b["seq"] = int(m.group(1))
                blocks.append(b)
                break
        else:
            if not blocks:
                continue
            b = blocks[-1]
            if line.startswith("missing ranks:"):
                b["ranks"] = ints(line.split(":", 1)[1])
            elif line.startswith("error msg:"):
                errors = re.findall(r"Culprit rank (\d+); Error type: (\w+)", line)
                b["ranks"] = {int(r) for r, _ in errors}
                b["kind"] = "+".join(sorted({k for _, k in errors})) or "errors"
                b["detail"] = line.strip()
    return blocks


def peer_verdict(python, folder, timeout, log):
    """fr_trace's verdict on one job: {kind, seq, ranks, notes} or {failed, notes}."""
    notes = []
    rc, text, _ = run_peer(python, folder, [], timeout)
    missing = re.search(r"Missing dump files from ranks (\{[^}]*\})", text)
    if rc not in (None, 0) and missing:
        notes.append(f"stopped: Missing dump files from ranks {missing.group(1)}; "
                     "its verdict with --allow-incomplete-ranks")
        rc, text, _ = run_peer(python, folder, ["--allow-incomplete-ranks"], timeout)
    with open(log, "w") as f:
        f.write(text)
    if rc is None:
        return {"failed": f"ran past {timeout} s", "notes": notes}
    if rc != 0:
        return {"failed": failure(text), "notes": notes}
    blocks = parse_peer(text)
    absent = ints(missing.group(1)) if missing else set()
    for b in blocks:
        if b["kind"] == NO_DUMP:
            absent |= b["ranks"]
    if "Too many mismatches" in text:
        notes.append("stopped at --mismatch_cap")
    found = [b for b in blocks if b["kind"] not in (NO_DUMP, "no errors")]
    if found:
        v = dict(found[0])
        if absent:
            notes.append(f"no dumps from ranks {sorted(absent)}")
    elif absent:
        v = {"kind": NO_DUMP, "seq": None, "ranks": absent, "detail": ""}
    else:
        v = {"kind": MATCHED, "seq": None, "ranks": set(), "detail": "no mismatch reported"}
    v["notes"] = notes
    return v


def our_verdict(tdiag, folder, out_json, timeout):
    """`tdiag fr analyze FOLDER --json`: {kind, seq, ranks, culprits} or {failed}."""
    cmd = [tdiag, "fr", "analyze", folder, "--json", "-o", out_json]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"failed": f"ran past {timeout} s"}
    if done.returncode not in (0, 1):
        return {"failed": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    with open(out_json) as f:
        report = json.load(f)
    culprits = {c["rank"]: c["cause"] for c in report["culprits"]}
    mismatches = report["mismatches"]
    firsts = [g["first_divergence"] for g in report["groups"] if g["first_divergence"] is not None]
    ordered = [mismatches[i] for i in firsts] + [m for i, m in enumerate(mismatches)
                                                 if i not in firsts]
    # Which of tdiag's mismatches to hold beside fr_trace's first: this comparison's own rule,
    # not a verdict of tdiag's (job_report::findings() answers for the whole job only). A state
    # divergence alone is collectives in flight when the dumps were taken, unless a culprit's
    # work never completed there; tdiag reads that from pg_status too, which fr_trace does not
    # read (gloo leaves every entry `scheduled`).
    findings = [m for m in ordered if m["state"] != "COLLECTIVE_STATE_MISMATCH"
                or any(culprits.get(r) == "not_completed" for r in m["ranks"])]
    if findings:
        m = findings[0]
        v = {"kind": m["state"], "seq": m["seq"], "ranks": set(m["ranks"])}
    elif any(c == "no_dump" for c in culprits.values()):
        v = {"kind": NO_DUMP, "seq": None,
             "ranks": {r for r, c in culprits.items() if c == "no_dump"}}
    else:
        v = {"kind": MATCHED, "seq": None, "ranks": set()}
    v["in_flight"] = [m for m in ordered if m not in findings]
    v["culprits"] = culprits
    v["unknowns"] = report.get("unknowns", [])
    return v


def cell(v):
    if "failed" in v:
        return "fails: " + v["failed"]
    text = v["kind"]
    if v.get("seq") is not None:
        text += f" #{v['seq']}"
    if v.get("ranks"):
        text += " " + str(sorted(v["ranks"]))
    if "culprits" in v:
        text += "; " + (", ".join(f"{r}:{c}" for r, c in sorted(v["culprits"].items()))
                        or "no culprit")
    return text


def agreement(peer, ours, dumped):
    """(kind, ranks): yes / no, ranks also "inverted" (fr_trace named every dumped member but
    ours, having compared against it); "-" where either has no verdict."""
    if peer is None or "failed" in peer or "failed" in ours:
        return "-", "-"
    kind = "yes" if peer["kind"] == ours["kind"] else "no"
    if peer["ranks"] == ours["ranks"]:
        ranks = "yes"
    elif peer["ranks"] and set(dumped) - peer["ranks"] == ours["ranks"]:
        ranks = "inverted"
    else:
        ranks = "no"
    return kind, ranks


def versus_truth(ours, t):
    if "failed" in ours:
        return "-"
    same = (ours["kind"] == t["kind"] and sorted(ours["ranks"]) == t["ranks"]
            and {int(k): v for k, v in t["culprits"].items()} == ours["culprits"])
    return "yes" if same else "no"


def table(rows, headers):
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers))]
    line = "  ".join("{:<%d}" % w for w in widths)
    print(line.format(*headers).rstrip())
    print(line.format(*["-" * w for w in widths]).rstrip())
    for r in rows:
        print(line.format(*r).rstrip())


def agree(args, tdiag):
    """Generates the planted jobs and copies the real ones, runs both analyzers, prints the
    table and the details. Returns 0, or 1 when ours disagrees with a planted truth."""
    os.makedirs(args.out_dir, exist_ok=True)
    faulty = args.faulty if 0 <= args.faulty < args.ranks else args.ranks // 2
    jobs = []
    for name, (ranks, skip, t) in planted_jobs(args.ranks, args.entries, faulty).items():
        folder = os.path.join(args.out_dir, name)
        write_job(folder, ranks, skip, t)
        jobs.append((name, folder, None, [], t))
    source = args.real or os.path.join(ROOT, "tests", "data", "fr_real")
    if os.path.isdir(source):
        for name, (folder, adjusted, changes, t) in real_jobs(args.out_dir, source).items():
            jobs.append((name, folder, adjusted, changes, t))
    else:
        print(f"note: no real dumps at {source}")
    version, why = probe_peer(args.python)
    peer_name = f"fr_trace (PyTorch {version})" if version else "fr_trace"
    print(f"{len(jobs)} jobs in {args.out_dir}; planted: {args.ranks} ranks x {args.entries} "
          f"all_reduces, rank {faulty} at fault; tdiag: {tdiag}; fr_trace: "
          + (f"PyTorch {version} under {args.python}" if version else f"not run: {why}"))
    rows, details, wrong = [], [], []
    for name, folder, adjusted, changes, t in jobs:
        dumped = sorted(int(f[6:].split(".")[0]) for f in os.listdir(folder)
                        if re.fullmatch(r"_dump_\d+(\.json)?", f))
        ours = our_verdict(tdiag, folder, folder + ".tdiag.json", args.timeout)
        peer, as_written = None, None
        if version:
            peer = peer_verdict(args.python, folder, args.timeout, folder + ".fr_trace.log")
            if adjusted and "failed" in peer:
                as_written = peer
                peer = peer_verdict(args.python, adjusted, args.timeout,
                                    adjusted + ".fr_trace.log")
        kind, ranks = agreement(peer, ours, dumped)
        peer_cell = f"not run: {why}" if peer is None else cell(peer)
        if as_written:
            peer_cell = "adjusted copy: " + peer_cell
        truth_cell = cell({"kind": t["kind"], "seq": t["seq"], "ranks": set(t["ranks"])})
        ok = versus_truth(ours, t)
        if ok != "yes":
            wrong.append(name)
        rows.append([name, truth_cell, peer_cell, cell(ours), kind, ranks, ok])
        notes = [f"dumps of ranks {dumped}; planted: {t['what']}"]
        if as_written:
            notes.append(f"fr_trace on the dumps as written: fails: {as_written['failed']}")
            notes.append("adjusted copy (" + "; ".join(changes) + ")")
        if peer:
            notes += [f"fr_trace: {n}" for n in peer.get("notes", [])]
            if peer.get("detail"):
                notes.append(f"fr_trace says: {peer['detail'][:200]}")
        for m in ours.get("in_flight", []):
            notes.append(f"tdiag also: {m['state']} #{m['seq']} {m['ranks']} (in flight when "
                         "dumped, no finding by itself)")
        if ours.get("unknowns"):
            notes.append(f"tdiag unknowns: {ours['unknowns'][0][:200]}")
        details.append((name, notes))
    print()
    table(rows, ["job", "planted", peer_name, "tdiag fr analyze", "kind", "ranks", "ours=truth"])
    print("\nkind / ranks: fr_trace and tdiag agree on the mismatch kind / the rank(s) (inverted:"
          "\nfr_trace compared against the planted rank, loaded first, and named every other);"
          "\nNO_DUMP is fr_trace's \"Missing dump files\" / \"missed FR dumps from ranks\" and"
          "\ntdiag's no_dump; MISSING_RANKS is fr_trace's \"Not all ranks joining collective\".")
    for name, notes in details:
        print(f"\n{name}:")
        for n in notes:
            print(f"  {n}")
    print(f"\nours = truth in {len(jobs) - len(wrong)} of {len(jobs)} jobs"
          + (f"; wrong: {', '.join(wrong)}" if wrong else ""))
    return 1 if wrong else 0
