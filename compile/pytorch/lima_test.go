package pytorch

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// TestLimaMatchesPyTorch imports small lima models, without and with a
// readout gain, and runs them token by token: the logits must match
// PyTorch's float64 step-by-step forward.
func TestLimaMatchesPyTorch(t *testing.T) {
	for _, name := range []string{"tiny", "tiny_gain"} {
		t.Run(name, func(t *testing.T) { testLimaMatchesPyTorch(t, "testdata/lima/"+name) })
	}
}

func testLimaMatchesPyTorch(t *testing.T, fixture string) {
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
	if rep.Kind != "neuro lima state_dict" {
		t.Fatalf("kind %q", rep.Kind)
	}
	if n := len(g.NamesOfKind(snn.KindThreshold)); n != 2 {
		t.Fatalf("%d Threshold nodes, want one per block (2)", n)
	}
	sim, err := snn.NewSimulator(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]float32, 16)
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
	full := map[string][]int64{
		"embed.weight": {v, d}, "head_bias": {v},
		"blocks.0.mix_in.weight": {k, d}, "blocks.0.mix_p": {k}, "blocks.0.mix_out.weight": {d, k},
		"blocks.0.fc1.weight": {h, d}, "blocks.0.fc1.bias": {h}, "blocks.0.fc2.weight": {d, h},
	}
	for _, c := range []struct {
		name   string
		edit   func(map[string][]int64)
		opts   *compile.ImportOptions
		naming string
	}{
		{"extra key", func(m map[string][]int64) { m["blocks.0.gate.weight"] = []int64{d, d} }, nil, "blocks.0.gate.weight"},
		{"top-level key", func(m map[string][]int64) { m["norm.weight"] = []int64{d} }, nil, "norm.weight"},
		{"missing tensor", func(m map[string][]int64) { delete(m, "blocks.0.fc2.weight") }, nil, "blocks.0.fc2.weight"},
		{"wrong shape", func(m map[string][]int64) { m["blocks.0.mix_out.weight"] = []int64{d + 1, k} }, nil, "blocks.0.mix_out.weight"},
		{"bias length", func(m map[string][]int64) { m["blocks.0.fc1.bias"] = []int64{h + 1} }, nil, "blocks.0.fc1.bias"},
		{"head bias", func(m map[string][]int64) { m["head_bias"] = []int64{v - 1} }, nil, "head_bias"},
		{"head scale", func(m map[string][]int64) { m["head_scale"] = []int64{2} }, nil, "head_scale"},
		{"block gap", func(m map[string][]int64) {
			for _, key := range limaBlockKeys {
				m["blocks.2."+key] = full["blocks.0."+key]
			}
		}, nil, "blocks.1"},
		{"layers", nil, &compile.ImportOptions{Layers: []compile.LayerSpec{{Name: "0", Kind: "linear"}}}, "ImportOptions.Layers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := map[string][]int64{}
			for key, s := range full {
				m[key] = s
			}
			if c.edit != nil {
				c.edit(m)
			}
			b := shapesZip(t, m)
			_, _, err := compile.Import("pytorch", bytes.NewReader(b), int64(len(b)), c.opts)
			if !errors.Is(err, compile.ErrUnsupported) || !strings.Contains(err.Error(), c.naming) {
				t.Fatalf("err = %v, want an unsupported error naming %q", err, c.naming)
			}
		})
	}
}

// TestLimaInfiniteTimeConstant: a decay parameter so large that σ(p)
// rounds to 1 is refused, not turned into an infinite tau.
func TestLimaInfiniteTimeConstant(t *testing.T) {
	b := shapesZipWith(t, map[string][]int64{
		"embed.weight": {2, 1}, "head_bias": {2},
		"blocks.0.mix_in.weight": {1, 1}, "blocks.0.mix_p": {1}, "blocks.0.mix_out.weight": {1, 1},
		"blocks.0.fc1.weight": {1, 1}, "blocks.0.fc1.bias": {1}, "blocks.0.fc2.weight": {1, 1},
	}, map[string]float32{"blocks.0.mix_p": 1e30})
	_, _, err := compile.Import("pytorch", bytes.NewReader(b), int64(len(b)), nil)
	if !errors.Is(err, compile.ErrUnsupported) || !strings.Contains(err.Error(), "infinite time constant") {
		t.Fatalf("err = %v", err)
	}
}

// shapesZip is a state_dict archive of float32 tensors of the given shapes,
// filled with 0.5.
func shapesZip(t testing.TB, shapes map[string][]int64) []byte {
	return shapesZipWith(t, shapes, nil)
}

// shapesZipWith fills the tensors named in fill with that value instead.
func shapesZipWith(t testing.TB, shapes map[string][]int64, fill map[string]float32) []byte {
	t.Helper()
	p := newPK().op(opEmptyDict)
	var entries []zentry
	i := 0
	for key, shape := range shapes {
		n, strides := int64(1), make([]int64, len(shape))
		for j := len(shape) - 1; j >= 0; j-- {
			strides[j] = n
			n *= shape[j]
		}
		id := string(rune('a' + i))
		p.str(key).tensor(id, n, 0, shape, strides).op(opSetItem)
		x, ok := fill[key]
		if !ok {
			x = 0.5
		}
		vals := make([]float32, n)
		for j := range vals {
			vals[j] = x
		}
		entries = append(entries, zentry{"archive/data/" + id, f32bytes(vals...)})
		i++
	}
	entries = append([]zentry{{"archive/data.pkl", p.stop()}}, entries...)
	return buildZip(t, append(entries, zentry{"archive/version", []byte("3\n")})...)
}
