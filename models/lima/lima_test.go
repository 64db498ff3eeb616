package lima_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/models/lima"
	"github.com/neuro-go/neuro/snn"
)

// TestLimaMatchesPyTorch imports small lima models, without and with a
// readout gain, with LIF hidden neurons, with LIF hidden neurons and
// shift channels, with shift channels of one and of two tokens back, and
// with rec channels (a cycle through the hidden neurons), with each hidden
// neuron's spikes fed back through an integrator of its own, and with
// mirrored hidden neurons, and runs them token by token: the logits must
// match PyTorch's float64 step-by-step forward.
func TestLimaMatchesPyTorch(t *testing.T) {
	for _, c := range []struct {
		name  string
		kind  snn.Kind // the hidden neurons' node kind
		nodes int      // how many nodes of that kind: one per block, or two with mirrors
	}{{"tiny", snn.KindThreshold, 2}, {"tiny_gain", snn.KindThreshold, 2}, {"tiny_lif", snn.KindLIF, 2}, {"tiny_shift", snn.KindLIF, 2}, {"tiny_shift2", snn.KindLIF, 2}, {"tiny_rec", snn.KindLIF, 2}, {"tiny_adapt", snn.KindLIF, 2}, {"tiny_tern", snn.KindLIF, 4}, {"tiny_lm", snn.KindLIF, 2}} {
		t.Run(c.name, func(t *testing.T) { testLimaMatchesPyTorch(t, "testdata/"+c.name, c.kind, c.nodes) })
	}
}

