package torchfile

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixtureFiles(f *testing.F) [][]byte {
	paths, err := filepath.Glob("testdata/*.pt")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no fixtures: %v", err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzUnpickle runs raw pickle bytes through the safe unpickler. Seeds are
// the data.pkl and constants.pkl of every fixture.
func FuzzUnpickle(f *testing.F) {
	for _, b := range fixtureFiles(f) {
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			f.Fatal(err)
		}
		for _, e := range zr.File {
			if !strings.HasSuffix(e.Name, ".pkl") {
				continue
			}
			rc, _ := e.Open()
			data, _ := io.ReadAll(rc)
			rc.Close()
			f.Add(data)
		}
	}
	f.Add(newPK().tensor("0", 6, 0, []int64{2, 3}, []int64{3, 1}).stop())
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := &Options{Limits: Limits{MaxTensorElements: 1 << 20}}
		v, err := Unpickle(data, opts)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "pytorch: ") {
				t.Fatalf("error without prefix: %v", err)
			}
			return
		}
		// Whatever was built must be walkable as a module tree or a state dict.
		file := &File{root: v, limits: opts.Limits.withDefaults()}
		if _, ok := v.(*Module); ok {
			file.kind = KindModule
		} else if isStateDict(v) {
			file.kind = KindStateDict
		}
		file.StateDict()
		file.Modules()
	})
}

// FuzzOpen runs whole files through Open and materialises every tensor.
func FuzzOpen(f *testing.F) {
	for _, b := range fixtureFiles(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := &Options{Limits: Limits{MaxTensorElements: 1 << 20, MaxEntryBytes: 1 << 24}}
		file, err := Open(bytes.NewReader(data), int64(len(data)), opts)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "pytorch: ") {
				t.Fatalf("error without prefix: %v", err)
			}
			return
		}
		sd, err := file.StateDict()
		if err != nil {
			return
		}
		for _, nt := range sd {
			nt.Tensor.Float32s()
		}
		file.Modules()
	})
}
