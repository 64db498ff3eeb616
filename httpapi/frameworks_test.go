package httpapi

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

// frameworkNet is a network that snnTorch or Norse saved and ran itself
// (compile/pytorch/testdata/snn/gen.py): its state_dict, the input it ran
// on, and what each layer emitted at every step.
type frameworkNet struct {
	Name    string      `json:"name"`
	Library string      `json:"library"`
	Steps   int         `json:"steps"`
	Input   [][]float64 `json:"input"`
	Layers  map[string]struct {
		Kind   string      `json:"kind"`
		Spikes [][]float64 `json:"spikes"`
		Mem    [][]float64 `json:"mem"`
	} `json:"layers"`
	Params map[string]map[string]float64 `json:"params"`
	Dt     float64                       `json:"dt"`
}

// frameworkLayers are the layer descriptions the Norse state_dicts need
// (they hold only the weights), sent as options.layers.
var frameworkLayers = map[string][][2]string{
	"norse_lif":          {{"0", "linear"}, {"1", "norse.lif"}, {"2", "linear"}, {"3", "norse.lif"}, {"4", "linear"}, {"5", "norse.li"}},
	"norse_lifrecurrent": {{"0", "norse.lifrecurrent"}, {"1", "linear"}, {"2", "norse.lif"}},
}

// TestFrameworkNetworksOverREST compiles snnTorch (Leaky, Synaptic,
// RLeaky) and Norse (LIF, LIFRecurrent) networks, as the libraries saved
// them, through POST /v1/compile; deploys each on cpu and on loihi; runs
// the input the library ran; and requires the cpu run to give the
// library's output spike counts exactly (for Norse's leaky-integrator
// readout, its final membrane within 1e-4). The loihi run is the
// emulator's fixed-point one: its difference is logged, and it must stay
// within a few spikes.
func TestFrameworkNetworksOverREST(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	s := newTestServer(t, rt, &Options{MaxCompileBytes: 1 << 20})
	for _, name := range []string{"snntorch_leaky", "snntorch_synaptic", "snntorch_rleaky", "norse_lif", "norse_lifrecurrent"} {
		t.Run(name, func(t *testing.T) {
			var ref frameworkNet
			if err := json.Unmarshal(readFixture(t, "compile/pytorch/testdata/snn/"+name+".json"), &ref); err != nil {
				t.Fatal(err)
			}
			opts := ""
			if specs := frameworkLayers[name]; specs != nil {
				var layers []map[string]any
				for _, sp := range specs {
					layers = append(layers, map[string]any{"name": sp[0], "kind": sp[1], "params": ref.Params[sp[0]]})
				}
				b, _ := json.Marshal(map[string]any{"layers": layers, "dt": ref.Dt})
				opts = `,"options":` + string(b)
			}
			w := do(s, "POST", "/v1/compile", keyAlice, compileBody("pytorch", readFixture(t, "compile/pytorch/testdata/snn/"+name+".pt"), opts))
			if w.Code != 200 {
				t.Fatalf("compile: %d %s", w.Code, w.Body)
			}
			var net wire.CompiledNetwork
			json.Unmarshal(w.Body.Bytes(), &net)

			// The output layer is the last one; its spikes summed over the run.
			var last string
			for l := range ref.Layers {
				if a, _ := strconv.Atoi(l); last == "" || a > mustAtoi(last) {
					last = l
				}
			}
			out := ref.Layers[last]
			want := make([]float64, len(out.Mem[0]))
			spiking := out.Kind != "LICell"
			for step := range ref.Steps {
				for i := range want {
					if spiking {
						want[i] += out.Spikes[step][i]
					} else {
						want[i] = out.Mem[step][i]
					}
				}
			}
			rows, _ := json.Marshal(ref.Input[:ref.Steps])
			counts := map[string][]float32{}
			for _, device := range []string{"cpu", "loihi"} {
				id := name + "-" + device
				w := do(s, "POST", "/v1/deployments", keyAlice, fmt.Sprintf(`{"model":%q,"device":%q,"id":%q}`, net.ID, device, id))
				if w.Code != 201 {
					if device == "loihi" && w.Code == 422 {
						t.Logf("loihi refuses %s: %s", name, w.Body)
						continue
					}
					t.Fatalf("deploy on %s: %d %s", device, w.Code, w.Body)
				}
				res := decodeRun(t, do(s, "POST", "/v1/deployments/"+id+"/run", keyAlice, `{"inputs":[`+string(rows)+`]}`))
				counts[device] = res.Outputs[0].SpikeCounts
				if device == "loihi" && len(res.Warnings) == 0 {
					t.Error("the loihi run states no quantisation")
				}
			}
			got := counts["cpu"]
			for i := range want {
				if spiking && float64(got[i]) != want[i] || !spiking && math.Abs(float64(got[i])-want[i]) > 1e-4 {
					t.Fatalf("cpu output %v, %s gives %v", got, ref.Library, want)
				}
			}
			if l := counts["loihi"]; l != nil {
				diff := 0.0
				for i := range l {
					diff += math.Abs(float64(l[i]) - float64(got[i]))
				}
				t.Logf("%s: %s %v; cpu %v; loihi %v (total difference %.4g)", name, ref.Library, want, got, l, diff)
				if spiking && diff > float64(len(l))*3 {
					t.Errorf("loihi differs from the float run by %v spikes", diff)
				}
			}
		})
	}
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestPlainSequentialNeedsLayers: a state_dict of a plain nn.Sequential
// ANN compiles over REST once options.layers says what it is, and
// without them the 422 says to send options.layers.
func TestPlainSequentialNeedsLayers(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), nil)
	pt := readFixture(t, "compile/testdata/digits/mlp_state_dict.pt")
	w := do(s, "POST", "/v1/compile", keyAlice, compileBody("pytorch", pt, ""))
	if w.Code != 422 || !strings.Contains(w.Body.String(), "options.layers") {
		t.Fatalf("without layers: %d %s", w.Code, w.Body)
	}
	layers := `[{"name":"0","kind":"linear"},{"name":"1","kind":"relu"},{"name":"2","kind":"linear"},{"name":"3","kind":"relu"},{"name":"4","kind":"linear"}]`
	w = do(s, "POST", "/v1/compile", keyAlice, compileBody("pytorch", pt, `,"options":{"layers":`+layers+`,"timesteps":32}`))
	if w.Code != 200 {
		t.Fatalf("with layers: %d %s", w.Code, w.Body)
	}
	checkError(t, do(s, "POST", "/v1/compile", keyAlice, compileBody("pytorch", pt, `,"options":{"layers":[{"kind":"linear"}]}`)),
		400, typeInvalidRequest, "missing_field", "options.layers[0]")
	checkError(t, do(s, "POST", "/v1/compile", keyAlice, compileBody("pytorch", pt, `,"options":{"layers":"0:linear"}`)),
		400, typeInvalidRequest, "invalid_type", "options.layers")
}
