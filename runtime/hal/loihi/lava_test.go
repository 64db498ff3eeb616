package loihi

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The tests in this file compare the kernel with vectors that Lava's own
// process models computed (testdata/lava/gen.py runs PyLifModelBitAcc,
// PyDenseModelBitAcc and weightutils from a Lava checkout and says exactly
// what of Lava ran). They check equality, number for number.

func readLava(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "lava", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// lavaLIF is one PyLifModelBitAcc process: du, dv and vth are shared,
// the bias is per neuron, and U, V and S are the state and spikes after
// each step of the activations A.
type lavaLIF struct {
	Du       int32   `json:"du"`
	Dv       int32   `json:"dv"`
	Vth      int32   `json:"vth"`
	BiasMant []int32 `json:"bias_mant"`
	BiasExp  []int32 `json:"bias_exp"`
	U0       []int64 `json:"u0"`
	V0       []int64 `json:"v0"`
	A        [][]int64
	U        [][]int64
	V        [][]int64
	S        [][]int
}

// TestLavaLIF steps Neuron.Step through Lava's trajectories: random
// states anywhere in 24 bits, states at ±2^23 (the wrap of u, the clip of
// v), thresholds up to 2^17 − 1, inputs past the wrap, and spiking ones.
func TestLavaLIF(t *testing.T) {
	var cases []lavaLIF
	readLava(t, "lif.json", &cases)
	var trajectories, steps, spikes, wraps, clips int
	for ci, c := range cases {
		for i := range c.U0 {
			trajectories++
			n := Neuron{Du: c.Du, Dv: c.Dv, Vth: c.Vth, Bias: effectiveBias(c.BiasMant[i], c.BiasExp[i]), Spiking: true}
			u, v := c.U0[i], c.V0[i]
			for step := range c.A {
				if _, wrapped := wrapU(decay(u, int64(c.Du)+1) + c.A[step][i]<<ActShift); wrapped {
					wraps++
				}
				var spike bool
				u, v, spike = n.Step(u, v, c.A[step][i])
				steps++
				if spike {
					spikes++
				}
				if v == maxUV-1 || v == -(maxUV-1) {
					clips++
				}
				if u != c.U[step][i] || v != c.V[step][i] || spike != (c.S[step][i] == 1) {
					t.Fatalf("process %d neuron %d step %d (du %d dv %d vth %d bias %d·2^%d, a %d): loihi u=%d v=%d spike=%v, Lava u=%d v=%d spike=%v",
						ci, i, step, c.Du, c.Dv, c.Vth, c.BiasMant[i], c.BiasExp[i], c.A[step][i], u, v, spike, c.U[step][i], c.V[step][i], c.S[step][i] == 1)
				}
			}
		}
	}
	t.Logf("%d neurons, %d steps equal to Lava's: %d spikes, %d wraps of u, %d steps with v at the clip", trajectories, steps, spikes, wraps, clips)
	if trajectories < 3000 || spikes == 0 || wraps == 0 || clips == 0 {
		t.Errorf("the vectors no longer cover spikes, wraps and clips (%d neurons, %d spikes, %d wraps, %d clips)", trajectories, spikes, wraps, clips)
	}
}

var lavaSignModes = map[string]SignMode{"mixed": Mixed, "excitatory": Excitatory, "inhibitory": Inhibitory, "null": 0}

// TestLavaDense checks LavaWeights (clip_weights then truncate_weights),
// SignModeOf (determine_sign_mode) and shiftExp on the dendritic sum
// against PyDenseModelBitAcc: every sign mode, given or determined, weights
// past the 8-bit range, 1 to 8 weight bits, exponents −8 to 7, binary and
// graded spikes.
func TestLavaDense(t *testing.T) {
	var cases []struct {
		Weights   [][]int32 `json:"weights"`
		SignMode  *string   `json:"sign_mode"`
		Used      string    `json:"used_sign_mode"`
		Bits      int       `json:"num_weight_bits"`
		Exp       int       `json:"weight_exp"`
		SIn       [][]int64 `json:"s_in"`
		Quantised [][]int32 `json:"quantised"`
		ABuff     [][]int64 `json:"a_buff"`
	}
	readLava(t, "dense.json", &cases)
	clipped := 0
	for ci, c := range cases {
		w := slices.Concat(c.Weights...)
		mode := SignModeOf(w)
		if c.SignMode != nil {
			mode = lavaSignModes[*c.SignMode]
		} else if mode.String() != c.Used {
			t.Fatalf("case %d: SignModeOf %v, determine_sign_mode %s", ci, mode, c.Used)
		}
		q := LavaWeights(w, mode, c.Bits)
		if want := slices.Concat(c.Quantised...); !slices.Equal(q, want) {
			t.Fatalf("case %d (%s, %d bits): LavaWeights %v, Lava %v", ci, c.Used, c.Bits, q, want)
		}
		for _, x := range w {
			if x > 255 || x < -256 {
				clipped++
				break
			}
		}
		rows, cols := len(c.Weights), len(c.Weights[0])
		for step, s := range c.SIn {
			for r := range rows {
				var acc int64
				for j := range cols {
					acc += int64(q[r*cols+j]) * s[j]
				}
				if got := shiftExp(acc, c.Exp); got != c.ABuff[step][r] {
					t.Fatalf("case %d step %d row %d (exp %d): loihi %d, Lava %d", ci, step, r, c.Exp, got, c.ABuff[step][r])
				}
			}
		}
	}
	t.Logf("%d weight matrices (%d past the 8-bit range) and their dendritic sums equal to Lava's", len(cases), clipped)
	if len(cases) < 1000 || clipped == 0 {
		t.Errorf("the vectors no longer cover clipping (%d cases, %d clipped)", len(cases), clipped)
	}
}

// TestLavaNetwork runs a Dense into a LIF on the Instance and compares
// the LIF's state and spikes with Lava's Dense and PyLifModelBitAcc
// chained. Lava's Dense sends the sum of the previous step's spikes
// (a_buff); the Instance sums this step's, so the Instance is given
// Lava's input one step later, after a step of zeros.
func TestLavaNetwork(t *testing.T) {
	var cases []struct {
		Weights   [][]int32 `json:"weights"`
		Quantised [][]int32 `json:"quantised"`
		Exp       int       `json:"weight_exp"`
		Du, Dv    int32
		Vth       int32
		BiasMant  []int32     `json:"bias_mant"`
		BiasExp   []int32     `json:"bias_exp"`
		SIn       [][]float32 `json:"s_in"`
		U, V      [][]int32
		S         [][]int
	}
	readLava(t, "network.json", &cases)
	spikes := 0
	for ci, c := range cases {
		n, m := len(c.Weights), len(c.Weights[0])
		w := slices.Concat(c.Weights...)
		mode := SignModeOf(w)
		q := LavaWeights(w, mode, 8)
		if !slices.Equal(q, slices.Concat(c.Quantised...)) {
			t.Fatalf("case %d: LavaWeights %v, Lava %v", ci, q, c.Quantised)
		}
		l := &Layer{Name: "lif", N: n, Spiking: true, Du: make([]int32, n), Dv: make([]int32, n), Vth: make([]int32, n),
			BiasMant: c.BiasMant, BiasExp: c.BiasExp, Scale: make([]float64, n), Sources: []int{0}}
		for i := range n {
			l.Du[i], l.Dv[i], l.Vth[i], l.Scale[i] = c.Du, c.Dv, c.Vth, 1
		}
		net := &Network{
			Inputs:  []*InputPort{{Name: "x", Size: m, Bits: 9}},
			Denses:  []*Dense{{Name: "d", Rows: n, Cols: m, Weights: q, WeightExp: c.Exp, Sign: mode, FromInput: true}},
			Layers:  []*Layer{l},
			Outputs: []*OutputPort{{Name: "s", Layer: 0}},
			Order:   []Op{{Dense: true}, {Index: 0}},
		}
		in := newInstance(net, nil, nil, 1)
		x := make([]float32, m)
		for step := range c.SIn {
			if err := in.Step(context.Background(), x); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				u, v, err := in.State("lif", 0, i)
				if err != nil {
					t.Fatal(err)
				}
				spike := in.Output(0)[i] == 1
				if spike {
					spikes++
				}
				if u != c.U[step][i] || v != c.V[step][i] || spike != (c.S[step][i] == 1) {
					t.Fatalf("case %d step %d neuron %d: loihi u=%d v=%d spike=%v, Lava u=%d v=%d spike=%v",
						ci, step, i, u, v, spike, c.U[step][i], c.V[step][i], c.S[step][i] == 1)
				}
			}
			copy(x, c.SIn[step])
		}
	}
	t.Logf("%d Dense→LIF networks equal to Lava's at every step (%d spikes)", len(cases), spikes)
	if len(cases) < 100 || spikes == 0 {
		t.Errorf("the vectors no longer cover spiking networks (%d cases, %d spikes)", len(cases), spikes)
	}
}
