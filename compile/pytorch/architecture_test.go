package pytorch

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// pair is a test architecture: pair.weight (n, m) read as one Linear
// layer, and pair.extra read and dropped. twin is registered twice under two names, to be ambiguous.
type pair struct{ prefix string }

func (p pair) Match(sd *StateDict) bool { return sd.Has(p.prefix + ".weight") }

func (p pair) Build(sd *StateDict, opts *compile.ImportOptions) (*snn.Graph, *compile.ImportReport, error) {
	w, err := sd.Tensor(p.prefix+".weight", 2)
	if err != nil {
		return nil, nil, err
	}
	if sd.Has(p.prefix + ".extra") {
		if _, err := sd.Float32s(p.prefix + ".extra"); err != nil {
			return nil, nil, err
		}
	}
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{w.Shape[1]}}).
		Add("fc", &snn.Linear{Weight: w}).
		Add("out", &snn.Output{}).
		Connect("in", "fc", "out")
	if p.prefix == "bare" {
		return g, nil, nil // Import fills in a report
	}
	return g, &compile.ImportReport{Kind: "pair state_dict", Warnings: []string{"dt " + strings.Repeat("x", int(opts.Dt*1000))}}, nil
}

func init() {
	RegisterArchitecture("test.pair", pair{"pair"})
	RegisterArchitecture("test.bare", pair{"bare"})
	RegisterArchitecture("test.twin.a", pair{"twin"})
	RegisterArchitecture("test.twin.b", pair{"twin"})
}

func TestArchitecture(t *testing.T) {
	w := sdTensor{"pair.weight", []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6}}
	// Two tensors of 1 KiB: each fits MaxBytes 1500, both do not.
	big := func(name string) sdTensor { return sdTensor{name, []int64{16, 16}, filled(256, 0.5)} }
	for _, c := range []struct {
		name string
		ts   []sdTensor
		opts *compile.ImportOptions
		kind string // the report's Kind on success
		err  error  // or the error wanted
		says string // and what it says
	}{
		{"chosen", []sdTensor{w}, nil, "pair state_dict", nil, ""},
		{"report filled in", []sdTensor{{"bare.weight", []int64{1, 1}, []float32{1}}}, nil, "test.bare state_dict", nil, ""},
		{"not claimed", []sdTensor{{"head.weight", []int64{1, 1}, []float32{1}}}, nil, "", compile.ErrUnsupported, "or link the package of its architecture (registered: "},
		{"ambiguous", []sdTensor{{"twin.weight", []int64{1, 1}, []float32{1}}}, nil, "", compile.ErrUnsupported, "test.twin.a, test.twin.b"},
		{"over MaxBytes", []sdTensor{big("pair.weight"), big("pair.extra")}, &compile.ImportOptions{MaxBytes: 1500}, "", ErrLimit, "ImportOptions.MaxBytes (at pair.extra): 2048 > 1500"},
		{"NaN", []sdTensor{{"pair.weight", []int64{1, 2}, []float32{1, float32(math.NaN())}}}, nil, "", compile.ErrUnsupported, `"pair.weight": element 1 is NaN`},
		{"rank", []sdTensor{{"pair.weight", []int64{2}, []float32{1, 2}}}, nil, "", compile.ErrUnsupported, "want 2 dimensions"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := buildStateDict(t, c.ts...)
			g, rep, err := compile.Import("pytorch", bytes.NewReader(b), int64(len(b)), c.opts)
			if c.err != nil {
				if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.says) {
					t.Fatalf("err = %v, want %v saying %q", err, c.err, c.says)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.Kind != c.kind || rep.Format != "pytorch" || g.Nodes["fc"] == nil {
				t.Fatalf("report %+v, nodes %v", rep, g.Names())
			}
		})
	}
}

func TestRegisterArchitecturePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"twice": func() { RegisterArchitecture("test.pair", pair{"pair"}) },
		"nil":   func() { RegisterArchitecture("test.nil", nil) },
		"empty": func() { RegisterArchitecture("", pair{"empty"}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}

func TestNewStateDict(t *testing.T) {
	w := &snn.Tensor{Shape: []int{2}, Data: []float32{1, 2}}
	sd, err := NewStateDict([]string{"b", "a"}, []*snn.Tensor{w, {Shape: []int{}, Data: []float32{3}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := sd.Keys(); sd.Len() != 2 || got[0] != "b" || got[1] != "a" {
		t.Fatalf("keys %v", got)
	}
	if s, ok := sd.Shape("a"); !ok || len(s) != 0 {
		t.Fatalf("shape of a scalar: %v %v", s, ok)
	}
	xs, err := sd.Float32s("b")
	if err != nil || len(xs) != 2 {
		t.Fatalf("%v %v", xs, err)
	}
	xs[0] = 9
	if w.Data[0] != 1 {
		t.Fatal("Float32s returned the caller's slice")
	}
	if _, err := sd.Float32s("c"); !errors.Is(err, compile.ErrUnsupported) || !strings.Contains(err.Error(), `"c"`) {
		t.Fatalf("missing key: %v", err)
	}
	for name, c := range map[string]struct {
		keys []string
		ts   []*snn.Tensor
	}{
		"lengths":   {[]string{"a"}, nil},
		"duplicate": {[]string{"a", "a"}, []*snn.Tensor{w, w}},
		"nil":       {[]string{"a"}, []*snn.Tensor{nil}},
		"shape":     {[]string{"a"}, []*snn.Tensor{{Shape: []int{3}, Data: []float32{1}}}},
	} {
		if _, err := NewStateDict(c.keys, c.ts); err == nil || !strings.HasPrefix(err.Error(), "pytorch: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
