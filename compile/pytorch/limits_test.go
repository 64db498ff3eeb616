package pytorch

import (
	"bytes"
	"errors"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
)

// A 2 KB Conv2d(1, 4, 3) and Leaky declared on a large input would hold
// a value per output pixel: it is refused from the shapes, naming the
// limit, before anything of that size is built.
func TestDeclaredShapeIsBounded(t *testing.T) {
	w := make([]float32, 4*9)
	for i := range w {
		w[i] = 0.1
	}
	file := buildStateDict(t, append([]sdTensor{{"0.weight", []int64{4, 1, 3, 3}, w}, {"0.bias", []int64{4}, make([]float32, 4)}},
		leakyTensors("1", 0.9)...)...)
	opts := func(h int) *compile.ImportOptions {
		return &compile.ImportOptions{Layers: []compile.LayerSpec{{Name: "0", Kind: "conv2d", Shape: []int{1, h, h}}, {Name: "1", Kind: "snntorch.leaky"}}}
	}
	if _, _, err := compile.Import("pytorch", bytes.NewReader(file), int64(len(file)), opts(64)); err != nil {
		t.Fatalf("a 64×64 input: %v", err)
	}
	for _, h := range []int{768, 4096} {
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		_, _, err := compile.Import("pytorch", bytes.NewReader(file), int64(len(file)), opts(h))
		goruntime.ReadMemStats(&after)
		var ue *compile.UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "MaxValues") {
			t.Fatalf("a %d×%d input: %v, want an UnsupportedError naming MaxValues", h, h, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
			t.Errorf("a %d×%d input allocated %d MB before it was refused", h, h, grew>>20)
		}
	}
	// The limit is the caller's: at 64×64 the layers hold 4,096 + 2 ×
	// 15,376 values.
	o := opts(64)
	o.MaxValues = 34_000
	if _, _, err := compile.Import("pytorch", bytes.NewReader(file), int64(len(file)), o); err == nil {
		t.Fatal("34,848 values under a limit of 34,000")
	}
	o.MaxValues = 35_000
	if _, _, err := compile.Import("pytorch", bytes.NewReader(file), int64(len(file)), o); err != nil {
		t.Fatalf("34,848 values under a limit of 35,000: %v", err)
	}
}
