package loihi

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// Hand-worked vectors of Lava's PyLifModelBitAcc arithmetic
// (src/lava/proc/lif/models.py, AbstractPyLifModelFixed.subthr_dynamics).
// Each comment shows the arithmetic.
func TestNeuronStepVectors(t *testing.T) {
	const noVth = MaxVth
	tests := []struct {
		name              string
		u, v, a           int64
		du, dv, vth       int32
		bias              int64
		spiking, subtract bool
		wantU, wantV      int64
		wantSpike         bool
	}{
		// u decays by 4096 − (du+1) = 3095: 1000·3095 = 3,095,000;
		// /4096 = 755.62 → 755. v = 0 + 755.
		{"u decay positive", 1000, 0, 0, 1000, 0, noVth, 0, false, false, 755, 755, false},
		// −1000·3095/4096 = −755.62 → −755 (towards zero, not −756).
		{"u decay negative truncates to zero", -1000, 0, 0, 1000, 0, noVth, 0, false, false, -755, -755, false},
		// v decays by 4096 − 256 = 3840: 10001·3840 = 38,403,840;
		// /4096 = 9375.94 → 9375. du = 4095 zeroes u, a = 0.
		{"v decay positive", 0, 10001, 0, 4095, 256, noVth, 0, false, false, 0, 9375, false},
		{"v decay negative truncates to zero", 0, -10001, 0, 4095, 256, noVth, 0, false, false, 0, -9375, false},
		// du = 4095: factor 4096 − 4096 = 0, so u = a·64 = 3·64 = 192;
		// dv = 0: v = 100 + 192 = 292.
		{"activation shifted by 6", 0, 100, 3, 4095, 0, noVth, 0, false, false, 192, 292, false},
		{"du 4095 forgets u", 5_000_000, 0, 1, 4095, 0, noVth, 0, false, false, 64, 64, false},
		// du = 0: factor 4095: 8,388,000·4095/4096 = 8,385,952.15 →
		// 8,385,952; + 100·64 = 8,392,352 > 2^23 → − 2^24 = −8,384,864.
		{"u wraps above 2^23", 8_388_000, 0, 100, 0, 0, noVth, 0, false, false, -8_384_864, -8_384_864, false},
		// 131072·64 = 2^23 exactly: Lava wraps only values above 2^23, so
		// u stays 8,388,608; v = 2^23 clips to 2^23 − 1.
		{"u at +2^23 is kept", 0, 0, 131072, 4095, 0, noVth, 0, false, false, 8_388_608, 8_388_607, false},
		// −131072·64 = −2^23 ≤ −2^23 → + 2^24 = +8,388,608.
		{"u at -2^23 wraps to +2^23", 0, 0, -131072, 4095, 0, noVth, 0, false, false, 8_388_608, 8_388_607, false},
		// u = −10000·64 = −640,000; v = −8,000,000 − 640,000 =
		// −8,640,000 → clipped to −(2^23 − 1) = −8,388,607.
		{"v clips negative", 0, -8_000_000, -10000, 4095, 0, noVth, 0, false, false, -640_000, -8_388_607, false},
		// vth = 100 → 100·64 = 6400; v = 100·64 = 6400 is not above it.
		{"at threshold no spike", 0, 0, 100, 4095, 0, 100, 0, true, false, 6400, 6400, false},
		// bias 1: v = 6401 > 6400 → spike, v ← 0.
		{"above threshold resets to 0", 0, 0, 100, 4095, 0, 100, 1, true, false, 6400, 0, true},
		// subtractive variant: v ← 6401 − 6400 = 1.
		{"subtractive reset", 0, 0, 100, 4095, 0, 100, 1, true, true, 6400, 1, true},
		// a non-spiking readout ignores the threshold.
		{"non-spiking never fires", 0, 0, 100, 4095, 0, 100, 1, false, false, 6400, 6401, false},
		// CUBA: du = 2048 → factor 4096 − 2049 = 2047: 4096·2047/4096 =
		// 2047, + 1·64 = 2111. dv = 1024 → factor 3072: 1000·3072/4096 =
		// 750. v = 750 + 2111 + bias 5 = 2866.
		{"cuba with bias", 4096, 1000, 1, 2048, 1024, noVth, 5, true, false, 2111, 2866, false},
	}
	for _, tc := range tests {
		u, v, s := NeuronStep(tc.u, tc.v, tc.a, tc.du, tc.dv, tc.vth, tc.bias, tc.spiking, tc.subtract)
		if u != tc.wantU || v != tc.wantV || s != tc.wantSpike {
			t.Errorf("%s: got u=%d v=%d spike=%v, want u=%d v=%d spike=%v", tc.name, u, v, s, tc.wantU, tc.wantV, tc.wantSpike)
		}
	}
}

