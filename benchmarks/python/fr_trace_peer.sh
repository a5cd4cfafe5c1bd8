#!/bin/sh
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# tdiag fr beside PyTorch's fr_trace on one generated job (issue 37):
#   benchmarks/python/fr_trace_peer.sh [BUILD_DIR] [RANKS] [ENTRIES]
# BUILD_DIR holds bin/tdiag_bench_trace_fr_bench (default build); the peer runs when torch is
# importable by python3. Prints both times and the ratio.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
ranks=${2:-64}
entries=${3:-2000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/tdiag-fr-peer.XXXXXX")
trap 'rm -rf "$dir"' EXIT
python3 "$here/fr_trace_peer.py" make "$dir" --ranks "$ranks" --entries "$entries"
peer_out=$(python3 "$here/fr_trace_peer.py" run "$dir")
echo "$peer_out"
peer=$(echo "$peer_out" | sed -n 's/^peer seconds: //p')
"$build/bin/tdiag_bench_trace_fr_bench" --dir "$dir" ${peer:+--peer-seconds "$peer"}
