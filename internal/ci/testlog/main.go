// Command testlog turns the event stream of `go test -json` into a CI log
// that a reader can take in: one line per package, the output of every
// test that failed, and at the end every skipped test with its reason, so
// that a skip is as visible as a failure.
//
//	go test -json ./... 2>&1 | tee test.json | go run ./internal/ci/testlog
//
// It writes, as the packages finish:
//
//   - the package lines `go test` prints without -v: "ok  \t<pkg>\t<time>",
//     "FAIL\t<pkg>\t<time>" (or "[build failed]") and "?   \t<pkg>\t[no test
//     files]". These are the only lines it writes that begin with "ok " or
//     "FAIL", so they can be counted with grep;
//   - under a failed test, "--- FAIL: <test>" and its output, indented;
//   - under a failed package, the compiler's errors or what the test
//     binary printed outside any test (a panic in TestMain, a timeout).
//
// After the last package it lists the skipped tests, "SKIP <pkg> <test>:
// <reason>", the reason being what the test logged before it skipped.
// Lines of the input that are not JSON are copied through. It exits with
// status 1 when a package failed or did not finish, 0 otherwise.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json), and of the build
// events `go test -json` interleaves with them.
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output and build-fail
}

// skip is a skipped test and why.
type skip struct {
	pkg, test, reason string
}

// reporter follows the stream: output is kept per test until the test ends,
// and per package until the package ends.
type reporter struct {
	w      io.Writer
	tests  map[[2]string][]string // package, test -> output lines
	pkgs   map[string][]string    // package -> output outside tests
	order  []string               // packages started and not ended
	builds map[string][]string    // import path -> compiler output
	skips  []skip
	failed bool
}

func newReporter(w io.Writer) *reporter {
	return &reporter{w: w, tests: map[[2]string][]string{}, pkgs: map[string][]string{}, builds: map[string][]string{}}
}

func main() {
	l := newReporter(os.Stdout)
	if err := l.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testlog:", err)
		os.Exit(2)
	}
	if l.failed {
		os.Exit(1)
	}
}

// read consumes the stream and writes the log, then the skips.
func (l *reporter) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(l.w, "%s\n", line)
			continue
		}
		l.event(&e)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	l.finish()
	return nil
}

func (l *reporter) event(e *event) {
	switch e.Action {
	case "build-output":
		l.builds[e.ImportPath] = append(l.builds[e.ImportPath], e.Output)
		return
	case "build-fail":
		l.writeIndented(l.builds[e.ImportPath])
		delete(l.builds, e.ImportPath)
		return
	}
	if e.Package == "" {
		return
	}
	if e.Action == "start" {
		l.order = append(l.order, e.Package)
		return
	}
	if e.Test == "" {
		l.packageEvent(e)
		return
	}
	key := [2]string{e.Package, e.Test}
	switch e.Action {
	case "output":
		l.tests[key] = append(l.tests[key], e.Output)
	case "pass":
		delete(l.tests, key)
	case "skip":
		l.skips = append(l.skips, skip{e.Package, e.Test, reason(l.tests[key])})
		delete(l.tests, key)
	case "fail":
		fmt.Fprintf(l.w, "--- FAIL: %s (%s)\n", e.Test, e.Package)
		l.writeIndented(l.tests[key])
		delete(l.tests, key)
	}
}

func (l *reporter) packageEvent(e *event) {
	switch e.Action {
	case "output":
		switch {
		case summary(e.Output):
			fmt.Fprint(l.w, e.Output)
		case e.Output == "PASS\n" || e.Output == "FAIL\n":
		default:
			l.pkgs[e.Package] = append(l.pkgs[e.Package], e.Output)
		}
	case "pass", "skip":
		l.endPackage(e.Package)
	case "fail":
		l.failed = true
		l.writeIndented(l.pkgs[e.Package])
		l.endPackage(e.Package)
	}
}

func (l *reporter) endPackage(pkg string) {
	delete(l.pkgs, pkg)
	for i, p := range l.order {
		if p == pkg {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
}

// finish reports packages whose stream ended before they did (go test
// killed), then the skips.
func (l *reporter) finish() {
	for _, pkg := range l.order {
		l.failed = true
		var keys [][2]string
		for k := range l.tests {
			if k[0] == pkg {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i][1] < keys[j][1] })
		for _, k := range keys {
			fmt.Fprintf(l.w, "--- unfinished: %s (%s)\n", k[1], pkg)
			l.writeIndented(l.tests[k])
		}
		l.writeIndented(l.pkgs[pkg])
		fmt.Fprintf(l.w, "FAIL\t%s\t[the output ended before the package did]\n", pkg)
	}
	l.order = nil
	if len(l.skips) == 0 {
		fmt.Fprintln(l.w, "skipped tests: none")
		return
	}
	fmt.Fprintf(l.w, "skipped tests: %d\n", len(l.skips))
	for _, s := range l.skips {
		fmt.Fprintf(l.w, "SKIP %s %s: %s\n", s.pkg, s.test, s.reason)
	}
}

// summary tells whether a package's line is one `go test` prints without
// -v.
func summary(line string) bool {
	return strings.HasPrefix(line, "ok  \t") || strings.HasPrefix(line, "FAIL\t") || strings.HasPrefix(line, "?   \t")
}

// framing tells whether a test's line is the testing package's own
// (=== RUN, --- SKIP and the like) rather than what the test said.
func framing(line string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- FAIL", "--- SKIP"} {
		if strings.HasPrefix(strings.TrimLeft(line, " "), p) {
			return true
		}
	}
	return false
}

// reason is what a skipped test logged, on one line.
func reason(out []string) string {
	var parts []string
	for _, line := range out {
		if framing(line) {
			continue
		}
		if s := strings.TrimSpace(line); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

// writeIndented writes lines under a heading, four spaces in, so that no
// line of a test's output can pass for a package's summary line.
func (l *reporter) writeIndented(lines []string) {
	for _, line := range lines {
		if framing(line) {
			continue
		}
		fmt.Fprintf(l.w, "    %s\n", strings.TrimRight(line, "\n"))
	}
}
