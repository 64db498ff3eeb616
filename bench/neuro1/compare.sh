#!/usr/bin/env bash
# compare.sh [TOKENS]
#
# Measures the built-in neuro-1 models side by side on this machine: the Go
# runtime (go run ./bench/neuro1, built first) and PyTorch 1.13 on 2 threads
# running the same weights (bench/neuro1/pytorch_gen.py), TOKENS tokens per
# sequence (default 256) at batch 1 and 8. Prints one summary line per model
# with the ratios (Go tokens/s over PyTorch's: > 1 means Go is faster) and
# writes models/speed.json, which the model cards read.
#
# Environment: PYTHON (default /usr/bin/python3); PRECISION, the Go side's
# weight precision (int8, the default at which the built-in models are
# served on cpu, models.DefaultPrecision; bfloat16; float32; PyTorch stays
# float32). Only a run at the served default writes models/speed.json.
# PYTORCH_QUANTIZE=int8 runs PyTorch with its own dynamic int8
# quantisation of the Linear layers instead (pytorch_gen.py --quantize);
# such a run writes no speed.json: the cards quote PyTorch in float32, and
# neither does a run with the kernels capped (NEURO_KERNELS).
# MODELS (comma-separated ids, default all three) measures only those; their
# entries in models/speed.json are replaced and the others kept.
set -euo pipefail

N=${1:-256}
PY=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/neuro1_compare.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

go build -o "$TMP/neuro1" ./bench/neuro1
PREC=${PRECISION:-int8}
"$TMP/neuro1" -tokens "$N" -precision "$PREC" ${MODELS:+-models "$MODELS"} | tee "$TMP/go.jsonl"
RUNS=$("$PY" - "$TMP/go.jsonl" <<'PY'
import json, sys
print(",".join(json.loads(l)["run"] for l in open(sys.argv[1])))
PY
)
PTQ=${PYTORCH_QUANTIZE:-none}
"$PY" bench/neuro1/pytorch_gen.py --runs "$RUNS" --tokens "$N" --threads 2 --quantize "$PTQ" | tee "$TMP/pt.jsonl"

"$PY" - "$TMP/go.jsonl" "$TMP/pt.jsonl" "$PREC" "$PTQ" <<'PY'
import json, os, platform, subprocess, sys
go = [json.loads(l) for l in open(sys.argv[1])]
pt = [json.loads(l) for l in open(sys.argv[2])]
cpu = "unknown CPU"
try:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
except OSError:
    pass
ncpu = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
machine = "%s, %s cores, %s kernels" % (cpu, ncpu, go[0].get("kernels", "?"))
try:
    speed = json.load(open("models/speed.json"))
except (OSError, ValueError):
    speed = {}
for g, p in zip(go, pt):
    speed[g["model"]] = {
        "tokens_per_second": {k: round(v) for k, v in g["tokens_per_second"].items()},
        "pytorch_tokens_per_second": {k: round(v) for k, v in p["tokens_per_second"].items()},
        "state_bytes_per_sequence": g["state_bytes_per_sequence"],
        "heap_bytes_at_context": g["heap_bytes_at_context"],
        "load_seconds": round(g["load_seconds"], 3),
        "machine": machine,
        "precision": sys.argv[3],
    }
    print(json.dumps({"model": g["model"], "precision": sys.argv[3], "pytorch_quantize": sys.argv[4], "machine": machine,
                      "ratio_batch1": round(g["tokens_per_second"]["batch1"] / p["tokens_per_second"]["batch1"], 2),
                      "ratio_batch8": round(g["tokens_per_second"]["batch8"] / p["tokens_per_second"]["batch8"], 2),
                      "fraction_of_peak_flops": {k: round(v, 3) for k, v in g.get("fraction_of_peak_flops", {}).items()},
                      "fraction_of_triad_bandwidth": {k: round(v, 3) for k, v in g.get("fraction_of_triad_bandwidth", {}).items()}}))
if sys.argv[3] != "int8" or sys.argv[4] != "none" or os.environ.get("NEURO_KERNELS"):
    sys.exit(0)
with open("models/speed.json", "w") as f:
    json.dump(speed, f, indent=1, sort_keys=True)
    f.write("\n")
PY