// The reset microcode variants beyond Lava's LIF (Neuron.VReset), worked
// by hand. Every case has du = 4095, dv = 0 and a = 0, so v before the
// test is v + bias; vth = 100 puts the threshold at 6400.
func TestNeuronResetVectors(t *testing.T) {
	tests := []struct {
		name      string
		v, bias   int64
		vth       int32
		vreset    int32
		subtract  bool
		wantV     int64
		wantSpike bool
	}{
		// VReset 0 is Lava: 6401 > 6400 → 0; subtracting → 6401 − 6400 = 1.
		{"reset to 0", 6400, 1, 100, 0, false, 0, true},
		{"subtract threshold", 6400, 1, 100, 0, true, 1, true},
		// Reset to a value: v ← VReset·64 = −20·64 = −1280, or 30·64 = 1920.
		{"reset to negative value", 6400, 1, 100, -20, false, -1280, true},
		{"reset to positive value", 6400, 1, 100, 30, false, 1920, true},
		// Subtract (vth − vreset)·64: (100 − (−20))·64 = 7680, so
		// 6401 − 7680 = −1279: v ends one unit above v_reset·64.
		{"subtract towards negative value", 6400, 1, 100, -20, true, -1279, true},
		// snnTorch's delayed subtraction of th/β, β = 0.8: vreset =
		// th·(1 − 1/β) = −25 mantissas, amount 125·64 = 8000; 9000 − 8000.
		{"subtract threshold over beta", 8999, 1, 100, -25, true, 1000, true},
		// vreset 50: amount 50·64 = 3200; 6401 − 3200 = 3201.
		{"subtract less than threshold", 6400, 1, 100, 50, true, 3201, true},
		// vreset = vth (snnTorch's "none"): the spike leaves v alone.
		{"subtract nothing", 6400, 1, 100, 100, true, 6401, true},
		// No spike, no reset, whatever the program.
		{"below threshold untouched", 6400, 0, 100, -20, false, 6400, false},
		{"below threshold untouched subtract", 6400, 0, 100, -20, true, 6400, false},
		// vreset above vth raises v: 8,000,000 − (100 − 131071)·64 =
		// 16,382,144, clipped to 2^23 − 1.
		{"subtract negative amount clips", 8_000_000, 0, 100, MaxVth, true, 8_388_607, true},
		// The extreme reset values stay inside 24 bits: ±131071·64 = ±8,388,544.
		{"reset to most negative", 6400, 1, 100, -MaxVth, false, -8_388_544, true},
	}
	for _, tc := range tests {
		n := Neuron{Du: MaxDecay, Dv: 0, Vth: tc.vth, VReset: tc.vreset, Bias: tc.bias, Spiking: true, Subtract: tc.subtract}
		u, v, s := n.Step(0, tc.v, 0)
		if u != 0 || v != tc.wantV || s != tc.wantSpike {
			t.Errorf("%s: got u=%d v=%d spike=%v, want u=0 v=%d spike=%v", tc.name, u, v, s, tc.wantV, tc.wantSpike)
		}
	}
	// NeuronStep is Neuron.Step with VReset 0.
	for _, sub := range []bool{false, true} {
		n := Neuron{Du: 100, Dv: 200, Vth: 50, Bias: 17, Spiking: true, Subtract: sub}
		u1, v1, s1 := n.Step(-300, 5000, 9)
		u2, v2, s2 := NeuronStep(-300, 5000, 9, 100, 200, 50, 17, true, sub)
		if u1 != u2 || v1 != v2 || s1 != s2 {
			t.Errorf("subtract %v: Neuron.Step %d %d %v, NeuronStep %d %d %v", sub, u1, v1, s1, u2, v2, s2)
		}
	}
}

func TestBiasAndWeightExponent(t *testing.T) {
	// scale_bias: mant·2^exp, arithmetic right shift for a negative exp.
	for _, tc := range []struct {
		mant, exp int32
		want      int64
	}{
		{-3, 4, -48},       // −3·16
		{4095, 7, 524_160}, // 4095·128
		{-3, -1, -2},       // −3 >> 1 = −2 (floor of −1.5)
		{5, 0, 5},
	} {
		if got := effectiveBias(tc.mant, tc.exp); got != tc.want {
			t.Errorf("effectiveBias(%d, %d) = %d, want %d", tc.mant, tc.exp, got, tc.want)
		}
	}
	// PyDenseModelBitAcc: left shift for exp > 0, else arithmetic right.
	for _, tc := range []struct {
		acc  int64
		exp  int
		want int64
	}{
		{5, 2, 20}, {5, -1, 2}, {-5, -1, -3}, {-5, 0, -5}, {-7, 3, -56},
	} {
		if got := shiftExp(tc.acc, tc.exp); got != tc.want {
			t.Errorf("shiftExp(%d, %d) = %d, want %d", tc.acc, tc.exp, got, tc.want)
		}
	}
}

