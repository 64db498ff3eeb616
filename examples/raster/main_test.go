package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWritesThePictures(t *testing.T) {
	dir := t.TempDir()
	if err := run(dir, 1); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"raster.png", "raster.svg", "traces.png"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() < 10_000 {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
