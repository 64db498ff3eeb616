package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// TestRun runs the example into a temporary directory and checks the
// pictures it writes.
func TestRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pictures")
	if err := run(dir, 1); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"raster.png", "traces.png"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	svg, err := os.ReadFile(filepath.Join(dir, "raster.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(svg, []byte("<?xml")) || !bytes.Contains(svg, []byte("</svg>")) {
		t.Errorf("raster.svg is not an SVG document: %q...", svg[:min(len(svg), 40)])
	}
}
