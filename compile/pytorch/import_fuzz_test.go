package pytorch

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/compile"
)

// FuzzImport runs whole files through Import with one of a few option sets
// (none; the Norse description; a CNN input shape; the language model's
// description), picked by the length. Seeds are every .pt fixture of this
// package and the digits models up to 32 KiB, and a small language model
// of the layers lmLayers describes. Import must return a
// graph that validates or an error, never panic (it recovers internally and
// says "internal error", which fails here too), and must stay within
// MaxBytes.
func FuzzImport(f *testing.F) {
	var paths []string
	for _, pat := range []string{"internal/torchfile/testdata/*.pt", "testdata/snn/*.pt", "../testdata/digits/*.pt"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			f.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) < 10 {
		f.Fatalf("fixtures missing: %v", paths)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 32<<10 {
			continue // large seeds only slow the mutator; the tests read them
		}
		f.Add(b)
	}
	f.Add(tinyLanguageModel(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		// A slow input is a bug too: crash the worker so that the fuzzer
		// keeps the input (a deferred check would never run on a hang).
		guard := time.AfterFunc(10*time.Second, func() { panic("FuzzImport: one input took over 10 s") })
		defer guard.Stop()
		opts := &compile.ImportOptions{MaxBytes: 1 << 22, Conversion: compile.ConversionOptions{Timesteps: 8}}
		switch len(data) % 4 { // the option set, chosen by the input itself
		case 1:
			opts.Layers = norseLayers["norse_lif"]
		case 2:
			opts.Layers = []compile.LayerSpec{{Name: "0", Shape: []int{1, 8, 8}}}
		case 3:
			opts.Layers = lmLayers
		}
		g, rep, err := compile.Import("pytorch", bytes.NewReader(data), int64(len(data)), opts)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("recovered panic: %v", err)
			}
			return
		}
		if g == nil || rep == nil {
			t.Fatal("nil graph or report without an error")
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("invalid graph: %v", err)
		}
	})
}

// tinyLanguageModel is a state_dict of the layers lmLayers describes, with
// a vocabulary of 6 and 4 neurons a layer.
func tinyLanguageModel(tb testing.TB) []byte {
	var ts []sdTensor
	add := func(name string, v float32, shape ...int64) {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		ts = append(ts, sdTensor{name, shape, filled(int(n), v)})
	}
	add("embed.weight", 0.5, 6, 3)
	add("fc1.weight", 0.4, 4, 3)
	add("fc1.bias", 0.1, 4)
	ts = append(ts, leakyTensors("lif1", 0.9)...)
	add("fc2.weight", 0.3, 4, 4)
	add("fc2.bias", 0, 4)
	ts = append(ts, leakyTensors("lif2", 0.8)...)
	add("lif2.recurrent.weight", -0.2, 4, 4)
	add("lif2.recurrent.bias", 0.05, 4)
	add("fc_out.weight", 0.7, 6, 4)
	add("fc_out.bias", 0, 6)
	return buildStateDict(tb, ts...)
}