// weightutils.clip_weights then truncate_weights, worked by hand.
func TestLavaWeights(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []int32
		mode SignMode
		bits int
		want []int32
	}{
		// Mixed: clip to [−256, 255], then drop 1 bit: 255 → 254,
		// −3 → (−3 >> 1) << 1 = −4, 7 → 6, 300 → 255 → 254,
		// −300 → −256.
		{"mixed", []int32{255, -3, 7, -256, 300, -300}, Mixed, 8, []int32{254, -4, 6, -256, 254, -256}},
		// Excitatory: clip to [0, 255], 8 bits keep everything.
		{"excitatory", []int32{0, 255, 256, 17}, Excitatory, 8, []int32{0, 255, 255, 17}},
		// 6 bits drop 2: 255 → 252, 17 → 16.
		{"excitatory 6 bits", []int32{255, 17}, Excitatory, 6, []int32{252, 16}},
		// Inhibitory: negate, clip to [0, 255], negate back.
		{"inhibitory", []int32{-5, -300}, Inhibitory, 8, []int32{-5, -255}},
	} {
		if got := LavaWeights(tc.in, tc.mode, tc.bits); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	if SignModeOf([]int32{0, 3}) != Excitatory || SignModeOf([]int32{-1, 0}) != Inhibitory || SignModeOf([]int32{-1, 1}) != Mixed {
		t.Error("SignModeOf")
	}
}

// The instance's fused layer loop must compute what Neuron.Step computes,
// neuron by neuron, over random states, parameters and inputs, with a
// Dense of each exponent sign in front.
func TestInstanceMatchesNeuronStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, m, batch = 17, 9, 2
	// The Lava neurons first, then the reset variants (random VReset, both
	// reset forms), drawn after them so the first cases keep their draws.
	type variant struct {
		exp    int
		vreset bool
	}
	for _, vt := range []variant{{-3, false}, {0, false}, {2, false}, {-3, true}, {0, true}, {2, true}} {
		exp := vt.exp
		w := make([]int32, n*m)
		for i := range w {
			w[i] = 2 * int32(rng.IntN(256)-128)
		}
		l := &Layer{Name: "l", N: n, Spiking: true, Subtract: exp > 0, Du: make([]int32, n), Dv: make([]int32, n), Vth: make([]int32, n),
			BiasMant: make([]int32, n), BiasExp: make([]int32, n), Scale: make([]float64, n), Sources: []int{0}}
		for i := 0; i < n; i++ {
			l.Du[i], l.Dv[i], l.Vth[i] = int32(rng.IntN(4096)), int32(rng.IntN(4096)), int32(rng.IntN(2000))
			l.BiasMant[i], l.BiasExp[i] = int32(rng.IntN(8192)-4096), int32(rng.IntN(8))
			l.Scale[i] = 1
		}
		if vt.vreset {
			l.Subtract = exp != 0
			l.VReset = make([]int32, n)
			for i := range l.VReset {
				l.VReset[i] = int32(rng.IntN(4000) - 2000)
			}
		}
		net := &Network{
			Inputs:  []*InputPort{{Name: "x", Size: m, Bits: 8, FracBits: 0}},
			Denses:  []*Dense{{Name: "d", Rows: n, Cols: m, Weights: w, WeightExp: exp, Sign: Mixed, FromInput: true}},
			Layers:  []*Layer{l},
			Outputs: []*OutputPort{{Name: "o", Layer: 0}},
			Order:   []Op{{Dense: true}, {Index: 0}},
		}
		in := newInstance(net, nil, nil, batch)
		u, v := make([]int64, batch*n), make([]int64, batch*n)
		for step := 0; step < 200; step++ {
			x := make([]float32, batch*m)
			for i := range x {
				x[i] = float32(rng.IntN(256) - 128)
			}
			if err := in.Step(context.Background(), x); err != nil {
				t.Fatal(err)
			}
			for s := 0; s < batch; s++ {
				for i := 0; i < n; i++ {
					var acc int64
					for j := 0; j < m; j++ {
						acc += int64(w[i*m+j]) * int64(x[s*m+j])
					}
					k := s*n + i
					var spk bool
					nr := Neuron{Du: l.Du[i], Dv: l.Dv[i], Vth: l.Vth[i], Bias: effectiveBias(l.BiasMant[i], l.BiasExp[i]), Spiking: true, Subtract: l.Subtract}
					if l.VReset != nil {
						nr.VReset = l.VReset[i]
					}
					u[k], v[k], spk = nr.Step(u[k], v[k], shiftExp(acc, exp))
					gu, gv, _ := in.State("l", s, i)
					if int64(gu) != u[k] || int64(gv) != v[k] || (in.Output(0)[k] == 1) != spk {
						t.Fatalf("exp %d step %d slot %d neuron %d: instance u=%d v=%d out=%v, NeuronStep u=%d v=%d spike=%v", exp, step, s, i, gu, gv, in.Output(0)[k], u[k], v[k], spk)
					}
				}
			}
		}
	}
}
