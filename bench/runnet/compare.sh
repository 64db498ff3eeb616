#!/usr/bin/env bash
# The run endpoint against snnTorch on the same network and inputs, in one
# run: snnTorch first (it writes the network and inputs), then Neuro.
# Needs Debian's python3-torch and an snnTorch checkout on PYTHONPATH
# (default /tmp/neuro-ref/snntorch; see compile/pytorch/testdata/snn/gen.py).
#
#   bash bench/runnet/compare.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
grep -m1 'model name' /proc/cpuinfo
PYTHONPATH="${SNNTORCH:-/tmp/neuro-ref/snntorch}" /usr/bin/python3 bench/runnet/snntorch_run.py "$dir"
go run ./bench/runnet -dir "$dir"
