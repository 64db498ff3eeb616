package loihi

import (
	"fmt"
	"math"

	"github.com/neuro-go/neuro/snn"
)

// neuronParams are the float parameters of one neuron in the form the
// integer model needs: v ← am·v + u + bias, u ← as·u + c·x; a spike
// resets v to vreset (or subtracts vth − vreset).
type neuronParams struct {
	am, as, c, bias, vth, vleak, vreset float64
}

// params returns the float parameters of neuron i of a neuron node, and
// whether it spikes and resets by subtraction.
func params(name string, node snn.Node, i int, dt float64) (neuronParams, error) {
	at := func(xs []float64) float64 {
		if len(xs) == 1 {
			return xs[0]
		}
		return xs[i]
	}
	var np neuronParams
	var r, vleak, vreset float64
	var refr []float64
	switch x := node.(type) {
	case *snn.LIF:
		np.am = math.Exp(-dt / at(x.Tau))
		r, vleak, np.vth, vreset, refr = at(x.R), at(x.VLeak), at(x.VThreshold), at(x.VReset), x.Refractory
		np.c = (1 - np.am) * r
	case *snn.LI:
		np.am = math.Exp(-dt / at(x.Tau))
		r, vleak = at(x.R), at(x.VLeak)
		np.c = (1 - np.am) * r
	case *snn.IF:
		np.am = 1
		r, np.vth, vreset = at(x.R), at(x.VThreshold), at(x.VReset)
		np.c = dt * r
	case *snn.I:
		np.am = 1
		r = at(x.R)
		np.c = dt * r
	case *snn.Threshold:
		// The Heaviside program: v = x − threshold, no memory, spike
		// when v > 0 (vth 0).
		np.c, np.bias = 1, -at(x.Threshold)
		return np, nil
	case *snn.Delay:
		// The relay program: v = x, no memory, sent a step later.
		if steps := math.Round(at(x.Delay) / dt); steps != 1 {
			return np, unsupported(name, "delay %g s at element %d is %g steps of %g s: the chip holds a delay as a chain of one-step relays, 1 to %d steps, the same for every element", at(x.Delay), i, steps, dt, maxRelayChain)
		}
		np.c = 1
		return np, nil
	case *snn.CubaLIF, *snn.CubaLI:
		var ts, tm, win float64
		if c, ok := x.(*snn.CubaLIF); ok {
			ts, tm, r, vleak, win = at(c.TauSyn), at(c.TauMem), at(c.R), at(c.VLeak), at(c.WIn)
			np.vth, vreset, refr = at(c.VThreshold), at(c.VReset), c.Refractory
		} else {
			c := x.(*snn.CubaLI)
			ts, tm, r, vleak, win = at(c.TauSyn), at(c.TauMem), at(c.R), at(c.VLeak), at(c.WIn)
		}
		np.as, np.am = math.Exp(-dt/ts), math.Exp(-dt/tm)
		// The float simulator's impulse form (snn/neuron.go, newNeuronOp):
		// J ← I + w_in·(e^(dt/τs) − 1)·x; v ← am·v + p·J; I ← as·J, so J
		// follows J ← as·J + wj·x, which is Lava's u recursion with
		// u = p·J: the input gain is p·wj.
		wj := win * math.Expm1(dt/ts)
		var pp float64
		if math.Abs(ts-tm) <= 1e-12*math.Max(ts, tm) {
			pp = r * dt / tm * np.am
		} else {
			pp = r * ts / (ts - tm) * (np.as - np.am)
		}
		np.c = pp * wj
	}
	np.bias = (1 - np.am) * vleak
	np.vleak = vleak
	if !(np.c > 0) {
		return np, unsupported(name, "neuron %d has input gain %g: the chip needs a positive input scale (r and w_in > 0)", i, np.c)
	}
	if snn.IsSpiking(node.Kind()) {
		// A v_reset other than 0 runs as the reset microcode variant
		// (Neuron.VReset); 0 is Lava's LIF.
		np.vreset = vreset
		if !(np.vth > 0) {
			return np, unsupported(name, "v_threshold is %g at neuron %d: the threshold mantissa is unsigned and must be positive here", np.vth, i)
		}
	}
	for _, rf := range refr {
		if rf > 0 {
			return np, unsupported(name, "refractory periods are not in Lava's bit-accurate LIF (PyLifModelBitAcc)")
		}
	}
	return np, nil
}

