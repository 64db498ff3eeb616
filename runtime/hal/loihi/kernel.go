package loihi

// The integer neuron and synapse arithmetic. Every constant and every
// rounding rule here was checked against Intel's Lava (github.com/lava-nc/lava,
// commit b6822fbc, 2025-07-28):
//
//   - src/lava/proc/lif/models.py, AbstractPyLifModelFixed.__init__,
//     subthr_dynamics, scale_bias and PyLifModelBitAcc.scale_threshold,
//     spiking_activation: the CUBA LIF neuron;
//   - src/lava/proc/dense/models.py, AbstractPyDenseModelBitAcc.run_spk:
//     the weight exponent;
//   - src/lava/utils/weightutils.py, clip_weights and truncate_weights: how
//     the integer weights are clipped and truncated by sign mode.
//
// The code is written from the equations those functions implement, not
// translated from them; kernel_test.go checks it on hand-worked vectors.

const (
	// StateBits is the width of the current u and voltage v
	// (AbstractPyLifModelFixed: uv_bitwidth = 24).
	StateBits = 24
	// maxUV is 2^23, Lava's max_uv_val.
	maxUV = 1 << (StateBits - 1)
	// DecayScale is the unit of the 12-bit decays du and dv
	// (decay_shift = 12, decay_unity = 4096).
	DecayScale = 1 << 12
	// ActShift is the left shift applied to the synaptic input before it
	// is added to u (act_shift = 6).
	ActShift = 6
	// VthShift is the left shift applied to the threshold mantissa
	// (vth_shift = 6).
	VthShift = 6
	// MaxVth is the largest threshold mantissa: vth is an unsigned 17-bit
	// integer (PyLifModelBitAcc docstring: "vth: unsigned 17-bit integer
	// (0 to 131071)").
	MaxVth = 1<<17 - 1
	// MaxDecay is the largest du or dv: unsigned 12-bit (docstring: "du:
	// unsigned 12-bit integer (0 to 4095)").
	MaxDecay = DecayScale - 1
	// Bias mantissa: signed 13-bit (-4096 to 4095); bias exponent: the
	// docstring says unsigned 3-bit (0 to 7), although scale_bias also
	// accepts negative exponents (a right shift); we emit 0..7 only.
	MinBiasMant, MaxBiasMant = -1 << 12, 1<<12 - 1
	MaxBiasExp               = 7
	// Weight exponent range. Lava's Dense accepts any integer weight_exp
	// and Intel does not publish the Loihi 2 field width; we keep to a
	// signed 4-bit field, [-8, 7], a conservative choice (Loihi 1's
	// exponent range as its SDK exposed it), and say so in the doc.
	MinWeightExp, MaxWeightExp = -8, 7
)

// SignMode is the sign convention of a weight matrix, as Lava's
// weightutils.SignMode: it decides the integer range of the weights.
type SignMode uint8

const (
	// Mixed weights are even integers in [-256, 254]: an 8-bit signed
	// mantissa times 2 (clip_weights with num_bits 8 gives [-256, 255],
	// truncate_weights then drops one bit for the sign).
	Mixed SignMode = iota + 1
	// Excitatory weights are integers in [0, 255].
	Excitatory
	// Inhibitory weights are integers in [-255, 0].
	Inhibitory
)

func (m SignMode) String() string {
	switch m {
	case Mixed:
		return "mixed"
	case Excitatory:
		return "excitatory"
	case Inhibitory:
		return "inhibitory"
	}
	return "null"
}

// SignModeOf returns the sign mode Lava's determine_sign_mode picks for
// weights: excitatory when none is negative, inhibitory when none is
// positive, else mixed.
func SignModeOf(w []int32) SignMode {
	lo, hi := int32(0), int32(0)
	for _, x := range w {
		lo, hi = min(lo, x), max(hi, x)
	}
	switch {
	case lo >= 0:
		return Excitatory
	case hi <= 0:
		return Inhibitory
	}
	return Mixed
}

// LavaWeights returns the weights as PyDenseModelBitAcc uses them after
// its first step: clipped to the sign mode's 8-bit range, then truncated
// to numWeightBits (arithmetic shifts, so negative mixed weights round
// towards minus infinity: -3 becomes -4).
func LavaWeights(w []int32, mode SignMode, numWeightBits int) []int32 {
	out := make([]int32, len(w))
	neg := mode == Inhibitory
	mixed := int32(0)
	if mode == Mixed {
		mixed = 1
	}
	lo, hi := -256*mixed, int32(255)
	trunc := uint(8 - numWeightBits + int(mixed))
	for i, x := range w {
		if neg {
			x = -x
		}
		x = min(max(x, lo), hi)
		x = (x >> trunc) << trunc
		if neg {
			x = -x
		}
		out[i] = x
	}
	return out
}

// shiftExp applies a weight exponent to an accumulated dendritic sum as
// AbstractPyDenseModelBitAcc.run_spk does: a left shift for a positive
// exponent, an arithmetic right shift (rounding towards minus infinity)
// otherwise.
func shiftExp(acc int64, exp int) int64 {
	if exp > 0 {
		return acc << uint(exp)
	}
	return acc >> uint(-exp)
}

