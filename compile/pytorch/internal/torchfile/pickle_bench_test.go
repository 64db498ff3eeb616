package torchfile

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixturePickles returns the .pkl entries of the committed fixtures that
// unpickle (the evil_* ones are refused by design), in file order.
func fixturePickles(tb testing.TB) [][]byte {
	tb.Helper()
	paths, err := filepath.Glob("testdata/*.pt")
	if err != nil || len(paths) == 0 {
		tb.Fatalf("fixtures missing: %v %v", paths, err)
	}
	var out [][]byte
	for _, p := range paths {
		if strings.HasPrefix(filepath.Base(p), "evil_") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			tb.Fatal(err)
		}
		names, _ := fs.Glob(zr, "*/*.pkl")
		for _, n := range names {
			b, err := fs.ReadFile(zr, n)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

// BenchmarkUnpickle runs the unpickler alone over every pickle of the
// committed fixtures (state_dicts, module trees, TorchScript constants):
// opcode dispatch and value building, with no tensor data read.
func BenchmarkUnpickle(b *testing.B) {
	all := fixturePickles(b)
	size := 0
	for _, p := range all {
		if _, err := Unpickle(p, nil); err != nil {
			b.Fatal(err)
		}
		size += len(p)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range all {
			if _, err := Unpickle(p, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(all)), "pickles/op")
}