type denseSrc struct {
	d      *Dense
	w      []float32 // row-major float weights
	bias   []float32 // Affine bias, nil for Linear
	sx     float64   // float value of one input unit
	xmax   float64   // largest float input magnitude
	oneHot bool      // at most one input, of 1, is non-zero at a time
	q      float64   // float weight per Lava integer unit
	qBest  float64
	maxAbs float64
	mode   SignMode
}

// layerConversion is one Layer on its way from float parameters to
// integers. Each stage reads what the ones before it decided: the decays
// fix the range a bias settles at, the sources' weights and the decays fix
// the state range, that range fixes the input unit U shared by the
// sources' weight exponents, and U fixes the thresholds, biases and
// payload shifts.
type layerConversion struct {
	net *Network
	l   *Layer
	g   *snn.Graph
	o   Config
	// oneHot names the Inputs that carry one-hot vectors.
	oneHot map[string]bool
	nr     NodeReport
	// readout: a GradedVec readout, which has no float neuron behind it;
	// stateless: a readout, a Heaviside program or a relay, none keeping
	// state in u or a decaying v.
	readout, stateless bool
	ps                 []neuronParams
	asL, amL           []float64 // the decays the 12-bit du and dv give
	srcs               []*denseSrc
	biasF              []float64 // float bias per neuron, in v per step
	bvs                []float64 // the bound on |v| per neuron, in float units
	// calibrated is the Program's calibrated range of each neuron's
	// output (compile.Ranges), or nil.
	calibrated []float32
}

func convertLayer(net *Network, l *Layer, g *snn.Graph, dt float64, o Config, oneHot map[string]bool, calibrated []float32) ([]NodeReport, error) {
	c := &layerConversion{net: net, l: l, g: g, o: o, oneHot: oneHot, calibrated: calibrated}
	if err := c.params(dt); err != nil {
		return nil, err
	}
	c.decays()
	if err := c.sources(); err != nil {
		return nil, err
	}
	U, reports := c.weights(c.minUnit())
	c.thresholds(U, c.floorLoss())
	if l.Graded {
		c.payloads()
	}
	c.nr.StateScale = l.Scale[0]
	return append(reports, c.nr), nil
}

// params reads the float parameters of every neuron.
func (c *layerConversion) params(dt float64) error {
	l := c.l
	node := c.g.Nodes[l.Name]
	l.Spiking = snn.IsSpiking(l.Kind)
	switch x := node.(type) {
	case *snn.LIF:
		l.Subtract = x.Reset == snn.ResetSubtract
	case *snn.IF:
		l.Subtract = x.Reset == snn.ResetSubtract
	case *snn.CubaLIF:
		l.Subtract = x.Reset == snn.ResetSubtract
	}
	c.readout = l.Model == ModelGradedVec
	c.stateless = c.readout || l.Model == ModelHeaviside || l.Model == ModelDelay
	c.ps = make([]neuronParams, l.N)
	for i := range c.ps {
		if c.readout {
			c.ps[i] = neuronParams{c: 1}
			continue
		}
		p, err := params(l.Name, node, i, dt)
		if err != nil {
			return err
		}
		c.ps[i] = p
	}
	c.nr = NodeReport{Node: l.Name, Kind: l.Kind}
	if l.Model != "" {
		c.nr.Notes = append(c.nr.Notes, "neuron program: "+string(l.Model))
	}
	return nil
}

// decays sets the integer decays. u: 4096 − (du + 1) = round(4096·as); v:
// 4096 − dv = round(4096·am). as = 0 (single-state neurons) gives du =
// 4095, a decay factor of exactly 0, so u is this step's input alone.
func (c *layerConversion) decays() {
	l, n := c.l, c.l.N
	l.Du, l.Dv = make([]int32, n), make([]int32, n)
	c.asL, c.amL = make([]float64, n), make([]float64, n)
	for i, p := range c.ps {
		du := MaxDecay - int64(math.Round(DecayScale*p.as))
		dv := DecayScale - int64(math.Round(DecayScale*p.am))
		if c.stateless {
			// No state: u is this step's input (du = 4095), and v
			// keeps nothing (the program, not dv, says so).
			du, dv = MaxDecay, DecayScale
		} else if du < 0 || dv > MaxDecay {
			c.nr.Notes = appendOnce(c.nr.Notes, "a decay beyond the 12-bit range was clamped")
			du, dv = min(max(du, 0), MaxDecay), min(max(dv, 0), MaxDecay)
		}
		l.Du[i], l.Dv[i] = int32(du), int32(min(dv, MaxDecay))
		c.asL[i] = float64(DecayScale-(du+1)) / DecayScale
		c.amL[i] = float64(DecayScale-dv) / DecayScale
		c.nr.DecayUError = math.Max(c.nr.DecayUError, math.Abs(c.asL[i]-p.as))
		c.nr.DecayVError = math.Max(c.nr.DecayVError, math.Abs(c.amL[i]-p.am))
	}
}

