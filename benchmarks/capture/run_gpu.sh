#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
#
# Capture on the GPU machine, in one batch: the gpu tests, the overhead benchmark (three runs),
# every rank of a job, SIGKILL truncation, capture ranges with PyTorch steps, --stacks at exit,
# the writer and symbolizer benchmarks, `tdiag capture` of the sample and of an unmodified
# PyTorch script, and the Chrome export. Each check prints "ok: ..." or "FAIL: ..." in
# $OUT/capture/capture.log; the script exits 1 when one failed.
# Run from the repository root after scripts/gpu/stage (which fills .gpu/bin and .gpu/lib):
#   OUT=gpu-logs benchmarks/capture/run_gpu.sh
set -uo pipefail
out="${OUT:-gpu-logs}/capture"; mkdir -p "$out"; : >"$out/capture.log"  # this run's checks only
bin="$PWD/.gpu/bin"
lib="$PWD/.gpu/lib"
# Our binaries need the staged Debian libraries; a traced Python must keep the system's newer
# libstdc++, so the capture runs get a library directory without the C++ runtime.
nostd="$PWD/.gpu/lib-nostd"; rm -rf "$nostd"; mkdir -p "$nostd"
for f in "$lib"/*; do
  case "$(basename "$f")" in libstdc++*|libgcc_s*) ;; *) ln -sf "$f" "$nostd/" ;; esac
done
status=0
step() { echo "== $*" | tee -a "$out/capture.log"; }
runlog() { "$@" 2>&1 | tee -a "$out/capture.log"; local rc=${PIPESTATUS[0]}; [[ $rc == 0 ]] || { echo "!! exit $rc: $*" | tee -a "$out/capture.log"; status=1; }; }

# expect FILE PATTERN WHAT: the check passes when FILE holds PATTERN (grep -E); "ok:"/"FAIL:".
expect() { if grep -Eq -- "$2" "$1"; then echo "ok: $3" | tee -a "$out/capture.log"; else echo "FAIL: $3 (no /$2/ in $1)" | tee -a "$out/capture.log"; status=1; fi; }

step "machine"; runlog nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# .gpu/run-all already ran the gpu tests: TDIAG_CAPTURE_SKIP_TESTS=1 skips them here.
[[ -n "${TDIAG_CAPTURE_SKIP_TESTS:-}" ]] || for t in "$bin"/tensordiag.test.capture.*; do
  [[ -x "$t" ]] || continue
  step "$t"; LD_LIBRARY_PATH="$lib" runlog "$t" --gtest_color=no
done
# Issue 23's table comes from three runs (each: medians over 7 interleaved rounds).
for run in $(seq "${TDIAG_OVERHEAD_RUNS:-3}"); do
  step "overhead: 100,000 tiny launches, run $run"
  LD_LIBRARY_PATH="$lib" runlog "$bin/tdiag_bench_capture_overhead_gpu" 100000 "$out" 7
done
while read -r line; do
  if [[ $line == *MISSED* ]]; then echo "FAIL: overhead: $line"; status=1; else echo "ok: overhead: $line"; fi
done < <(grep -E '^  default vs peer' "$out/capture.log") | tee -a "$out/capture.log"
grep -q '^FAIL: overhead' "$out/capture.log" && status=1
step "every rank of a job: 4 processes started by a shell launcher, one file per rank"
LD_LIBRARY_PATH="$nostd" "$bin/tdiag" capture -o "$out/job/" -- sh -c \
  "for r in 0 1 2 3; do RANK=\$r WORLD_SIZE=4 '$bin/tdiag_capture_demo' 20 & done; wait" \
  >"$out/job.log" 2>&1; cat "$out/job.log" >>"$out/capture.log"
expect "$out/job.log" '^job +4 processes' "4 processes, 4 files"
for r in 0 1 2 3; do expect "$out/job.log" "^  rank $r +rank$r\.tdtrace .*rank from RANK +[1-9]" "rank $r has its file and kernels"; done
py=python3; [[ -x /opt/torch/.venv/bin/python3 ]] && py=/opt/torch/.venv/bin/python3
if "$py" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  step "every rank of a job: torchrun --nproc-per-node 4"
  LD_LIBRARY_PATH="$nostd" "$bin/tdiag" capture -o "$out/torchrun/" -- "$py" -m torch.distributed.run \
    --nproc-per-node 4 samples/capture_demo/torch_step.py 5 >"$out/torchrun.log" 2>&1
  cat "$out/torchrun.log" >>"$out/capture.log"
  expect "$out/torchrun.log" '^job +4 processes' "torchrun: 4 processes, 4 files"
  for r in 0 1 2 3; do expect "$out/torchrun.log" "^  rank $r +rank$r\.tdtrace" "torchrun: rank $r"; done
fi
step "truncation safety: the application SIGKILLed after 6 s"
LD_LIBRARY_PATH="$nostd" "$bin/tdiag" capture -o "$out/killed.tdtrace" -- \
  timeout -s KILL 6 "$bin/tdiag_capture_demo" 100000000 >"$out/killed.log" 2>&1
cat "$out/killed.log" >>"$out/capture.log"
expect "$out/killed.log" 'exited with status 137' "killed: the application died of SIGKILL"
expect "$out/killed.log" '^kernels +[1-9][0-9]{2,} ' "killed: the file loads its complete chunks (>= 100 kernels)"
expect "$out/killed.log" 'TDIAG-TR-310' "killed: the loader says the file was not closed"
step "capture ranges: tensordiag.torch.capture(steps=...) under --range cuda-profiler-api"
if "$py" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  for steps in "10 11" "10 13"; do
    LD_LIBRARY_PATH="$nostd" "$bin/tdiag" capture --range cuda-profiler-api --no-torch-history \
      -o "$out/steps.tdtrace" -- "$py" tests/capture/torch_steps.py 20 $steps >"$out/steps-${steps// /-}.log" 2>&1
    cat "$out/steps-${steps// /-}.log" >>"$out/capture.log"
  done
  one=$(awk '/^kernels /{print $2}' "$out/steps-10-11.log"); three=$(awk '/^kernels /{print $2}' "$out/steps-10-13.log")
  echo "kernels: step 10 alone ${one:-?}, steps 10-12 ${three:-?}" | tee -a "$out/capture.log"
  if [[ -n "$one" && -n "$three" && "$one" -gt 0 && "$three" -eq $((3 * one)) ]]; then
    echo "ok: torch.capture(steps=range(10, 13)) holds 3 steps' kernels" | tee -a "$out/capture.log"
  else echo "FAIL: torch.capture steps: ${one:-?} then ${three:-?} kernels (want N, 3N)" | tee -a "$out/capture.log"; status=1; fi
fi
step "--stacks at exit: a 200-step PyTorch loop, time after its last step (target <= 1 s more than without --stacks)"
if "$py" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  declare -A after
  for mode in plain stacks; do
    flag=(); [[ $mode == stacks ]] && flag=(--stacks)
    LD_LIBRARY_PATH="$nostd" "$bin/tdiag" capture "${flag[@]}" -o "$out/exit-$mode.tdtrace" -- \
      "$py" tests/capture/torch_steps.py 200 >"$out/exit-$mode.log" 2>&1
    finished=$(date +%s.%N); cat "$out/exit-$mode.log" >>"$out/capture.log"
    ended=$(awk '/^torch_steps: end /{print $3}' "$out/exit-$mode.log")
    after[$mode]=$(awk -v a="$finished" -v b="${ended:-0}" 'BEGIN{printf "%.2f", a - b}')
    echo "after the last step, capture $mode: ${after[$mode]} s" | tee -a "$out/capture.log"
  done
  if awk -v s="${after[stacks]}" -v p="${after[plain]}" 'BEGIN{exit !(s - p <= 1.0)}'; then
    echo "ok: --stacks adds <= 1 s at exit (${after[stacks]} s against ${after[plain]} s)" | tee -a "$out/capture.log"
  else echo "FAIL: --stacks adds more than 1 s at exit (${after[stacks]} s against ${after[plain]} s)" | tee -a "$out/capture.log"; status=1; fi
  expect "$out/exit-stacks.log" '^kernels +[1-9]' "--stacks run: kernels captured"
fi
step "writer throughput (CPU)"
LD_LIBRARY_PATH="$lib" runlog "$bin/tdiag_bench_capture_writer"
step "stack symbolization: in process against addr2line (CPU)"
LD_LIBRARY_PATH="$lib" runlog "$bin/tdiag_bench_capture_symbolize"
step "tdiag capture of the sample (stacks)"
LD_LIBRARY_PATH="$nostd" runlog "$bin/tdiag" capture --stacks -o "$out/demo.tdtrace" -- \
  "$bin/tdiag_capture_demo" 100
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  step "tdiag capture of an unmodified PyTorch script (stacks)"
  LD_LIBRARY_PATH="$nostd" runlog "$bin/tdiag" capture --stacks -o "$out/torch.tdtrace" -- \
    python3 samples/capture_demo/torch_step.py 20
  step "tdiag capture of the PyTorch script (no stacks)"
  LD_LIBRARY_PATH="$nostd" runlog "$bin/tdiag" capture -o "$out/torch-nostacks.tdtrace" -- \
    python3 samples/capture_demo/torch_step.py 20
  if LD_LIBRARY_PATH="$lib" "$bin/tdiag" trace export --help >/dev/null 2>&1; then
    step "Chrome export of the PyTorch trace"
    LD_LIBRARY_PATH="$lib" runlog "$bin/tdiag" trace export "$out/torch.tdtrace" --chrome "$out/torch.json"
    ls -l "$out/torch.json" 2>&1 | tee -a "$out/capture.log"
  fi
else
  step "PyTorch with CUDA not available: skipped"
fi
gzip -f "$out"/*.json 2>/dev/null  # Perfetto opens .json.gz too
exit $status
