package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/stream.golden")

// TestStream: testdata/stream.json is `go test -json` of packages that
// pass, skip, fail, panic, fail to build and have no tests, and one whose
// output stops halfway (go test killed); the log is the golden file.
func TestStream(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "stream.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := newReporter(&out)
	if err := r.read(bytes.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if !r.failed {
		t.Error("a stream with failures is not reported as failed")
	}
	golden := filepath.Join("testdata", "stream.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("log differs from %s (go test -update to rewrite):\n%s", golden, out.Bytes())
	}
	// The closing count of .ci/run greps these: one per package, nothing
	// from inside a test.
	ok := regexp.MustCompile(`(?m)^ok `).FindAll(out.Bytes(), -1)
	fail := regexp.MustCompile(`(?m)^FAIL`).FindAll(out.Bytes(), -1)
	if len(ok) != 0 || len(fail) != 4 {
		t.Errorf("%d lines begin with ok and %d with FAIL, want 0 and 4", len(ok), len(fail))
	}
	for _, s := range []string{"SKIP example.com/tl/p TestSkip: p_test.go:4: no fixture here", "SKIP example.com/tl/p TestSub/a: p_test.go:7: sub skip"} {
		if !strings.Contains(out.String(), s+"\n") {
			t.Errorf("no line %q", s)
		}
	}
}

// TestPassing: a stream where everything passes writes the package lines
// and no skips, and is not failed.
func TestPassing(t *testing.T) {
	in := `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestX"}
{"Action":"output","Package":"a","Test":"TestX","Output":"=== RUN   TestX\n"}
{"Action":"output","Package":"a","Test":"TestX","Output":"--- PASS: TestX (0.00s)\n"}
{"Action":"pass","Package":"a","Test":"TestX"}
{"Action":"output","Package":"a","Output":"PASS\n"}
{"Action":"output","Package":"a","Output":"ok  \ta\t0.01s\n"}
{"Action":"pass","Package":"a"}
`
	var out bytes.Buffer
	r := newReporter(&out)
	if err := r.read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if want := "ok  \ta\t0.01s\nskipped tests: none\n"; out.String() != want || r.failed {
		t.Errorf("log %q (failed %v), want %q", out.String(), r.failed, want)
	}
}