// sources gathers the float weights of the Denses that feed the layer, in
// the units the Dense will see, and sums their biases into biasF.
func (c *layerConversion) sources() error {
	l, n, net := c.l, c.l.N, c.net
	c.biasF = make([]float64, n)
	for i, p := range c.ps {
		c.biasF[i] = p.bias
	}
	for _, di := range l.Sources {
		d := net.Denses[di]
		s := &denseSrc{d: d, sx: 1, xmax: 1}
		switch x := c.g.Nodes[d.Name].(type) {
		case *snn.Linear:
			s.w = x.Weight.Data
			d.Rows, d.Cols = x.Weight.Shape[0], x.Weight.Shape[1]
		case *snn.Affine:
			s.w, s.bias = x.Weight.Data, x.Bias
			d.Rows, d.Cols = x.Weight.Shape[0], x.Weight.Shape[1]
		}
		if d.FromInput {
			ip := net.Inputs[d.From]
			s.sx = math.Ldexp(1, -ip.FracBits)
			s.xmax = math.Ldexp(1, ip.Bits-1) * s.sx
			s.oneHot = c.oneHot[ip.Name] || c.oneHot[""] && len(net.Inputs) == 1
		} else if sl := net.Layers[d.From]; sl.Graded {
			if sl.PayloadShift == nil {
				return unsupported(d.Name, "graded spikes of %q close a cycle: their scale is not known yet (not supported)", sl.Name)
			}
			// One payload unit of source neuron j is worth
			// Scale[j]·2^shift[j]: fold that into the weight columns, so
			// the Dense sees integer payloads of one unit each.
			w := make([]float32, len(s.w))
			for k, x := range s.w {
				j := k % d.Cols
				w[k] = float32(float64(x) * sl.Scale[j] * math.Ldexp(1, int(sl.PayloadShift[j])))
			}
			s.w = w
			s.xmax = math.Ldexp(1, sl.PayloadBits-1) - 1
		}
		s.mode, s.qBest, s.maxAbs = bestStep(s.w)
		c.srcs = append(c.srcs, s)
		if s.bias != nil && c.readout {
			// GradedVec has no bias: the host adds it to the readout.
			if l.Offset == nil {
				l.Offset = make([]float64, n)
			}
			for i := range l.Offset {
				l.Offset[i] += float64(s.bias[i])
			}
			c.nr.Notes = appendOnce(c.nr.Notes, fmt.Sprintf("bias of %q added by the host to the readout (GradedVec has none)", d.Name))
		} else if s.bias != nil {
			for i := range c.biasF {
				b := c.ps[i].c * float64(s.bias[i])
				if c.ps[i].as > 0 {
					// Lava adds its bias to v, not u: a constant input to
					// u settles at c·b/(1 − as) per step in v, which is
					// what the bias gives; the first ~τs steps differ.
					b /= 1 - c.asL[i]
					c.nr.Notes = appendOnce(c.nr.Notes, fmt.Sprintf("bias of %q added to v at its steady-state value c·b/(1−a_s): exact after the synaptic transient, not during it", d.Name))
				}
				c.biasF[i] += b
			}
		}
	}
	return nil
}

