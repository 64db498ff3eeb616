package onnx

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzDecode feeds arbitrary bytes to DecodeBytes: it must return a model or
// an error, never panic, hang or allocate without bound, and a model it
// returns must run on zero inputs of its declared shapes without panicking.
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{"testdata", filepath.Join("..", "testdata", "digits")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.onnx"))
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	opts := &Options{MaxBytes: 1 << 20, MaxTensorElements: 1 << 16, MaxTotalElements: 1 << 18, MaxNodes: 256}
	f.Fuzz(func(t *testing.T, b []byte) {
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %v", d)
			}
		}()
		m, err := DecodeBytes(b, opts)
		if err != nil {
			if m != nil {
				t.Fatal("model and error both returned")
			}
			return
		}
		in := map[string]*Tensor{}
		for _, v := range m.Inputs {
			shape := make([]int, len(v.Shape))
			for i, d := range v.Shape {
				shape[i] = max(d, 1)
			}
			x := &Tensor{DType: Float32, Shape: shape}
			if n, err := elements("input", knownDims(shape), 1<<16); err != nil || n == 0 {
				return
			}
			x.Data = make([]float32, x.Len())
			in[v.Name] = x
		}
		_, _ = m.Run(in) // errors are fine (an undeclared input shape); panics are not
	})
}
