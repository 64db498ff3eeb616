package nir

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"testing"
)

// nirSkeleton builds a NIR file around an "nodes" group made by mk, so that
// a hostile structure sits where the reader will look.
func nirSkeleton(mk func(w *h5writer) uint64) []byte {
	w := newH5Writer()
	nodes := mk(w)
	top := w.group([]h5link{
		{"edges", w.strings([]int{0, 2}, nil)},
		{"nodes", nodes},
		{"type", w.strings(nil, []string{"NIRGraph"})},
	})
	root := w.group([]h5link{{"node", top}, {"version", w.strings(nil, []string{FormatVersion})}})
	return w.finish(root)
}

// nextAddr is where the writer's next object header will go.
func nextAddr(w *h5writer) uint64 {
	w.align8()
	return w.here()
}

func hostileFiles(t *testing.T) map[string][]byte {
	files := map[string][]byte{}
	// A group that links to itself: the HDF5 library would recurse until
	// the stack overflows.
	files["self-link"] = nirSkeleton(func(w *h5writer) uint64 {
		return w.group([]h5link{{"loop", nextAddr(w)}})
	})
	// A group whose child links back to it.
	files["cycle"] = nirSkeleton(func(w *h5writer) uint64 {
		// The child is written first, pointing at the parent's future
		// address: child header size is fixed, so compute it by a dry run.
		dry := newH5Writer()
		dry.buf = append(dry.buf, make([]byte, len(w.buf)-len(dry.buf))...)
		c := dry.group([]h5link{{"up", 0}})
		parent := nextAddr(dry)
		_ = c
		child := w.group([]h5link{{"up", parent}})
		return w.group([]h5link{{"child", child}})
	})
	// 40 levels, each linking twice to the next: 2^40 paths.
	files["diamonds"] = nirSkeleton(func(w *h5writer) uint64 {
		a := w.group(nil)
		for i := 0; i < 40; i++ {
			a = w.group([]h5link{{"a", a}, {"b", a}})
		}
		return a
	})
	// A weight that claims 2^40 elements backed by 16 bytes.
	files["absurd-size"] = nirSkeleton(func(w *h5writer) uint64 {
		weight := w.dataset(typeFloat32, []int{1 << 20, 1 << 20}, make([]byte, 16))
		node := w.group([]h5link{{"type", w.strings(nil, []string{"Linear"})}, {"weight", weight}})
		return w.group([]h5link{{"fc", node}})
	})
	// A link to an address beyond the end of the file.
	files["dangling"] = nirSkeleton(func(w *h5writer) uint64 {
		return w.group([]h5link{{"far", 1 << 40}})
	})
	// Not HDF5 at all, and an empty file.
	files["text"] = []byte("this is not an HDF5 file, it is text long enough to have a superblock's worth")
	files["empty"] = nil
	// The h5py-written cyclic file (old-style groups with symbol tables).
	if b, err := os.ReadFile("testdata/hostile_cycle.h5"); err == nil {
		files["h5py-cycle"] = b
	} else {
		t.Fatal(err)
	}
	return files
}

func TestHostileFiles(t *testing.T) {
	for name, b := range hostileFiles(t) {
		t.Run(name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(b), int64(len(b)), nil)
			if err == nil {
				t.Fatal("Read accepted a hostile file")
			}
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupported) {
				t.Errorf("error does not wrap ErrInvalid or ErrUnsupported: %v", err)
			}
			t.Log(err)
		})
	}
}

// TestTruncated cuts every fixture at many lengths: each read must fail
// cleanly (or, where the cut removed only trailing bytes nothing refers
// to, succeed).
func TestTruncated(t *testing.T) {
	for _, path := range fixtures(t)[:4] {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(b); n += 1 + len(b)/97 {
			Read(bytes.NewReader(b[:n]), int64(n), nil)
		}
	}
}

func TestMaxBytes(t *testing.T) {
	path := fixtures(t)[0]
	b, _ := os.ReadFile(path)
	_, err := Read(bytes.NewReader(b), int64(len(b)), &Options{MaxBytes: 100})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v, want a size error", err)
	}
}

// FuzzRead: the reader returns an error or a valid graph, never panics,
// hangs or allocates without bound.
func FuzzRead(f *testing.F) {
	for _, path := range fixtures(f) {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Read(bytes.NewReader(b), int64(len(b)), &Options{MaxBytes: 1 << 20})
		if err == nil {
			if err := g.Validate(); err != nil {
				t.Fatalf("Read returned a graph that does not validate: %v", err)
			}
		}
	})
}

// TestMutated reads fixtures with random bytes overwritten in their
// metadata (the first 4 KiB, where headers, heaps and B-trees live) and in
// the whole file. The seed is fixed; any failure is reproducible. Before
// the pre-scan checked local heaps, this found a file on which the HDF5
// library asked for a 145 TB buffer.
func TestMutated(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, name := range []string{"recurrent", "convnet"} {
		b0, err := os.ReadFile("testdata/" + name + ".nir")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 60; i++ {
			b := bytes.Clone(b0)
			span := 4096
			if i%2 == 1 {
				span = len(b)
			}
			for j := 0; j < 4; j++ {
				b[rng.Intn(span)] = byte(rng.Intn(256))
			}
			g, err := Read(bytes.NewReader(b), int64(len(b)), &Options{MaxBytes: 1 << 20})
			if err == nil {
				if err := g.Validate(); err != nil {
					t.Fatalf("%s mutation %d: Read returned an invalid graph: %v", name, i, err)
				}
			}
		}
	}
}
