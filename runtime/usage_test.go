package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/neuro-go/neuro/compile/onnx" // the digits classifier's format
	"github.com/neuro-go/neuro/runtime/hal/haltest"
	_ "github.com/neuro-go/neuro/runtime/hal/loihi"
	_ "github.com/neuro-go/neuro/runtime/hal/xylo"
	"github.com/neuro-go/neuro/snn"
)

// TestRunUsageDoesNotDependOnBatch runs one sample on deployments of
// batch 1 and 8 of the same network: the usage charged to it is what
// stepping it costs, whatever the idle slots beside it, on each device.
func TestRunUsageDoesNotDependOnBatch(t *testing.T) {
	for _, tc := range []struct {
		device string
		model  func(t *testing.T, rt *Runtime) string
		sample Sample
	}{
		{"loihi", digitsOnLoihi, Sample{Vector: digitsSample(t)}},
		{"xylo", smallOnXylo, Sample{Vector: []float32{1, 2, 0, 3}}},
	} {
		t.Run(tc.device, func(t *testing.T) {
			ctx := context.Background()
			rt := New(nil)
			defer rt.Close()
			model := tc.model(t, rt)
			usage := map[int]RunUsage{}
			for _, batch := range []int{1, 8} {
				id := fmt.Sprintf("%s-%d", tc.device, batch)
				if _, err := rt.Deploy(ctx, DeploymentSpec{ID: id, Model: model, Device: tc.device, MaxBatch: batch}); err != nil {
					t.Fatal(err)
				}
				res, err := rt.Run(ctx, &RunRequest{Deployment: id, Samples: []Sample{tc.sample}})
				if err != nil {
					t.Fatal(err)
				}
				u := res.Usage
				u.DeviceTime = 0 // the host's time on the cpu; the model's on a chip
				usage[batch] = u
				t.Logf("batch %d: %.0f spikes, %.0f synaptic ops, %.0f neuron updates, %.0f spiking updates, %.4g µJ",
					batch, u.Spikes, u.SynapticOps, u.NeuronUpdates, u.SpikingUpdates, u.EnergyMicrojoule)
			}
			if usage[1] != usage[8] {
				t.Errorf("usage at batch 8\n%+v\nwant batch 1's\n%+v", usage[8], usage[1])
			}
			if u := usage[1]; u.Spikes <= 0 || u.NeuronUpdates <= 0 || u.SpikingUpdates <= 0 || u.EnergyMicrojoule <= 0 {
				t.Errorf("usage %+v lacks a counter", u)
			}
		})
	}
}

const digitsDir = "../compile/testdata/digits"

// digitsSample is the first test image of the digits classifier.
func digitsSample(t *testing.T) []float32 {
	return digitsInputs(t, "test")[0]
}

func digitsInputs(t *testing.T, split string) [][]float32 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(digitsDir, "digits_test.json"))
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]json.RawMessage
	var part struct {
		Inputs [][]float32 `json:"inputs"`
	}
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data[split], &part); err != nil || len(part.Inputs) == 0 {
		t.Fatalf("%s: no inputs: %v", split, err)
	}
	return part.Inputs
}

// digitsOnLoihi compiles the ONNX digits classifier for loihi, as the
// compile example and POST /v1/compile do, and returns its model ID.
func digitsOnLoihi(t *testing.T, rt *Runtime) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(digitsDir, "mlp.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	req := &CompileRequest{Format: "onnx", Data: data, Name: "digits", Target: "loihi"}
	req.Import.Conversion.Calibration = digitsInputs(t, "calibration")
	n, err := rt.Compile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return n.ID
}

// smallOnXylo registers haltest's program with the subtractive reset
// Xylo needs, and returns its model ID.
func smallOnXylo(t *testing.T, rt *Runtime) string {
	t.Helper()
	p := haltest.Program(4, 3)
	for _, name := range p.Graph.NamesOfKind(snn.KindLIF) {
		p.Graph.Nodes[name].(*snn.LIF).Reset = snn.ResetSubtract
	}
	if err := rt.RegisterModel(&Model{ID: "small", Program: p}); err != nil {
		t.Fatal(err)
	}
	return "small"
}
