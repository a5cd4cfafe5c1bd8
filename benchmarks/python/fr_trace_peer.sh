#!/bin/sh
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# tdiag fr beside PyTorch's fr_trace on one generated job (issue 37):
#   [PYTHON=/path/to/python] benchmarks/python/fr_trace_peer.sh [BUILD_DIR] [RANKS] [ENTRIES]
# BUILD_DIR holds bin/tdiag_bench_trace_fr_bench (default build); the peer runs when torch is
# importable by $PYTHON (default python3). Prints both times and the ratio; where
# BUILD_DIR/bin/tdiag exists, also `fr_trace_peer.py speed` (both CLIs timed interleaved).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
build=${1:-build}
ranks=${2:-64}
entries=${3:-2000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/tdiag-fr-peer.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$py" "$here/fr_trace_peer.py" make "$dir" --ranks "$ranks" --entries "$entries"
peer_out=$("$py" "$here/fr_trace_peer.py" run "$dir")
echo "$peer_out"
peer=$(echo "$peer_out" | sed -n 's/^peer seconds: //p')
"$build/bin/tdiag_bench_trace_fr_bench" --dir "$dir" ${peer:+--peer-seconds "$peer"}
if [ -x "$build/bin/tdiag" ]; then
  "$py" "$here/fr_trace_peer.py" speed "$dir" --tdiag "$build/bin/tdiag"
fi