func testLimaMatchesPyTorch(t *testing.T, fixture string, hidden snn.Kind, nodes int) {
	b, err := os.ReadFile(fixture + ".pt")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Tokens []int       `json:"tokens"`
		Logits [][]float64 `json:"logits"`
		Spikes int         `json:"spikes"`
	}
	j, err := os.ReadFile(fixture + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(j, &ref); err != nil {
		t.Fatal(err)
	}
	g, rep, err := compile.Import("pytorch", bytes.NewReader(b), int64(len(b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != lima.ReportKind || rep.Format != "pytorch" {
		t.Fatalf("format %q, kind %q", rep.Format, rep.Kind)
	}
	if n := len(g.NamesOfKind(hidden)); n != nodes {
		t.Fatalf("%d %s nodes, want %d", n, hidden, nodes)
	}
	// A Delay per block for each group of shift channels, and one for rec.
	wantDelays := map[string]int{"tiny_shift": 2, "tiny_lm": 2, "tiny_shift2": 4, "tiny_rec": 4, "tiny_adapt": 2, "tiny_tern": 2}[path.Base(fixture)]
	if n := len(g.NamesOfKind(snn.KindDelay)); n != wantDelays {
		t.Fatalf("%d Delay nodes, want %d", n, wantDelays)
	}
	sim, err := snn.NewSimulator(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]float32, len(ref.Logits[0]))
	worst, spikes := 0.0, 0
	for i, tok := range ref.Tokens {
		in[tok] = 1
		if err := sim.Step(in); err != nil {
			t.Fatal(err)
		}
		in[tok] = 0
		for k, v := range sim.Output(0) {
			worst = math.Max(worst, math.Abs(float64(v)-ref.Logits[i][k]))
		}
		spikes += int(sim.LastStep().Spikes)
	}
	if worst > 1e-5 {
		t.Fatalf("largest logit difference %g, want <= 1e-5", worst)
	}
	if spikes != ref.Spikes || spikes == 0 {
		t.Fatalf("%d spikes, PyTorch %d", spikes, ref.Spikes)
	}
}

// TestLimaRefusesMalformed: each broken lima state_dict gets an
// UnsupportedError naming the tensor at fault.
func TestLimaRefusesMalformed(t *testing.T) {
	const d, k, h, v = 3, 2, 4, 5
	full := map[string][]int{
		"embed.weight": {v, d}, "head_bias": {v},
		"blocks.0.mix_in.weight": {k, d}, "blocks.0.mix_p": {k}, "blocks.0.mix_out.weight": {d, k},
		"blocks.0.fc1.weight": {h, d}, "blocks.0.fc1.bias": {h}, "blocks.0.fc2.weight": {d, h},
	}
	blockKeys := []string{"mix_in.weight", "mix_p", "mix_out.weight", "fc1.weight", "fc1.bias", "fc2.weight"}
	for _, c := range []struct {
		name   string
		edit   func(map[string][]int)
		opts   *compile.ImportOptions
		naming string
	}{
		{"extra key", func(m map[string][]int) { m["blocks.0.gate.weight"] = []int{d, d} }, nil, "blocks.0.gate.weight"},
		{"top-level key", func(m map[string][]int) { m["norm.weight"] = []int{d} }, nil, "norm.weight"},
		{"block number spelled twice", func(m map[string][]int) { m["blocks.00.mix_p"] = []int{k} }, nil, "blocks.00.mix_p"},
		{"missing tensor", func(m map[string][]int) { delete(m, "blocks.0.fc2.weight") }, nil, "blocks.0.fc2.weight"},
		{"wrong shape", func(m map[string][]int) { m["blocks.0.mix_out.weight"] = []int{d + 1, k} }, nil, "blocks.0.mix_out.weight"},
		{"wrong rank", func(m map[string][]int) { m["embed.weight"] = []int{v, d, 1} }, nil, "embed.weight"},
		{"bias length", func(m map[string][]int) { m["blocks.0.fc1.bias"] = []int{h + 1} }, nil, "blocks.0.fc1.bias"},
		{"head bias", func(m map[string][]int) { m["head_bias"] = []int{v - 1} }, nil, "head_bias"},
		{"head scale", func(m map[string][]int) { m["head_scale"] = []int{2} }, nil, "head_scale"},
		{"LIF decays", func(m map[string][]int) { m["blocks.0.spk_p"] = []int{h + 1} }, nil, "blocks.0.spk_p"},
		{"shift without its readout", func(m map[string][]int) { m["blocks.0.shift_in.weight"] = []int{2, d} }, nil, "blocks.0.shift_out.weight"},
		{"shift without its input", func(m map[string][]int) { m["blocks.0.shift_out.weight"] = []int{d, 2} }, nil, "blocks.0.shift_in.weight"},
		{"shift width", func(m map[string][]int) {
			m["blocks.0.shift_in.weight"] = []int{2, d}
			m["blocks.0.shift_out.weight"] = []int{d, 3}
		}, nil, "blocks.0.shift_out.weight"},
		{"shift2 without its readout", func(m map[string][]int) { m["blocks.0.shift2_in.weight"] = []int{2, d} }, nil, "blocks.0.shift2_out.weight"},
		{"shift2 width", func(m map[string][]int) {
			m["blocks.0.shift2_in.weight"] = []int{2, d}
			m["blocks.0.shift2_out.weight"] = []int{d + 1, 2}
		}, nil, "blocks.0.shift2_out.weight"},
		{"shift input width", func(m map[string][]int) {
			m["blocks.0.shift_in.weight"] = []int{2, d + 1}
			m["blocks.0.shift_out.weight"] = []int{d, 2}
		}, nil, "blocks.0.shift_in.weight"},
		{"rec without its readout", func(m map[string][]int) { m["blocks.0.rec_in.weight"] = []int{2, h} }, nil, "blocks.0.rec_out.weight"},
		{"rec reading the residual", func(m map[string][]int) {
			m["blocks.0.rec_in.weight"] = []int{2, d}
			m["blocks.0.rec_out.weight"] = []int{d, 2}
		}, nil, "blocks.0.rec_in.weight"},
		{"adapt without its weights", func(m map[string][]int) {
			m["blocks.0.spk_p"] = []int{h}
			m["blocks.0.adapt_p"] = []int{h}
		}, nil, "blocks.0.adapt_w"},
		{"adapt without LIF neurons", func(m map[string][]int) {
			m["blocks.0.adapt_p"] = []int{h}
			m["blocks.0.adapt_w"] = []int{h}
		}, nil, "blocks.0.adapt_p"},
		{"adapt length", func(m map[string][]int) {
			m["blocks.0.spk_p"] = []int{h}
			m["blocks.0.adapt_p"] = []int{h}
			m["blocks.0.adapt_w"] = []int{h - 1}
		}, nil, "blocks.0.adapt_w"},
		{"rec width", func(m map[string][]int) {
			m["blocks.0.rec_in.weight"] = []int{2, h}
			m["blocks.0.rec_out.weight"] = []int{d, 3}
		}, nil, "blocks.0.rec_out.weight"},
		{"tern not a scalar", func(m map[string][]int) { m["blocks.0.tern"] = []int{2} }, nil, "blocks.0.tern"},
		{"tern with adaptation", func(m map[string][]int) {
			m["blocks.0.tern"] = []int{}
			m["blocks.0.spk_p"] = []int{h}
			m["blocks.0.adapt_p"] = []int{h}
			m["blocks.0.adapt_w"] = []int{h}
		}, nil, "blocks.0.tern"},
		{"tern with rec", func(m map[string][]int) {
			m["blocks.0.tern"] = []int{}
			m["blocks.0.rec_in.weight"] = []int{2, h}
			m["blocks.0.rec_out.weight"] = []int{d, 2}
		}, nil, "blocks.0.tern"},
		{"block gap", func(m map[string][]int) {
			for _, key := range blockKeys {
				m["blocks.2."+key] = full["blocks.0."+key]
			}
		}, nil, "blocks.1"},
		{"layers", nil, &compile.ImportOptions{Layers: []compile.LayerSpec{{Name: "0", Kind: "linear"}}}, "ImportOptions.Layers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := map[string][]int{}
			for key, s := range full {
				m[key] = s
			}
			if c.edit != nil {
				c.edit(m)
			}
			sd := filled(t, m, map[string]float32{"blocks.0.tern": 1})
			if !(lima.Architecture{}).Match(sd) {
				t.Fatal("Match refused a lima state_dict")
			}
			_, _, err := lima.Architecture{}.Build(sd, c.opts)
			if !errors.Is(err, compile.ErrUnsupported) || !strings.Contains(err.Error(), c.naming) {
				t.Fatalf("err = %v, want an unsupported error naming %q", err, c.naming)
			}
		})
	}
}

// TestLimaInfiniteTimeConstant: a decay parameter so large that σ(p)
// rounds to 1 is refused, not turned into an infinite tau.
func TestLimaInfiniteTimeConstant(t *testing.T) {
	sd := filled(t, map[string][]int{
		"embed.weight": {2, 1}, "head_bias": {2},
		"blocks.0.mix_in.weight": {1, 1}, "blocks.0.mix_p": {1}, "blocks.0.mix_out.weight": {1, 1},
		"blocks.0.fc1.weight": {1, 1}, "blocks.0.fc1.bias": {1}, "blocks.0.fc2.weight": {1, 1},
	}, map[string]float32{"blocks.0.mix_p": 1e30})
	_, _, err := lima.Architecture{}.Build(sd, nil)
	if !errors.Is(err, compile.ErrUnsupported) || !strings.Contains(err.Error(), "infinite time constant") {
		t.Fatalf("err = %v", err)
	}
}

// TestLimaNotMatched: a state_dict without lima's keys is left to the
// importer's other paths.
func TestLimaNotMatched(t *testing.T) {
	sd := filled(t, map[string][]int{"0.weight": {2, 2}, "0.bias": {2}, "1.beta": {}}, nil)
	if (lima.Architecture{}).Match(sd) {
		t.Fatal("Match claimed an snnTorch state_dict")
	}
	if !slices.Contains(pytorch.Architectures(), lima.Name) {
		t.Fatalf("registered architectures %v lack %q", pytorch.Architectures(), lima.Name)
	}
}

// filled is an in-memory state_dict of tensors of the given shapes, in key
// order, holding 0.5 or the value given in fill.
func filled(t testing.TB, shapes map[string][]int, fill map[string]float32) *pytorch.StateDict {
	t.Helper()
	keys := slices.Sorted(maps.Keys(shapes))
	tensors := make([]*snn.Tensor, len(keys))
	for i, key := range keys {
		x, ok := fill[key]
		if !ok {
			x = 0.5
		}
		tensors[i] = snn.NewTensor(shapes[key]...)
		for j := range tensors[i].Data {
			tensors[i].Data[j] = x
		}
	}
	sd, err := pytorch.NewStateDict(keys, tensors)
	if err != nil {
		t.Fatal(err)
	}
	return sd
}

// FuzzImport runs whole files through compile.Import with lima registered,
// seeded with the fixtures: Build must return a graph that validates or an
// error, never panic, and stay within MaxBytes.
func FuzzImport(f *testing.F) {
	for _, name := range []string{"tiny", "tiny_gain", "tiny_shift", "tiny_shift2", "tiny_rec", "tiny_adapt", "tiny_tern"} {
		b, err := os.ReadFile("testdata/" + name + ".pt")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := &compile.ImportOptions{MaxBytes: 1 << 20}
		g, _, err := compile.Import("pytorch", bytes.NewReader(data), int64(len(data)), opts)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("recovered panic: %v", err)
			}
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("invalid graph: %v", err)
		}
	})
}
