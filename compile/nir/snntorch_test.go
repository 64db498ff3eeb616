package nir_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/compile/nir"
	_ "github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/snn"
)

// A network imported from a real snnTorch state_dict (Linear → Leaky with
// graded spikes → Linear → Leaky) and the same network written to NIR and
// read back run identically in the simulator. NIR has no subtractive reset
// (snnTorch's own export turns it into a reset to zero), so the first
// layer's reset is set to zero on import; the network with its saved
// resets is first checked against the spikes snnTorch produced.
func TestSnnTorchStateDictAndNIRRunIdentically(t *testing.T) {
	dir := filepath.Join("..", "pytorch", "testdata", "snn")
	pt, err := os.ReadFile(filepath.Join(dir, "snntorch_leaky.pt"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Input  [][]float32 `json:"input"`
		Layers map[string]struct {
			Spikes [][]float32 `json:"spikes"`
		} `json:"layers"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "snntorch_leaky.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	asSaved, _, err := compile.Import("pytorch", bytes.NewReader(pt), int64(len(pt)), nil)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := snn.NewSimulator(asSaved, nil)
	if err != nil {
		t.Fatal(err)
	}
	last := ref.Layers["3"].Spikes
	for step, x := range ref.Input {
		sim.Step(x)
		for i, v := range sim.Output(0) {
			if v != last[step][i] {
				t.Fatalf("step %d output %d: %v, snnTorch gave %v", step, i, v, last[step][i])
			}
		}
	}
	zero := &compile.ImportOptions{Layers: []compile.LayerSpec{{Name: "1", Params: map[string]float64{"reset_mechanism": 1}}}}
	fromPT, _, err := compile.Import("pytorch", bytes.NewReader(pt), int64(len(pt)), zero)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := nir.Write(&buf, fromPT, nil); err != nil {
		t.Fatal(err)
	}
	fromNIR, err := nir.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
	if err != nil {
		t.Fatal(err)
	}
	sims := make([]*snn.Simulator, 2)
	for i, g := range []*snn.Graph{fromPT, fromNIR} {
		if sims[i], err = snn.NewSimulator(g, nil); err != nil {
			t.Fatal(err)
		}
	}
	spikes := 0
	for step, x := range ref.Input {
		for _, s := range sims {
			if err := s.Step(x); err != nil {
				t.Fatal(err)
			}
		}
		a, b := sims[0].Output(0), sims[1].Output(0)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("step %d output %d: state_dict import %v, NIR %v", step, i, a[i], b[i])
			}
			spikes += int(a[i])
		}
	}
	if spikes == 0 {
		t.Fatal("no output spikes: the comparison proves nothing")
	}
	t.Logf("%d output spikes over %d steps, identical from the state_dict and from NIR", spikes, len(ref.Input))
}
