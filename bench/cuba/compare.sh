#!/usr/bin/env bash
# compare.sh [SECONDS]
#
# Runs the CUBA benchmark (4000 neurons, Brette et al. 2007) in Neuro and in
# Brian2 (cpp_standalone), both on one thread pinned to one core, CUBA_REPEAT
# times each (default 5), alternating, and prints:
#   line 1: the Go program's JSON line of its median run
#           (go run ./bench/cuba -seconds S)
#   line 2: Brian2's JSON line of its median run
#           (bench/cuba/brian2_cuba.py --seconds S)
#   line 3: a summary JSON line with
#           speed_ratio = brian2 wall_seconds / neuro wall_seconds  (> 1: Neuro is faster)
#           rate_ratio  = neuro rate_hz / brian2 rate_hz            (~1: same dynamics)
#
# Compile time is excluded on both sides: the Go program is built first with
# `go build -o` into a temp folder, and Brian2 reports its own simulation run
# time (device._last_run_time), not its code generation or C++ build.
#
# Environment:
#   CUBA_ONLY=brian2|neuro   run only one half (no summary line)
#   PYTHON                   interpreter with Brian2 (default /usr/bin/python3)
#   CUBA_CPU                 core to pin to with taskset (default 0)
#   CUBA_REPEAT              runs of each side (default 5); the medians are compared
#   CUBA_SETTLE              seconds to wait before each run (default 2), so that
#                            the writes of Brian2's build before have settled
set -euo pipefail

S=${1:-10}
ONLY=${CUBA_ONLY:-}
PY=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"

die() { echo "compare.sh: $*" >&2; exit 1; }

PIN=()
if command -v taskset >/dev/null 2>&1; then
  PIN=(taskset -c "${CUBA_CPU:-0}")
else
  echo "compare.sh: taskset not found; runs are not pinned to one core" >&2
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuba_compare.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

REPEAT=${CUBA_REPEAT:-5}
SETTLE=${CUBA_SETTLE:-2}
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "CUBA_REPEAT must be a positive integer, got $REPEAT"

if [[ "$ONLY" != "brian2" ]]; then
  compgen -G "$HERE/*.go" >/dev/null ||
    die "the Go program ./bench/cuba is missing (no .go files in $HERE); run with CUBA_ONLY=brian2 to run Brian2 alone"
  go build -o "$TMP/cuba" ./bench/cuba || die "go build ./bench/cuba failed"
fi
if [[ "$ONLY" != "neuro" ]]; then
  "$PY" -c 'import brian2' 2>/dev/null || die "Brian2 is not importable by $PY (Debian: apt-get install python3-brian)"
fi

# median FILE: the JSON line of FILE with the median wall_seconds.
median() {
  "$PY" - "$1" <<'EOF'
import json, sys
runs = sorted((json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")), key=lambda r: r["wall_seconds"])
print(json.dumps(runs[len(runs) // 2], separators=(",", ":")))
EOF
}

for ((i = 0; i < REPEAT; i++)); do
  if [[ "$ONLY" != "brian2" ]]; then
    sleep "$SETTLE"
    out=$(GOMAXPROCS=1 "${PIN[@]}" "$TMP/cuba" -seconds "$S") || die "the Go program failed"
    printf '%s\n' "$out" | grep '^{' | tail -n 1 >>"$TMP/neuro.jsonl"
  fi
  if [[ "$ONLY" != "neuro" ]]; then
    LOG="$TMP/brian2.log"
    sleep "$SETTLE"
    OMP_NUM_THREADS=1 "${PIN[@]}" "$PY" "$HERE/brian2_cuba.py" --seconds "$S" 2>"$LOG" | grep '^{' | tail -n 1 >>"$TMP/brian2.jsonl" || {
      tail -n 30 "$LOG" >&2
      die "brian2_cuba.py failed"
    }
  fi
done

NEURO=""
if [[ "$ONLY" != "brian2" ]]; then
  [[ -s "$TMP/neuro.jsonl" ]] || die "the Go program printed no JSON line"
  NEURO=$(median "$TMP/neuro.jsonl")
  echo "$NEURO"
fi
BRIAN=""
if [[ "$ONLY" != "neuro" ]]; then
  [[ -s "$TMP/brian2.jsonl" ]] || die "brian2_cuba.py printed no JSON line"
  BRIAN=$(median "$TMP/brian2.jsonl")
  echo "$BRIAN"
fi

if [[ -n "$NEURO" && -n "$BRIAN" ]]; then
  "$PY" - "$NEURO" "$BRIAN" <<'EOF'
import json, sys
n, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(json.dumps({
    "summary": "cuba",
    "sim_seconds": b["sim_seconds"],
    "speed_ratio": b["wall_seconds"] / n["wall_seconds"] if n["wall_seconds"] else None,
    "rate_ratio": n["rate_hz"] / b["rate_hz"] if b["rate_hz"] else None,
    "neuro_wall_seconds": n["wall_seconds"],
    "brian2_wall_seconds": b["wall_seconds"],
    "neuro_rate_hz": n["rate_hz"],
    "brian2_rate_hz": b["rate_hz"],
}, separators=(",", ":")))
EOF
fi
