package snn

import "math"

// neuronMode selects the update rule of a neuron node.
type neuronMode uint8

const (
	modeIntegrate neuronMode = iota // I, IF: dv/dt = R·x
	modeLeaky                       // LI, LIF: τ dv/dt = v_leak − v + R·x
	modeCuba                        // CubaLI, CubaLIF: synaptic current then LI
)

// refEntry is a neuron held after a spike, until its slot's clock reaches
// until.
type refEntry struct {
	idx   int32
	hold  float32
	until int64
}

// refQueue is a slot's held neurons, e[head:], in the order they are
// released: by until, and in the order they fired where that is the same
// (always, when every neuron holds as long). A release takes them from the
// front without a look at the others, and a spike mostly appends.
type refQueue struct {
	e    []refEntry
	head int
}

// held returns the held neurons.
func (q *refQueue) held() []refEntry { return q.e[q.head:] }

// push adds x in its place, moving the held ones to the front of the
// buffer first if it is full, so that the buffer stops growing.
func (q *refQueue) push(x refEntry) {
	if len(q.e) == cap(q.e) && q.head > 0 {
		q.e = q.e[:copy(q.e, q.e[q.head:])]
		q.head = 0
	}
	q.e = append(q.e, x)
	i := len(q.e) - 1
	for ; i > q.head && q.e[i-1].until > x.until; i-- {
		q.e[i] = q.e[i-1]
	}
	q.e[i] = x
}

// clear empties the queue, keeping its buffer.
func (q *refQueue) clear() { q.e, q.head = q.e[:0], 0 }

// neuronOp integrates the state of one neuron node. The membrane is stored
// relative to v_leak (u = v − v_leak), so that the update needs no constant
// term: u' = a·u + c·x for I/IF/LI/LIF. For CubaLI/CubaLIF the input first
// jumps the synaptic current (J = I + wj·x), then u' = a·u + p·J and
// I' = as·J, the exact solution of the linear system over one step for an
// impulse at its start.
type neuronOp struct {
	mode     neuronMode
	spiking  bool
	subtract bool
	n        int

	u   []float32 // batch × n
	syn []float32 // batch × n (cuba only)

	// Per-neuron coefficients; uniform holds the scalars when all neurons
	// share them, which selects the fast kernels.
	a, c, as, wj, p, th, rs, sub, vleak []float32
	uniform                             bool
	leakFree                            bool // non-spiking, v_leak = 0: u is the output buffer
	ua, uc, uas, uwj, up, uth           float32

	refSteps []int32    // per neuron, nil when there is no refractory period
	refUntil []int64    // batch × n: the slot's clock from which the neuron may fire again
	refList  []refQueue // per slot: the neurons held
	clock    []int64    // per slot: the steps it has taken
	// frozen has a bit per neuron (slot-major, (n+63)/64 words a slot),
	// set while the neuron is in its slot's refList: the fused step
	// (lifUpdate, lifChain) leaves its state as it is, which is the held
	// value, instead of updating and restoring it. stale, per slot, says
	// that the states may have been written since they were held
	// (SetState, LoadSlot): the next fused step restores the held values
	// first.
	frozen []uint64
	stale  []bool

	onePass bool      // this step is stepFused
	x       []float32 // this step's summed input, when not onePass
	cands   [][]int32 // scratch of the fused step, a part's: the neurons with th < u
	job     denseJob  // the step's slot ranges (Simulator.stepSlots)

	// chain holds the two leaky integrators this node's fused step also
	// updates (fuseChains), late those read through a delayed edge, whose
	// update comes a step late; owed, per slot, says whether the late ones
	// owe the update of the slot's last step. fused marks an integrator so
	// updated, which the plan does not step: the chain's owner counts it.
	chain [2]*simNode
	late  [2]bool
	owed  []bool
	fused bool
}

