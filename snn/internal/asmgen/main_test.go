package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// snnDir is the snn package, where the generated files are committed.
var snnDir = filepath.Join("..", "..")

// TestGenerated checks that the committed kernels are exactly what the
// generator writes, and that no amd64 assembly stands beside them that
// it does not write.
func TestGenerated(t *testing.T) {
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	generated := map[string]bool{}
	for _, f := range files {
		generated[f.name] = true
		committed, err := os.ReadFile(filepath.Join(snnDir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(committed, f.src) {
			t.Errorf("snn/%s differs from the generator's output from line %d: run go generate in snn",
				f.name, firstDiff(committed, f.src))
		}
	}
	asm, err := filepath.Glob(filepath.Join(snnDir, "*_amd64.s"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range asm {
		if !generated[filepath.Base(path)] {
			t.Errorf("snn/%s is not generated: write its kernels in the generator", filepath.Base(path))
		}
	}
}

// firstDiff is the number of the first line where a and b differ.
func firstDiff(a, b []byte) int {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}
