#!/usr/bin/env bash
# Fuzzes every fuzz target of the module (not the nested modules
# models/train and compat), one after another, for FUZZTIME each, and
# prints a table: executions, the inputs the fuzzer kept as new coverage,
# and what it found.
#
#	bash bench/fuzz.sh                 # every target, 30 s each
#	FUZZTIME=10s bash bench/fuzz.sh    # any -fuzztime: 10s, 5000x
#	bash bench/fuzz.sh 'Decode|Wire'   # the targets whose name matches
#
# go test -fuzz takes one target at a time. A failing input is written
# to the package's testdata/fuzz/<target>/, where it stays as a seed that
# every go test runs: commit it with the fix. FUZZPARALLEL sets
# -parallel (default: GOMAXPROCS). FUZZMINIMIZETIME (default 2s) bounds
# the minimizing of each input that adds coverage, which go test does
# within the target's time and would otherwise take most of a short
# run; a failing input is minimized for as long too. The fuzzer's own
# corpus stays in the build cache (go env GOCACHE)/fuzz.
#
# Go 1.26's fuzzing coordinator can end a target at its deadline with a
# bare "context deadline exceeded" though nothing failed (a worker still
# busy when time runs out); such an end, with no failing input written,
# is reported as "ok (deadline)". It exits 1 when a target failed.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:$HOME/go/bin"

fuzztime="${FUZZTIME:-30s}"
minimize="${FUZZMINIMIZETIME:-2s}"
match="${1:-.}"
parallel=()
if [ -n "${FUZZPARALLEL:-}" ]; then
  parallel=(-parallel "$FUZZPARALLEL")
fi

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# Package import path and directory, then each target in its test files.
targets=()
while read -r pkg dir; do
  for f in "$dir"/*_test.go; do
    [ -e "$f" ] || continue
    while read -r name; do
      if [[ "$name" =~ $match ]]; then
        targets+=("$pkg $name")
      fi
    done < <(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p' "$f")
  done
done < <(go list -f '{{.ImportPath}} {{.Dir}}' ./...)

echo "fuzzing ${#targets[@]} targets for $fuzztime each"
rows=()
failed=0
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  out="$log/$(echo "$pkg.$name" | tr '/' '_').log"
  start=$SECONDS
  if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "${parallel[@]}" "$pkg" >"$out" 2>&1; then
    result="ok"
  elif grep -q '^    context deadline exceeded$' "$out" && ! grep -q 'Failing input written' "$out"; then
    result="ok (deadline)"
  else
    result="FAIL"
    failed=1
  fi
  # The fuzzer's last progress line: "execs: N (R/sec), new interesting: K (total: T)".
  last=$(grep -E 'execs: [0-9]+' "$out" | tail -1 || true)
  execs=$(sed -n 's/.*execs: \([0-9]*\).*/\1/p' <<<"$last")
  interesting=$(sed -n 's/.*new interesting: \([0-9]*\).*/\1/p' <<<"$last")
  found=$(sed -n 's/.*Failing input written to \(.*\)$/\1/p' "$out" | head -1)
  if [ "$result" = "FAIL" ]; then
    echo "--- $pkg $name failed:"
    grep -v '^fuzz: elapsed' "$out" | sed 's/^/    /' | head -40
    [ -n "$found" ] && result="FAIL: ${pkg#github.com/neuro-go/neuro/}/$found"
  fi
  row=$(printf '%-44s %-26s %12s %6s  %s' "${pkg#github.com/neuro-go/neuro/}" "$name" "${execs:-0}" "${interesting:-0}" "$result")
  echo "$row  ($((SECONDS - start)) s)"
  rows+=("$row")
done

echo
printf '%-44s %-26s %12s %6s  %s\n' "package" "target" "executions" "new" "result"
for r in "${rows[@]}"; do echo "$r"; done
exit "$failed"