func (s *Simulator) newNeuronOp(node Node, sn *simNode) *neuronOp {
	dt := s.opts.Dt
	n := sn.n
	op := &neuronOp{n: n}
	var tau, tauSyn, r, vleak, vth, vreset, win, refr []float64
	var reset ResetMode
	switch x := node.(type) {
	case *I:
		op.mode, r = modeIntegrate, x.R
	case *IF:
		op.mode, op.spiking, r, vth, vreset, reset = modeIntegrate, true, x.R, x.VThreshold, x.VReset, x.Reset
	case *LI:
		op.mode, tau, r, vleak = modeLeaky, x.Tau, x.R, x.VLeak
	case *LIF:
		op.mode, op.spiking, tau, r, vleak, vth, vreset, reset, refr = modeLeaky, true, x.Tau, x.R, x.VLeak, x.VThreshold, x.VReset, x.Reset, x.Refractory
	case *CubaLI:
		op.mode, tauSyn, tau, r, vleak, win = modeCuba, x.TauSyn, x.TauMem, x.R, x.VLeak, x.WIn
	case *CubaLIF:
		op.mode, op.spiking, tauSyn, tau, r, vleak, vth, vreset, win, reset, refr = modeCuba, true, x.TauSyn, x.TauMem, x.R, x.VLeak, x.VThreshold, x.VReset, x.WIn, x.Reset, x.Refractory
	}
	op.subtract = reset == ResetSubtract
	f32 := func() []float32 { return make([]float32, n) }
	op.a, op.c, op.th, op.rs, op.sub, op.vleak = f32(), f32(), f32(), f32(), f32(), f32()
	if op.mode == modeCuba {
		op.as, op.wj, op.p = f32(), f32(), f32()
		op.syn = make([]float32, sn.batch*n)
	}
	for i := 0; i < n; i++ {
		vl := atOr(vleak, i, 0)
		op.vleak[i] = float32(vl)
		switch op.mode {
		case modeIntegrate:
			op.a[i] = 1
			op.c[i] = float32(dt * at(r, i))
		case modeLeaky:
			a := math.Exp(-dt / at(tau, i))
			op.a[i] = float32(a)
			op.c[i] = float32((1 - a) * at(r, i))
		case modeCuba:
			ts, tm := at(tauSyn, i), at(tau, i)
			as, am := math.Exp(-dt/ts), math.Exp(-dt/tm)
			op.as[i] = float32(as)
			op.a[i] = float32(am)
			// An impulse scaled so that a constant input x settles the
			// current at w_in·x, as the continuous equation does.
			op.wj[i] = float32(at(win, i) * math.Expm1(dt/ts))
			// Response of v at the end of the step to a unit current at its
			// start: R·τs/(τs−τm)·(as − am), or R·dt/τ·e^(−dt/τ) when equal.
			var p float64
			if math.Abs(ts-tm) <= 1e-12*math.Max(ts, tm) {
				p = at(r, i) * dt / tm * am
			} else {
				p = at(r, i) * ts / (ts - tm) * (as - am)
			}
			op.p[i] = float32(p)
		}
		if op.spiking {
			op.th[i] = float32(at(vth, i) - vl)
			op.rs[i] = float32(at(vreset, i) - vl)
			op.sub[i] = float32(at(vth, i) - at(vreset, i))
		}
	}
	if refr != nil {
		op.refSteps = make([]int32, n)
		any := false
		for i := range op.refSteps {
			k := int32(math.Ceil(atOr(refr, i, 0)/dt - 1e-9))
			if k < 0 {
				k = 0
			}
			op.refSteps[i] = k
			any = any || k > 0
		}
		if any {
			op.refUntil = make([]int64, sn.batch*n)
			op.refList = make([]refQueue, sn.batch)
			op.clock = make([]int64, sn.batch)
			op.stale = make([]bool, sn.batch)
		} else {
			op.refSteps = nil
		}
	}
	op.uniform = allEqual(op.a) && allEqual(op.c) && allEqual(op.th) && allEqual(op.rs) && allEqual(op.sub)
	if op.mode == modeCuba {
		op.uniform = op.uniform && allEqual(op.as) && allEqual(op.wj) && allEqual(op.p)
		op.uas, op.uwj, op.up = op.as[0], op.wj[0], op.p[0]
	}
	op.ua, op.uc, op.uth = op.a[0], op.c[0], op.th[0]
	op.u = make([]float32, sn.batch*n)
	if op.spiking {
		op.frozen = make([]uint64, sn.batch*op.words())
	}
	if !op.spiking {
		// A non-spiking neuron outputs its membrane v = u + v_leak; with no
		// leak potential that is u itself, so the buffers are shared.
		op.leakFree = allEqual(op.vleak) && op.vleak[0] == 0
		if op.leakFree {
			op.u = sn.out
		}
	}
	sn.spiking = op.spiking
	return op
}

