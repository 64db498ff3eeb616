package nir

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// TestDeclaredShapeIsBounded: a NIR graph whose layers would hold more
// values per sample than ImportOptions.MaxValues is refused at import,
// naming the limit, before a simulator of it is built; under the limit it
// imports.
func TestDeclaredShapeIsBounded(t *testing.T) {
	file := func(h int) []byte {
		w := snn.NewTensor(4, 1, 3, 3)
		for i := range w.Data {
			w.Data[i] = 0.1
		}
		lif := &snn.LIF{Tau: []float64{0.02}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}
		g := snn.NewGraph().
			Add("in", &snn.Input{Shape: []int{1, h, h}}).
			Add("conv", &snn.Conv2d{Weight: w, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1, InputShape: []int{1, h, h}}).
			Add("lif", lif).
			Add("out", &snn.Output{}).
			Connect("in", "conv", "lif", "out")
		var b bytes.Buffer
		if err := Write(&b, g, nil); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	small := file(32)
	if _, _, err := compile.Import("nir", bytes.NewReader(small), int64(len(small)), nil); err != nil {
		t.Fatalf("a 32×32 input: %v", err)
	}
	// 128×128 in, two layers of 4×126×126 out: 143,392 values.
	big := file(128)
	opts := &compile.ImportOptions{MaxValues: 140_000}
	_, _, err := compile.Import("nir", bytes.NewReader(big), int64(len(big)), opts)
	var ue *compile.UnsupportedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "MaxValues") {
		t.Fatalf("143,392 values under a limit of 140,000: %v, want an UnsupportedError naming MaxValues", err)
	}
	opts.MaxValues = 145_000
	if _, _, err := compile.Import("nir", bytes.NewReader(big), int64(len(big)), opts); err != nil {
		t.Fatalf("143,392 values under a limit of 145,000: %v", err)
	}
}
