// Package loihi is the hal backend that emulates Intel's Loihi 2 running
// the fixed-point CUBA LIF neuron of Intel's Lava framework, bit for bit.
// A program that links it builds the device with New and a typed Config;
// one that chooses devices by name imports it for its side effect and
// gives the Config's fields as strings:
//
//	import _ "github.com/neuro-go/neuro/runtime/hal/loihi"
//	dev, err := hal.Open("loihi", hal.Config{Options: map[string]string{"headroom": "8"}})
//
// # Overview
//
// Convert maps a float compile.Program onto the chip's integers and says
// how far each integer is from its float (ConversionReport). Both first
// fold the graph's linear regions (compile.FoldLinear): residual
// junctions (Scale nodes) and chains of Linear and Affine nodes become one
// synapse node per (source, target) pair, so a lima language model
// imported for the cpu loads here unchanged. Device.Load then checks the
// chip's limits (compile.Partition with Target: 128 cores,
// 8,192 neurons and 131,072 synapses a core, 120 million synapses a chip),
// then converts, and the Instance steps the integer network for a batch of
// independent states. Folding is most of a Load's cost, so Load first
// places the folded synapses as the sparsity patterns of the unfolded
// graph predict them (a boolean composition: an entry counts unless
// every path to it has a zero weight) and refuses a program that cannot
// fit before folding it: neuro-1-heavy in 20 ms and 1 MB instead of
// 14 s and 750 MB. That count is an upper bound of Partition's, equal to
// it unless composed weights cancel to exactly 0.
//
// The neuron is Lava's PyLifModelBitAcc (src/lava/proc/lif/models.py), per
// step, with a the summed synaptic input:
//
//	u ← wrap24( trunc(u·(4096 − (du+1)) / 4096) + a·2^6 )
//	v ← clip24( trunc(v·(4096 − dv) / 4096) + u + bias_mant·2^bias_exp )
//	spike when v > vth·2^6, then v ← 0
//
// trunc rounds towards zero (Lava: sign(x)·(|x| >> 12)); wrap24 subtracts
// 2^24 from a u above 2^23 and adds it to a u at or below −2^23; clip24
// saturates v to ±(2^23 − 1). du and dv are 12-bit, vth a 17-bit mantissa,
// the bias a 13-bit mantissa with a 3-bit exponent. Synapses are Lava's
// PyDenseModelBitAcc: integer weights (even numbers in [−256, 254] for
// mixed signs, [0, 255] or [−255, 0] otherwise: LavaWeights), the
// accumulated sum shifted by the weight exponent (left for a positive one,
// arithmetic right otherwise).
//
// Conversion. Neuron kinds map onto that one neuron:
//
//   - LIF: du = 4095, so the decay factor of u is 4096 − 4096 = 0 and u is
//     exactly this step's input (the float LIF holds its input over the
//     step); v decays by 4096 − dv = round(4096·e^(−dt/τ)); the input gain
//     (1 − e^(−dt/τ))·R folds into the scale of v. LI is the same without
//     the threshold test.
//   - IF and I: du = 4095, dv = 0 (no leak), gain dt·R.
//   - CubaLIF and CubaLI: the float simulator's impulse form J ← a_s·J +
//     w_in·(e^(dt/τs) − 1)·x, v ← a_m·v + p·J is Lava's u and v recursion
//     with u = p·J; 4096 − (du+1) = round(4096·a_s).
//   - v_leak becomes the bias (1 − a_m)·v_leak; an Affine bias c·b joins it
//     (for the current-based kinds at its steady-state value, noted in the
//     report). The threshold must be positive, and a refractory period
//     is refused (PyLifModelBitAcc has none).
//   - Threshold (a stateless Heaviside) runs as the microcode program
//     ModelHeaviside: u ← wrap24(a·2^6), v ← clip24(u + bias), spike when
//     v > 0; the threshold goes into the bias. It is Lava's LIF with a v
//     decay of exactly 0, which the 12-bit dv cannot express.
//   - A non-spiking neuron (LI, CubaLI, I) that feeds synapses sends its
//     v as a graded spike every step, a microcode variant of the spike
//     stage (Loihi 2's neurons send graded spikes; Lava's GradedVec uses
//     24-bit payloads): payload = clamp((v + 2^(s−1)) >> s, ±(2^(B−1)−1))
//     with B = Config.PayloadBits (default 12) and a per-neuron s that
//     fits the worst case of v into B bits, or, where the Program carries
//     calibrated ranges (compile.Calibrate, Program.Ranges) and
//     Config.Ranges is "calibrated" (the default), Config.RangeMargin
//     (default 4) times the neuron's calibrated range if that is less.
//     The worst case of a deep layer's v is 13 to 2,100 times what
//     text ever drives it to in neuro-1-lite, so the calibrated payload
//     is that much finer, and the layers it feeds get a finer input unit
//     too; a payload past its range saturates (Instance.Saturations
//     counts it), while v itself keeps its worst-case 24-bit range, so
//     nothing wraps. One payload unit is worth Scale·2^s, folded into
//     the weights it meets. Its program adds a to u
//     without the 2^6 shift (u has no memory, v needs the range).
//   - A Delay of exactly one step (a lima model's shift channels) runs
//     as the relay program ModelDelay: u ← v, the value held since the
//     last step, sent as the graded spike (or read out); then v ←
//     clip24(a + bias), this step's summed input without the 2^6 shift.
//     Its range and payload shift are sized as a graded neuron's with
//     no memory. On a pipelined chip the relay is a stage like any
//     layer and sends the previous token's value, so the synaptic delays
//     that align a layer's inputs do not change. A Delay of n steps
//     (2 to 64, the same for every element) becomes n relays in series,
//     the last keeping its name, and a chain of one-step Delays (lima's
//     shift2 channels, two tokens back) is one already: each relay
//     passes its value to the next through one-to-one synapses of weight
//     1 (fold inserts them, since a neuron group reaches another only
//     through synapses). Delays that differ between elements, or that are
//     not a whole number of steps, are refused by name.
//   - Synapse nodes that feed an Output directly (a language model's
//     head) end in Lava's GradedVec (ModelGradedVec): v = a, read out as
//     v·U plus the Affine biases, which the host adds (GradedVec has no
//     bias).
//   - Resets beyond Lava's (v ← 0 on a spike) are microcode variants:
//     Loihi 2's neurons are microcode programs (Orchard et al. 2021), so
//     the same arithmetic runs with another spike stage, and a real
//     deployment would have to load that microcode. Subtractive reset
//     (snn.ResetSubtract: ANN-to-SNN conversion, snnTorch's default) is
//     v ← v − (vth − vreset)·2^6; a v_reset other than 0 (Norse's LIF,
//     snnTorch's delayed subtraction, which removes th/β and so arrives as
//     v_reset = th·(1 − 1/β)) sets v ← vreset·2^6, or is the vreset of the
//     subtraction. vreset is a signed mantissa on the threshold's grid,
//     round(v_reset/(δ·2^6)) half away from zero like vth (δ the float
//     value of a unit of v), |vreset| ≤ 2^17 − 1 (the conversion sizes δ
//     for it), so a subtraction lowers v by the grid value of
//     v_threshold − v_reset, exactly nothing when the two are equal
//     (snnTorch's "none"). Layer.VReset is nil, and the neuron Lava's,
//     where every v_reset is 0; the report gives ResetError and a note.
//   - A Scale node that FoldLinear leaves (one on a cycle, such as
//     snnTorch's RSynaptic with all_to_all=False) with one source and one
//     target becomes the Linear node with its scales on the diagonal.
//
// Scales. Each synapse node's weights get the float step (float weight per
// Lava integer) that represents them with the least largest error, trying
// every mapping of the largest weight onto a mantissa in the top half of
// the 8-bit range, so weights already on an 8-bit grid are exact. Each
// neuron node then gets one unit U (float input per unit of dendritic sum)
// shared by its sources; one unit of v is worth c·U/64 for a neuron of
// input gain c, and the weight exponent is the largest that keeps vth
// inside 17 bits and the state inside 24: for spiking neurons the
// threshold plus the worst case of one step of input (which also bounds
// u), and down to −Config.Headroom thresholds (default 16) below zero;
// for non-spiking readouts the worst case of Config.Timesteps steps of
// input. Beyond that v saturates, and Instance.Saturations counts it.
// Thresholds and biases round to that unit; v starts at rest (v_leak in
// that unit); everything rounded is in the report. A neuron whose worst
// case of one step's input is thousands of thresholds (many wide sources,
// as in a deep residual network folded onto the chip) keeps only a few
// units of 2^6 for its threshold: past 5% of threshold error the report
// notes it, with that worst case, since its spikes will drift from the
// float network's. neuro-1-lite's last block, trained without enough
// weight decay, is the example (bench/RESULTS.md, "neuro-1-lite on
// Loihi").
//
// A negative weight exponent floors the dendritic sum (Lava's arithmetic
// right shift). The conversion returns the mean of that loss, 64·(1/2 −
// 2^−(k+1)) units of v per step for a shift of k, as a constant bias, so
// that the floor costs precision but not a drift; the report notes it.
//
// The worst case of an Input's contribution is Σ|w|·x_max, except for the
// Program's one-hot Input (Encoding.Kind "one-hot"), where it is max|w|:
// one token at a time. A causal-lm Program's non-spiking readouts, and
// every graded layer, are sized for the leak's settling (the state lives
// from token to token), not for Timesteps steps.
//
// A graded source's payload scale is part of the weights of the layers it
// feeds, so a graded layer is converted before them, even one that comes
// after them in the plan because it closes a cycle (an integrator of a
// layer's own spikes); a cycle made of graded layers alone is refused.
//
// Graph inputs are graded spikes: x is sent as round(x·2^InputFracBits),
// saturated to InputBits (default 8 bits with 6 fractional: [−2, 2) in
// steps of 1/64); Lava's graded networks use payloads of up to 24 bits.
//
// Outputs: a spiking layer's output is its spikes (0 or 1); a non-spiking
// one (LI, CubaLI, I) outputs v times its scale. The counters count as the
// float simulator does (neuron updates, the spiking layers' among them as
// spiking updates, spikes, and for each input event the non-zero integer
// weights it reaches), so Target's energy model (Davies et al. 2018, Loihi
// 1 figures) applies to them. Like the cpu device, an Instance steps only
// the slots SetActive chooses (hal.SlotMasker): an idle slot keeps its
// state and costs nothing, so a sample's cost does not depend on the batch
// it shares.
//
// # Invariants
//
//   - Exact where stated: given a Network, Step computes what Lava's
//     PyLifModelBitAcc and PyDenseModelBitAcc compute, bit for bit. The
//     tests check hand-worked vectors for decay rounding, wraps, clips,
//     thresholds, reset, bias and weight exponents, and compare the
//     neuron, the weight clipping and truncation, the weight exponent and
//     a Dense feeding a LIF with what Lava's own process models computed
//     (lava_test.go; testdata/lava/gen.py runs them), state for state and
//     step for step. That is Lava's Python model, not silicon. The reset
//     variants differ from it only in the spike stage (Neuron.Step,
//     checked on hand-worked vectors too).
//   - Timing follows the Program, not Lava's pipeline: layers are evaluated
//     in the float simulator's plan order, so a feed-forward edge carries
//     this step's spikes and an edge closing a cycle the previous step's.
//     Lava's Dense buffers its output one step (a_buff), so on the chip a
//     feed-forward network's outputs appear one step later per layer; the
//     spike trains are the same, shifted, provided every layer's inputs
//     arrive together: Convert gives each Dense the synaptic delay that
//     aligns them (Dense.Delay) and reports the latency (Network.Depth:
//     7 steps for neuro-1-lite, whose tokens can still enter one a step).
//   - Load refuses, with an error wrapping compile.ErrUnsupported that
//     names the node, any node kind, reset mode, refractory period or
//     graph shape the chip cannot run, and any network over the limits;
//     it never changes a program's meaning silently: every conversion
//     error is in Instance.Report, and every saturation at run time is
//     counted by Instance.Saturations.
//   - Step allocates nothing; batch slots never interact; Reset(slot)
//     touches only its slot.
package loihi