func allEqual(xs []float32) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// words is the length of a slot's frozen bits.
func (op *neuronOp) words() int { return (op.n + 63) / 64 }

// frozenOf is the slot's frozen bits.
func (op *neuronOp) frozenOf(slot int) []uint64 {
	w := op.words()
	return op.frozen[slot*w : (slot+1)*w]
}

func (op *neuronOp) reset(sn *simNode, slot int) {
	lo, hi := slot*op.n, (slot+1)*op.n
	clear(op.u[lo:hi])
	if op.syn != nil {
		clear(op.syn[lo:hi])
	}
	if op.frozen != nil {
		clear(op.frozenOf(slot))
	}
	if op.refUntil != nil {
		clear(op.refUntil[lo:hi])
		op.clock[slot] = 0
		op.refList[slot].clear()
		op.stale[slot] = false
	}
}

func (op *neuronOp) step(s *Simulator, sn *simNode, c *Counters) {
	op.onePass = op.chain[0] != nil || (isa != isaGo && op.fusable(sn))
	if op.onePass && op.cands == nil {
		op.cands = make([][]int32, s.parts())
		for part := range op.cands {
			op.cands[part] = make([]int32, op.n)
		}
	}
	if !op.onePass {
		op.x = sn.gatherInput()
	}
	if s.pool == nil {
		op.stepSlots(s, sn, 0, sn.batch, 0, c)
	} else {
		// A neuron's update costs about as much as a few multiply-adds.
		s.stepSlots(op, sn, &op.job, 4*op.n*s.activeSlots(), c)
	}
	op.count(s, sn, c)
	for _, l := range op.chain {
		if l != nil {
			l.op.(*neuronOp).count(s, l, c)
		}
	}
}

// stepSlots is step for slots lo:hi: the fused update (stepFused) or the
// separate passes over op.x, the summed input.
func (op *neuronOp) stepSlots(s *Simulator, sn *simNode, lo, hi, part int, c *Counters) {
	if op.onePass {
		op.stepFused(s, sn, lo, hi, part, c)
		return
	}
	n := op.n
	for slot := lo; slot < hi; slot++ {
		if s.idle(slot) {
			continue
		}
		a, z := slot*n, (slot+1)*n
		u, xs := op.u[a:z], op.x[a:z]
		switch {
		case op.mode == modeCuba && op.uniform:
			syn := op.syn[a:z]
			axpy(op.uwj, xs, syn)
			axpby(op.ua, u, op.up, syn)
			scal(op.uas, syn)
		case op.mode == modeCuba:
			syn := op.syn[a:z]
			for i := range u {
				j := syn[i] + op.wj[i]*xs[i]
				u[i] = op.a[i]*u[i] + op.p[i]*j
				syn[i] = op.as[i] * j
			}
		case op.uniform:
			axpby(op.ua, u, op.uc, xs)
		default:
			a, cc := op.a[:n], op.c[:n]
			for i := range u {
				u[i] = a[i]*u[i] + cc[i]*xs[i]
			}
		}
		if op.refList != nil {
			op.holdRefractory(slot, u)
		}
		if op.spiking {
			c.Spikes += int64(op.fire(sn, slot, u, nil))
		} else if !op.leakFree {
			out := sn.out[a:z]
			for i, ui := range u {
				out[i] = ui + op.vleak[i]
			}
		}
	}
}

func (op *neuronOp) count(s *Simulator, sn *simNode, c *Counters) {
	if op.spiking {
		sn.activeStep = s.step
		c.SpikingUpdates += int64(op.n * s.activeSlots())
	}
	c.NeuronUpdates += int64(op.n * s.activeSlots())
}

// fusable says whether the node's step can run as lifUpdate: a spiking
// neuron with the same coefficients everywhere, no synaptic current, and
// one or two inputs (the CUBA network's excitatory and inhibitory
// conductances, say).
func (op *neuronOp) fusable(sn *simNode) bool {
	return op.spiking && op.uniform && op.mode != modeCuba && len(sn.srcs) >= 1 && len(sn.srcs) <= 2
}