// minUnit returns the smallest float input unit U that keeps the state
// range each neuron needs inside the chip's 24 bits, and records that
// range, in float units of v, in bvs.
func (c *layerConversion) minUnit() float64 {
	l, o := c.l, c.o
	T := float64(o.Timesteps)
	if l.Graded {
		T = settleSteps
	}
	umin := 0.0
	c.bvs = make([]float64, l.N)
	for i, p := range c.ps {
		in := 0.0
		for _, s := range c.srcs {
			row := s.w[i*s.d.Cols : (i+1)*s.d.Cols]
			sum := 0.0
			for _, w := range row {
				if s.oneHot {
					sum = math.Max(sum, math.Abs(float64(w)))
				} else {
					sum += math.Abs(float64(w)) * s.xmax
				}
			}
			in += sum
		}
		uF := p.c * in / (1 - c.asL[i])
		steps := T
		if c.amL[i] < 1 {
			steps = math.Min(T, 1/(1-c.amL[i]))
		}
		bv := (uF+math.Abs(c.biasF[i]))*steps + math.Abs(p.vleak)
		if l.Spiking {
			bv = math.Max(o.Headroom*p.vth, p.vth+uF+math.Abs(c.biasF[i]))
			// After a reset v sits at (or, subtracting, above) v_reset.
			bv = math.Max(bv, math.Abs(p.vreset))
		}
		c.bvs[i] = bv
		if c.readout {
			// v = a, one unit of v per dendritic unit U.
			umin = math.Max(umin, in/(maxUV-1))
			continue
		}
		dmin := math.Max(bv, uF) / (maxUV - 1)
		if l.Spiking {
			// The threshold and the reset mantissas fit 17 bits.
			dmin = math.Max(dmin, math.Max(p.vth, math.Abs(p.vreset))/(float64(MaxVth)*(1<<VthShift)))
		}
		// δ_i = c_i·U/64: the float input unit U per dendritic unit.
		umin = math.Max(umin, dmin*float64(l.actUnit())/p.c)
	}
	if umin == 0 {
		umin = math.SmallestNonzeroFloat64
	}
	return umin
}

// weights picks the input unit U, at least umin, and each source's weight
// exponent, and quantises the weights; it returns U and the Denses'
// reports.
func (c *layerConversion) weights(umin float64) (float64, []NodeReport) {
	// Each source's best exponent: the finest U ≥ umin its weight step
	// allows. Several sources must share U, so the coarsest wins and the
	// others re-derive their weight step from it.
	U := 0.0
	for _, s := range c.srcs {
		e := math.Floor(math.Log2(s.qBest * s.sx / umin))
		e = math.Min(math.Max(e, MinWeightExp), MaxWeightExp)
		s.d.WeightExp = int(e)
		U = math.Max(U, math.Ldexp(s.qBest*s.sx, -int(e)))
	}
	if U < umin {
		// Even the smallest exponent leaves the range short: coarsen the
		// weights instead (the report shows the cost).
		U = umin
		c.nr.Notes = appendOnce(c.nr.Notes, "state range needs a weight step coarser than the weights' own: weights lose resolution")
	}
	var reports []NodeReport
	for _, s := range c.srcs {
		dr := NodeReport{Node: s.d.Name, Kind: c.g.Nodes[s.d.Name].Kind(), SignMode: s.mode.String()}
		q := math.Ldexp(U, s.d.WeightExp) / s.sx
		if q != s.qBest {
			// Pick the exponent whose step is closest above the best one.
			e := math.Ceil(math.Log2(s.qBest * s.sx / U))
			e = math.Min(math.Max(e, MinWeightExp), MaxWeightExp)
			s.d.WeightExp = int(e)
			q = math.Ldexp(U, int(e)) / s.sx
		}
		s.q = q
		s.d.Sign = s.mode
		s.d.Weights, dr.WeightError = quantise(s.w, q, s.mode, s.maxAbs)
		dr.WeightExp, dr.WeightStep = s.d.WeightExp, q
		reports = append(reports, dr)
	}
	return U, reports
}

// floorLoss returns what the negative weight exponents lose, on average,
// per step in units of u: a negative exponent k floors the dendritic sum,
// losing (2^k − 1)/2^(k+1) of a unit, 64 times that in u. thresholds gives
// it back as bias (divided by 1 − a_s where u keeps it).
func (c *layerConversion) floorLoss() float64 {
	loss := 0.0
	for _, s := range c.srcs {
		if k := -s.d.WeightExp; k > 0 {
			loss += float64(c.l.actUnit()) * (0.5 - math.Ldexp(0.5, -k))
			c.nr.Notes = appendOnce(c.nr.Notes, fmt.Sprintf("%q has weight exponent %d: the mean loss of its floor is returned as bias", s.d.Name, s.d.WeightExp))
		}
	}
	return loss
}

