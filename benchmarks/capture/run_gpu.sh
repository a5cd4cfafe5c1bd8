#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
#
# Capture on the GPU machine, in one batch: the gpu tests, the overhead and writer benchmarks,
# `tdiag capture` of the sample and of an unmodified PyTorch script, and the Chrome export.
# Run from the repository root after scripts/gpu/stage (which fills .gpu/bin and .gpu/lib):
#   OUT=gpu-logs benchmarks/capture/run_gpu.sh
set -uo pipefail
out="${OUT:-gpu-logs}/capture"; mkdir -p "$out"
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

step "machine"; runlog nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in "$bin"/tensordiag.test.capture.*; do
  [[ -x "$t" ]] || continue
  step "$t"; LD_LIBRARY_PATH="$lib" runlog "$t" --gtest_color=no
done
step "overhead: 100,000 tiny launches"
LD_LIBRARY_PATH="$lib" runlog "$bin/tdiag_bench_capture_overhead_gpu" 100000 "$out"
step "writer throughput (CPU)"
LD_LIBRARY_PATH="$lib" runlog "$bin/tdiag_bench_capture_writer"
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