// stepFused is step for slots lo:hi of a fusable node: the input sum,
// the update and the threshold test in one pass (lifUpdate or lifChain),
// with the same results; cands[part] holds the candidates to fire.
func (op *neuronOp) stepFused(s *Simulator, sn *simNode, lo, hi, part int, c *Counters) {
	n := op.n
	x1 := sn.srcs[0].buf(sn)
	var x2 []float32
	if len(sn.srcs) == 2 {
		x2 = sn.srcs[1].buf(sn)
	}
	cand := op.cands[part]
	for slot := lo; slot < hi; slot++ {
		if s.idle(slot) {
			continue
		}
		a, z := slot*n, (slot+1)*n
		u := op.u[a:z]
		frozen := op.frozenOf(slot)
		if op.stale != nil && op.stale[slot] {
			op.restoreHeld(slot, u)
			op.stale[slot] = false
		}
		var b []float32
		if x2 != nil {
			b = x2[a:z]
		}
		l1, l2 := op.chain[0], op.chain[1]
		owed := op.owed != nil && op.owed[slot]
		var k int // the candidates to fire, in cand
		switch {
		case l1 != nil && (owed || !op.late[0]) && (owed || !op.late[1]):
			o1, o2 := l1.op.(*neuronOp), l2.op.(*neuronOp)
			in1, in2 := l1.srcs[0].buf(l1), l2.srcs[0].buf(l2)
			k = lifChain(o1.ua, o1.uc, o2.ua, o2.uc, op.ua, op.uc, op.uth,
				x1[a:z], in1[a:z], b, in2[a:z], u, frozen, cand)
		case l1 != nil: // the late ones were settled since the last step
			op.integrate(slot, false)
			fallthrough
		default:
			k = lifUpdate(op.ua, op.uc, op.uth, u, x1[a:z], b, frozen, cand)
		}
		if op.owed != nil {
			op.owed[slot] = true // this step's late updates, paid at the next
		}
		if op.refList != nil {
			op.release(slot)
		}
		c.Spikes += int64(op.fire(sn, slot, u, cand[:k]))
	}
}

// fuseChains finds the spiking nodes whose fused step can also update
// their two inputs, as CUBA's LIF population and its conductances ge and
// gi: leaky integrators (LI or I, no leak potential, the same coefficients
// everywhere) that the neuron alone reads and that read one other node.
// An integrator stepped before the neuron (its edge to the neuron is not
// delayed) is updated in the neuron's step instead: its input has been
// computed by then and nothing reads it in between. One the neuron reads
// through the delayed edge of a cycle, stepped after it, must read a node
// also stepped after the neuron; its update for step t moves into the
// neuron's step t+1, where its input still holds the step-t value, and
// until then it owes that update: settle applies it for anyone who looks
// at it in between (State, NodeOutput, ...). Either way every value is the
// same as stepping the integrators in place. Only with assembly kernels:
// the portable fused loop is slower than the separate passes.
func (s *Simulator) fuseChains() {
	if isa == isaGo {
		return
	}
	readers := map[*simNode]int{}
	pos := map[*simNode]int{}
	for i, sn := range s.nodes {
		pos[sn] = i
		for _, src := range sn.srcs {
			readers[src.node]++
		}
	}
	for _, p := range s.nodes {
		op, ok := p.op.(*neuronOp)
		if !ok || !op.fusable(p) || len(p.srcs) != 2 || p.srcs[0].node == p.srcs[1].node {
			continue
		}
		var chain [2]*simNode
		var late [2]bool
		for k, src := range p.srcs {
			l, ok := src.node.op.(*neuronOp)
			if !ok || src.node == p || l.spiking || !l.leakFree || !l.uniform || l.mode == modeCuba ||
				l.fused || readers[src.node] != 1 || len(src.node.srcs) != 1 {
				break
			}
			in := src.node.srcs[0]
			if in.delayed || in.node == src.node || (src.delayed && pos[in.node] <= pos[p]) {
				break
			}
			chain[k], late[k] = src.node, src.delayed
		}
		if chain[0] != nil && chain[1] != nil {
			op.chain, op.late = chain, late
			if late[0] || late[1] {
				op.owed = make([]bool, p.batch)
				s.chains = append(s.chains, p)
			}
			chain[0].op.(*neuronOp).fused = true
			chain[1].op.(*neuronOp).fused = true
		}
	}
}