// thresholds sets the thresholds, biases and scales of v, now that the
// input unit U is known.
func (c *layerConversion) thresholds(U, floorLoss float64) {
	l, n, nr := c.l, c.l.N, &c.nr
	l.Vth, l.BiasMant, l.BiasExp, l.Scale, l.V0 = make([]int32, n), make([]int32, n), make([]int32, n), make([]float64, n), make([]int32, n)
	for i, p := range c.ps {
		if c.readout {
			l.Scale[i] = U
			l.Vth[i] = MaxVth
			if floorLoss > 0 {
				if l.Offset == nil {
					l.Offset = make([]float64, n)
				}
				l.Offset[i] += floorLoss / float64(l.actUnit()) * U
			}
			continue
		}
		delta := p.c * U / float64(l.actUnit())
		l.Scale[i] = delta
		c.biasF[i] += floorLoss / (1 - c.asL[i]) * delta
		v0, _ := clipV(int64(math.Round(p.vleak / delta)))
		l.V0[i] = int32(v0)
		if l.Model == ModelHeaviside {
			// The threshold is in the bias (v = x − threshold > 0).
			l.Vth[i] = 0
		} else if l.Spiking {
			m := math.Round(p.vth / (delta * (1 << VthShift)))
			if m > MaxVth {
				m = MaxVth
				nr.Notes = appendOnce(nr.Notes, "threshold clamped to the 17-bit mantissa")
			}
			l.Vth[i] = int32(m)
			nr.ThresholdError = math.Max(nr.ThresholdError, math.Abs(m*delta*(1<<VthShift)-p.vth)/p.vth)
			c.resetMant(i, delta, p)
		} else {
			l.Vth[i] = MaxVth
		}
		b := c.biasF[i] / delta
		e := int32(0)
		for e < MaxBiasExp && math.Abs(math.Round(math.Ldexp(b, -int(e)))) > MaxBiasMant {
			e++
		}
		m := math.Round(math.Ldexp(b, -int(e)))
		if m > MaxBiasMant || m < MinBiasMant {
			m = math.Min(math.Max(m, MinBiasMant), MaxBiasMant)
			nr.Notes = appendOnce(nr.Notes, "bias clamped to the 13-bit mantissa at exponent 7")
		}
		l.BiasMant[i], l.BiasExp[i] = int32(m), e
		nr.BiasError = math.Max(nr.BiasError, math.Abs(math.Ldexp(m, int(e))*delta-c.biasF[i]))
	}
	if nr.ThresholdError > coarseThreshold { // only spiking, non-Heaviside neurons have one
		worst := 0.0
		for i, p := range c.ps {
			worst = math.Max(worst, c.bvs[i]/p.vth)
		}
		nr.Notes = appendOnce(nr.Notes, fmt.Sprintf("thresholds are off by up to %.0f%%: v's 24 bits must hold a worst-case step of input of %.3g thresholds, which leaves the threshold few units of 2^6; spikes will differ from the float network's (smaller input weights or fewer sources give it back)", 100*nr.ThresholdError, worst))
	}
}

// coarseThreshold is the relative threshold error above which the report
// says why. A threshold with a mantissa of 10 or more is within 5%, so
// past that the grid, not rounding, is what moved it.
const coarseThreshold = 0.05

// resetMant sets neuron i's reset mantissa: v_reset rounded to the
// threshold's grid, round(v_reset/(δ·2^6)) half away from zero (as the
// threshold), so a subtractive reset lowers v by exactly the grid value of
// v_threshold − v_reset when both are on the grid, and by nothing when
// they are equal (snnTorch's "none"). VReset stays nil while every
// mantissa is 0, as Lava's LIF has it.
func (c *layerConversion) resetMant(i int, delta float64, p neuronParams) {
	l, nr := c.l, &c.nr
	if p.vreset == 0 {
		return
	}
	m := math.Round(p.vreset / (delta * (1 << VthShift)))
	if math.Abs(m) > MaxVth {
		m = math.Copysign(MaxVth, m)
		nr.Notes = appendOnce(nr.Notes, "v_reset clamped to the 17-bit magnitude of the threshold's mantissa")
	}
	if l.VReset == nil {
		l.VReset = make([]int32, l.N)
		if l.Subtract {
			nr.Notes = append(nr.Notes, "neuron program: subtractive reset by v_threshold − v_reset (a microcode variant beyond Lava's LIF)")
		} else {
			nr.Notes = append(nr.Notes, "neuron program: reset to v_reset (a microcode variant beyond Lava's LIF)")
		}
	}
	l.VReset[i] = int32(m)
	nr.ResetError = math.Max(nr.ResetError, math.Abs(m*delta*(1<<VthShift)-p.vreset)/p.vth)
}

