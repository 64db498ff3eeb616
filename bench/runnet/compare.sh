#!/usr/bin/env bash
# Running networks against snnTorch on the same networks and inputs:
# COUNT rounds (default 3), each snnTorch's timings and then Neuro's, so
# that the two alternate on a shared machine; then the median and the
# range of each ratio over the rounds. Needs Debian's python3-torch and an
# snnTorch checkout on PYTHONPATH (default /tmp/neuro-ref/snntorch; see
# compile/pytorch/testdata/snn/gen.py).
#
#   COUNT=3 bash bench/runnet/compare.sh
#
# SECONDS_PER_CASE (default 1) is how long Neuro times each case; NETS
# and ACTIVITIES choose a subset (default all: shd,conv,rec and 1,5,20).
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
grep -m1 'model name' /proc/cpuinfo
uptime
go build -o "$dir/runnet" ./bench/runnet
for round in $(seq "${COUNT:-3}"); do
	PYTHONPATH="${SNNTORCH:-/tmp/neuro-ref/snntorch}" /usr/bin/python3 bench/runnet/snntorch_run.py "$dir" 2>/dev/null
	"$dir/runnet" -dir "$dir" -seconds "${SECONDS_PER_CASE:-1}" -nets "${NETS:-shd,conv,rec}" \
		-activities "${ACTIVITIES:-1,5,20}" | tee -a "$dir/results.jsonl"
	uptime
done
/usr/bin/python3 - "$dir/results.jsonl" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    rows.setdefault((d["network"], d["activity_percent"]), []).append(d)
cases = ["rest_batch1", "rest_full_batch", "packed_batch1", "packed_full_batch", "raster_batch1", "raster_full_batch", "in_process_batch1", "in_process_full_batch"]
print("| network | activity | counts differing | snnTorch b1 / b64 (samples/s) | " + " | ".join(cases) + " |")
print("|---|---:|---:|---:|" + "---:|" * len(cases))
for (net, pct), ds in rows.items():
    snt = "%.0f / %.0f" % (statistics.median(d["snntorch_batch1"] for d in ds), statistics.median(d["snntorch_full_batch"] for d in ds))
    diff = "%d of %d (max %d)" % (max(d["output_counts_differing"] for d in ds), ds[0]["output_counts"], max(d["largest_difference"] for d in ds))
    cells = []
    for c in cases:
        r = sorted(d["ratio_" + c] for d in ds)
        cells.append("%.2f× (%.2f–%.2f)" % (statistics.median(r), r[0], r[-1]))
    print("| %s | %s%% | %s | %s | %s |" % (net, pct, diff, snt, " | ".join(cells)))
EOF
