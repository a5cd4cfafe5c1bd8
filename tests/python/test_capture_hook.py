# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tdiag capture's PyTorch hook (capture/python/sitecustomize.py) against a stand-in `torch`:
the history starts at the first CUDA initialisation (not at import), once, with the settings
tdiag capture passes; it is dumped at exit to the per-process file; a user's own sitecustomize
further along the path still runs; without tdiag capture's variable nothing happens."""

import os
import subprocess
import sys
import textwrap

from conftest import SOURCE_DIR

HOOK_DIR = SOURCE_DIR / "capture" / "python"

STUB = {
    "torch/__init__.py": "__version__ = '2.6.0+cu130'\nfrom . import cuda\n",
    "torch/cuda/__init__.py": textwrap.dedent("""\
        from . import memory
        inits = []
        def _lazy_init():
            inits.append(len(memory.history))
        """),
    "torch/cuda/memory.py": textwrap.dedent("""\
        history = []
        def _record_memory_history(max_entries, stacks):
            history.append((max_entries, stacks))
        def _dump_snapshot(path):
            with open(path, "w") as f:
                f.write(repr(history))
        """),
}

SCRIPT = textwrap.dedent("""\
    import torch
    assert torch.cuda.memory.history == [], "recording must wait for CUDA"
    torch.cuda._lazy_init()
    torch.cuda._lazy_init()
    print(torch.cuda.memory.history, torch.cuda.inits)
    import os
    print(os.environ.get("TORCH_SYMBOLIZE_MODE"))
    """)


def run(tmp_path, with_capture, **extra_env):
    for name, text in STUB.items():
        (tmp_path / "stub" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "stub" / name).write_text(text)
    (tmp_path / "user").mkdir(exist_ok=True)
    (tmp_path / "user" / "sitecustomize.py").write_text(
        "import os\nopen(os.environ['USER_MARK'], 'w').write('ran')\n")
    env = dict(os.environ, USER_MARK=str(tmp_path / "user-ran"),
               PYTHONPATH=os.pathsep.join(map(str, [HOOK_DIR, tmp_path / "user",
                                                    tmp_path / "stub"])))
    if with_capture:
        env.update(TDIAG_CAPTURE_TORCH_SNAPSHOT=str(tmp_path / "run.tdtrace.torch-{pid}.pickle"),
                   TDIAG_CAPTURE_TORCH_STACKS="all", TDIAG_CAPTURE_TORCH_ENTRIES="5000")
    env.pop("TORCH_SYMBOLIZE_MODE", None)
    env.update(extra_env)
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, check=True)


def test_history_starts_at_cuda_init_once_and_is_dumped_at_exit(tmp_path):
    result = run(tmp_path, True)
    # Recorded once, after the first initialisation (which had seen no history yet).
    assert result.stdout.splitlines()[0] == "[(5000, 'all')] [0, 1]", result.stderr
    dumps = list(tmp_path.glob("run.tdtrace.torch-*.pickle"))
    assert len(dumps) == 1 and dumps[0].read_text() == "[(5000, 'all')]"
    assert dumps[0].name.removeprefix("run.tdtrace.torch-").removesuffix(".pickle").isdigit()
    assert (tmp_path / "user-ran").read_text() == "ran"


def test_cpp_stacks_choose_pytorchs_in_process_symbolizer(tmp_path):
    # C++ stacks (--stacks) would otherwise be symbolized by addr2line children at exit.
    assert run(tmp_path, True).stdout.splitlines()[1] == "fast"
    assert run(tmp_path, True, TORCH_SYMBOLIZE_MODE="dladdr").stdout.splitlines()[1] == "dladdr"


def test_without_tdiag_capture_nothing_changes(tmp_path):
    result = run(tmp_path, False)
    assert result.stdout.splitlines() == ["[] [0, 0]", "None"], result.stderr
    assert not list(tmp_path.glob("*.pickle"))
    assert (tmp_path / "user-ran").read_text() == "ran"