// decay multiplies x by (4096 - d)/4096 and rounds towards zero, as
// subthr_dynamics does with sign(x)·(|x| >> 12). Go's integer division
// truncates towards zero, which is the same thing.
func decay(x int64, d int64) int64 {
	return x * (DecayScale - d) / DecayScale
}

// wrapU brings the new current into Lava's 24-bit range the way
// subthr_dynamics does: a value above 2^23 loses 2^24, a value at or below
// -2^23 gains 2^24. The asymmetry is Lava's: +2^23 itself is left alone.
func wrapU(u int64) (int64, bool) {
	if u > maxUV {
		return u - 2*maxUV, true
	}
	if u <= -maxUV {
		return u + 2*maxUV, true
	}
	return u, false
}

// clipV saturates the voltage to [-(2^23 - 1), 2^23 - 1].
func clipV(v int64) (int64, bool) {
	if v > maxUV-1 {
		return maxUV - 1, true
	}
	if v < -(maxUV - 1) {
		return -(maxUV - 1), true
	}
	return v, false
}

// effectiveBias is bias_mant · 2^bias_exp (scale_bias).
func effectiveBias(mant, exp int32) int64 {
	if exp >= 0 {
		return int64(mant) << uint(exp)
	}
	return int64(mant) >> uint(-exp)
}

// NeuronStep advances one neuron by one step with Lava's PyLifModelBitAcc
// arithmetic and returns the new u and v and whether it spiked. a is the
// summed synaptic input (the Dense outputs, before the 6-bit shift); vth is
// the threshold mantissa; bias is bias_mant·2^bias_exp. With subtract, a
// spike lowers v by vth·2^6 instead of setting it to 0 (the Loihi 2
// microcode variant described in the package doc). With spiking false the
// threshold is not tested (a non-spiking readout). It is Neuron.Step with
// VReset 0; Neuron adds the reset to an arbitrary value.
//
// The step, from subthr_dynamics:
//
//	u ← wrap24( trunc(u·(4096 − (du+1))/4096) + a·2^6 )
//	v ← clip24( trunc(v·(4096 − dv)/4096) + u + bias )
//	spike ← v > vth·2^6;  on a spike v ← 0
func NeuronStep(u, v, a int64, du, dv int32, vth int32, bias int64, spiking, subtract bool) (nu, nv int64, spike bool) {
	n := Neuron{Du: du, Dv: dv, Vth: vth, Bias: bias, Spiking: spiking, Subtract: subtract}
	return n.Step(u, v, a)
}

// Neuron is one neuron's integer parameters: what a Layer holds per
// neuron, with the bias already scaled (bias_mant·2^bias_exp).
//
// VReset is the reset microcode variant beyond Lava's LIF, a signed
// mantissa on the threshold's grid (units of 2^6, |VReset| ≤ MaxVth). A
// spike sets v to VReset·2^6, or with Subtract lowers v by
// (Vth − VReset)·2^6, so that v_reset means what it means in snn (NIR's
// reset to a value; snn.ResetSubtract's v ← v − (v_threshold − v_reset)).
// VReset 0 is Lava's PyLifModelBitAcc (reset to 0) and the subtractive
// variant that subtracts the threshold, bit for bit.
type Neuron struct {
	Du, Dv  int32
	Vth     int32
	VReset  int32
	Bias    int64
	Spiking bool
	// Subtract selects the subtractive reset.
	Subtract bool
}

// Step advances the neuron by one step from u and v with summed synaptic
// input a, as NeuronStep, and applies its reset on a spike.
func (n *Neuron) Step(u, v, a int64) (nu, nv int64, spike bool) {
	nu, _ = wrapU(decay(u, int64(n.Du)+1) + a<<ActShift)
	nv, _ = clipV(decay(v, int64(n.Dv)) + nu + n.Bias)
	if n.Spiking && nv > int64(n.Vth)<<VthShift {
		spike = true
		nv, _ = resetV(nv, resetAmount(n.Vth, n.VReset, n.Subtract), n.Subtract)
	}
	return nu, nv, spike
}

// resetAmount is the constant of a neuron's reset, in units of v: the
// amount subtracted, (vth − vreset)·2^6, with subtract, else the value
// reset to, vreset·2^6. The instance computes it once per neuron.
func resetAmount(vth, vreset int32, subtract bool) int64 {
	if subtract {
		return int64(vth-vreset) << VthShift
	}
	return int64(vreset) << VthShift
}

// resetV is v after a spike. A reset to a value stays inside 24 bits
// (|vreset| ≤ MaxVth), and so does a subtraction of a non-negative amount
// from a v above the threshold; only a subtractive reset with vreset
// above vth, which raises v, can reach the clip, and reports it.
func resetV(v, amount int64, subtract bool) (int64, bool) {
	if subtract {
		return clipV(v - amount)
	}
	return amount, false
}

// Payload is the graded spike a graded layer sends for voltage v: v
// rounded to units of 2^shift (half away from minus infinity: (v +
// 2^(shift−1)) >> shift, an arithmetic shift), saturated to a signed
// bits-bit payload, ±(2^(bits−1) − 1). It reports whether it saturated.
func Payload(v int64, shift int32, bits int) (p int64, saturated bool) {
	if shift > 0 {
		v = (v + 1<<(shift-1)) >> shift
	}
	hi := int64(1)<<(bits-1) - 1
	if v > hi {
		return hi, true
	}
	if v < -hi {
		return -hi, true
	}
	return v, false
}