// payloads sizes a graded layer's payload shifts so that each neuron's
// payload covers the worst case of its v, or RangeMargin times its
// calibrated range where that is less.
func (c *layerConversion) payloads() {
	l := c.l
	pmax := math.Ldexp(1, l.PayloadBits-1) - 1
	l.PayloadShift = make([]int32, l.N)
	lo, hi := int32(StateBits), int32(0)
	if len(c.calibrated) != l.N {
		c.calibrated = nil
	}
	narrowed := 0
	for i := range l.PayloadShift {
		bv := c.bvs[i]
		if c.calibrated != nil && c.calibrated[i] > 0 {
			if r := c.o.RangeMargin * float64(c.calibrated[i]); r < bv {
				bv = r
				narrowed++
			}
		}
		vb := math.Min(bv/l.Scale[i], maxUV-1)
		sh := int32(0)
		for math.Ceil(math.Ldexp(vb, -int(sh))) > pmax {
			sh++
		}
		l.PayloadShift[i] = sh
		lo, hi = min(lo, sh), max(hi, sh)
	}
	c.nr.Notes = append(c.nr.Notes, fmt.Sprintf("sends graded spikes of %d bits: v rounded to units of 2^s, s from %d to %d", l.PayloadBits, lo, hi))
	if narrowed > 0 {
		c.nr.Notes = append(c.nr.Notes, fmt.Sprintf("payloads of %d of %d neurons sized for %g times their calibrated range, not the worst case: beyond it they saturate", narrowed, l.N, c.o.RangeMargin))
	}
}

func appendOnce(xs []string, s string) []string {
	for _, x := range xs {
		if x == s {
			return xs
		}
	}
	return append(xs, s)
}

// levels returns the integer range of a sign mode's weight mantissa and the
// factor between mantissa and Lava integer (2 for mixed weights).
func levels(m SignMode) (lo, hi, g float64) {
	switch m {
	case Excitatory:
		return 0, 255, 1
	case Inhibitory:
		return -255, 0, 1
	}
	return -128, 127, 2
}

// bestStep picks the float weight per Lava integer unit that represents w
// with the least largest error: the largest magnitude is mapped onto each
// mantissa k in the upper half of the range (every grid of at most 8 bits
// has a multiple there), and the k with the least error wins (the largest
// k on ties). Weights already on an 8-bit grid come out exact.
func bestStep(w []float32) (SignMode, float64, float64) {
	lo32, hi32 := float32(0), float32(0)
	for _, x := range w {
		lo32, hi32 = min(lo32, x), max(hi32, x)
	}
	mode := Mixed
	switch {
	case lo32 >= 0:
		mode = Excitatory
	case hi32 <= 0:
		mode = Inhibitory
	}
	m := math.Max(-float64(lo32), float64(hi32))
	if m == 0 {
		return mode, 1, 0
	}
	lo, hi, g := levels(mode)
	kmax := math.Max(-lo, hi)
	best, bestErr := 0.0, math.Inf(1)
	for k := kmax; k >= math.Ceil(kmax/2); k-- {
		qm := m / k
		worst := 0.0
		ok := true
		for _, x := range w {
			r := math.Round(float64(x) / qm)
			if r < lo || r > hi {
				ok = false
				break
			}
			worst = math.Max(worst, math.Abs(float64(x)-r*qm))
			if worst >= bestErr {
				break
			}
		}
		if ok && worst < bestErr {
			best, bestErr = qm, worst
			if worst == 0 {
				break
			}
		}
	}
	return mode, best / g, m
}

// quantise rounds w onto Lava integers with step q (float per integer),
// clipping to the sign mode's range, and returns them with the relative
// error max|w − w_int·q| / max|w|.
func quantise(w []float32, q float64, mode SignMode, maxAbs float64) ([]int32, float64) {
	lo, hi, g := levels(mode)
	out := make([]int32, len(w))
	worst := 0.0
	for i, x := range w {
		m := math.Min(math.Max(math.Round(float64(x)/(q*g)), lo), hi)
		out[i] = int32(m * g)
		worst = math.Max(worst, math.Abs(float64(x)-float64(out[i])*q))
	}
	if maxAbs == 0 {
		return out, 0
	}
	return out, worst / maxAbs
}

// actUnit is the factor between a unit of the summed synaptic input and a
// unit of u: Lava's 2^6, or 1 for a graded layer's program and a
// GradedVec readout (the readout's floor loss is computed in units of a
// with it).
func (l *Layer) actUnit() int64 {
	if l.Graded || l.Model == ModelGradedVec {
		return 1
	}
	return 1 << ActShift
}