// settle applies the integrator updates that fused chains owe, so that
// their states and outputs are those of the steps taken.
func (s *Simulator) settle() {
	for _, p := range s.chains {
		op := p.op.(*neuronOp)
		for slot, owed := range op.owed {
			if owed {
				op.integrate(slot, true)
				op.owed[slot] = false
			}
		}
	}
}

// integrate updates one slot of the chain's integrators: the late ones
// (owing their last step) or the others.
func (op *neuronOp) integrate(slot int, late bool) {
	for k, l := range op.chain {
		if op.late[k] != late {
			continue
		}
		lo := l.op.(*neuronOp)
		a, b := slot*lo.n, (slot+1)*lo.n
		axpby(lo.ua, lo.u[a:b], lo.uc, l.srcs[0].buf(l)[a:b])
	}
}

// holdRefractory restores the neurons held after a spike to their held
// values, after an update that changed them, and then releases those
// whose time is up (release).
func (op *neuronOp) holdRefractory(slot int, u []float32) {
	op.restoreHeld(slot, u)
	op.release(slot)
}

// restoreHeld sets the slot's held neurons to their held values.
func (op *neuronOp) restoreHeld(slot int, u []float32) {
	for _, e := range op.refList[slot].held() {
		u[e.idx] = e.hold
	}
}

// release advances the slot's clock and releases the held neurons whose
// time is up: they keep the held value this step and update from the
// next.
func (op *neuronOp) release(slot int) {
	op.clock[slot]++
	now := op.clock[slot]
	q, frozen := &op.refList[slot], op.frozenOf(slot)
	for q.head < len(q.e) && q.e[q.head].until <= now {
		i := q.e[q.head].idx
		frozen[i>>6] &^= 1 << (i & 63)
		q.head++
	}
	if q.head == len(q.e) {
		q.clear()
	}
}

// fire tests the threshold, resets the neurons that crossed it and records
// them as the slot's active list. It returns the number of spikes. A
// non-nil cand holds the threshold test already done (lifUpdate): the
// neurons above it.
func (op *neuronOp) fire(sn *simNode, slot int, u []float32, cand []int32) int {
	out := sn.out[slot*op.n : (slot+1)*op.n]
	for _, j := range sn.active[slot] {
		out[j] = 0
	}
	act := sn.active[slot][:0]
	// The neurons still held (now < until) cannot fire: after release,
	// those are the frozen ones.
	var until []int64
	var now int64
	var held []uint64
	if op.refUntil != nil {
		until, now, held = op.refUntil[slot*op.n:(slot+1)*op.n], op.clock[slot], op.frozenOf(slot)
	}
	if cand != nil {
		for _, i := range cand {
			if held == nil || held[i>>6]&(1<<(i&63)) == 0 {
				act = append(act, i)
			}
		}
	} else if op.uniform {
		th := op.uth
		for i := nextAbove(u, th, 0); i < len(u); i = nextAbove(u, th, i+1) {
			if held == nil || held[i>>6]&(1<<(i&63)) == 0 {
				act = append(act, int32(i))
			}
		}
	} else {
		th := op.th[:len(u)]
		for i := range u {
			if u[i] > th[i] && (held == nil || held[i>>6]&(1<<(i&63)) == 0) {
				act = append(act, int32(i))
			}
		}
	}
	for _, j := range act {
		out[j] = 1
		if op.subtract {
			u[j] -= op.sub[j]
		} else {
			u[j] = op.rs[j]
		}
		if until != nil && op.refSteps[j] > 0 {
			until[j] = now + int64(op.refSteps[j])
			op.refList[slot].push(refEntry{idx: j, hold: u[j], until: until[j]})
			op.frozen[slot*op.words()+int(j>>6)] |= 1 << (j & 63)
		}
	}
	sn.active[slot] = act
	return len(act)
}
