package snn

import (
	"fmt"
	"math"
)

func (s *Simulator) compileNode(node Node, sn *simNode, sh Shape) (operator, error) {
	switch x := node.(type) {
	case *Input:
		return inputOp{}, nil
	case *Output, *Flatten:
		return passOp{}, nil
	case *Linear:
		return newLinearOp(x.Weight, nil, s.opts.SparseDensity, s.opts.Weights), nil
	case *Affine:
		return newLinearOp(x.Weight, x.Bias, s.opts.SparseDensity, s.opts.Weights), nil
	case *Scale:
		return &scaleOp{s: broadcast32(x.Scale, sn.n)}, nil
	case *Conv2d:
		return newConvOp(x.Weight, x.Bias, x.InputShape, x.Stride, x.Padding, x.Dilation, x.Groups), nil
	case *Conv1d:
		w := &Tensor{Shape: []int{x.Weight.Shape[0], x.Weight.Shape[1], 1, x.Weight.Shape[2]}, Data: x.Weight.Data}
		in := []int{x.InputShape[0], 1, x.InputShape[1]}
		return newConvOp(w, x.Bias, in, [2]int{1, x.Stride}, [2]int{0, x.Padding}, [2]int{1, x.Dilation}, x.Groups), nil
	case *SumPool2d:
		return newPoolOp(sh.In, x.Kernel, x.Stride, x.Padding, 1), nil
	case *AvgPool2d:
		return newPoolOp(sh.In, x.Kernel, x.Stride, x.Padding, 1/float32(x.Kernel[0]*x.Kernel[1])), nil
	case *Delay:
		return newDelayOp(x.Delay, sn, s.opts.Dt), nil
	case *Threshold:
		sn.spiking = true
		th := make([]float32, sn.n)
		for i := range th {
			th[i] = float32(at(x.Threshold, i))
		}
		return &thresholdOp{th: th}, nil
	case *I, *IF, *LI, *LIF, *CubaLI, *CubaLIF:
		return s.newNeuronOp(node, sn), nil
	}
	return nil, fmt.Errorf("unsupported node type %T", node)
}

func broadcast32(xs []float32, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		if len(xs) == 1 {
			out[i] = xs[0]
		} else {
			out[i] = xs[i]
		}
	}
	return out
}

// inputOp: the user writes the buffer.
type inputOp struct{}

func (inputOp) step(*Simulator, *simNode, *Counters) {}
func (inputOp) reset(*simNode, int)                  {}

// passOp copies the sum of its inputs: Output and Flatten (values are
// stored flat, so flattening moves nothing).
type passOp struct{}

func (passOp) step(_ *Simulator, sn *simNode, _ *Counters) {
	if len(sn.srcs) == 1 {
		copy(sn.out, sn.srcs[0].buf(sn))
		return
	}
	clear(sn.out)
	for _, src := range sn.srcs {
		addTo(sn.out, src.buf(sn))
	}
}
func (passOp) reset(*simNode, int) {}

type scaleOp struct{ s []float32 }

func (op *scaleOp) step(s *Simulator, sn *simNode, _ *Counters) {
	x := sn.gatherInput()
	for slot := 0; slot < sn.batch; slot++ {
		if s.idle(slot) {
			continue
		}
		o, xs := sn.out[slot*sn.n:(slot+1)*sn.n], x[slot*sn.n:(slot+1)*sn.n]
		for i, sc := range op.s {
			o[i] = sc * xs[i]
		}
	}
}
func (op *scaleOp) reset(*simNode, int) {}

type thresholdOp struct{ th []float32 }

func (op *thresholdOp) step(s *Simulator, sn *simNode, c *Counters) {
	x := sn.gatherInput()
	for slot := 0; slot < sn.batch; slot++ {
		if s.idle(slot) {
			continue
		}
		o, xs := sn.out[slot*sn.n:(slot+1)*sn.n], x[slot*sn.n:(slot+1)*sn.n]
		act := sn.active[slot][:0]
		for i, th := range op.th {
			if xs[i] > th {
				o[i] = 1
				act = append(act, int32(i))
			} else {
				o[i] = 0
			}
		}
		sn.active[slot] = act
		c.Spikes += int64(len(act))
		c.NeuronUpdates += int64(sn.n)
		c.SpikingUpdates += int64(sn.n)
	}
	sn.activeStep = s.step
}
func (op *thresholdOp) reset(*simNode, int) {}

// linearOp is y = W·x (+ b). The weight is kept transposed (in × out), so
// that the column of one input is contiguous: an active input adds its
// column to the output (the event-driven path), and a dense input is a
// transposed matrix-vector product (gemvT). Sparse weights are kept as
// compressed columns instead.
type linearOp struct {
	nin, nout int
	wt        []float32 // in × out; nil when sparse or in bfloat16
	wb        []uint16  // in × out in bfloat16 (Options.Weights); else nil
	wq        []int8    // in × out in int8 (Options.Weights); else nil
	qstep     []float32 // per input: the step of its int8 weights
	xq        []float32 // scratch, batch × in: the dense slots' inputs times the steps
	cols      *columns  // sparse weights; else nil
	// occupied has bit j set where column j has a non-zero weight (sparse
	// only): an input whose column is empty, as an excitatory neuron's
	// column of the inhibitory synapses, is passed over without a look at
	// its start in cols, which would cost a cache miss for nothing.
	occupied []uint64
	fanout   []int32   // non-zero weights per input
	coef     []float32 // scratch, in: the values of one slot's active inputs (wt only)
	bias     []float32
	dense    []int // scratch: the slots whose input takes the dense path this step
	groups   int   // the first 4·groups slots of dense run four at a time (gemm4T)
	// lastCols holds, per slot, the input columns whose rows are the only
	// non-zero outputs, when the last step wrote the outputs from one
	// source through the sparse event path: the next step then zeroes just
	// those rows instead of the whole output (lastOK).
	lastCols [][]int32
	lastOK   []bool
	job      denseJob  // the column ranges shared with the pool
	xi       []float32 // scratch: their inputs, interleaved four by four
	// evSlots are the slots whose event-driven product (gatherT) is left
	// to eventProduct, to share among the pool's workers; evWork counts
	// their active inputs, and coefs (batch × in) holds their values.
	evSlots []evSlot
	evWork  int
	coefs   []float32
}

// evSlot is one slot's event-driven product: its active inputs.
type evSlot struct {
	slot int
	list []int32
}

func newLinearOp(w *Tensor, bias []float32, sparseDensity float64, prec Precision) *linearOp {
	nout, nin := w.Shape[0], w.Shape[1]
	op := &linearOp{nin: nin, nout: nout, bias: bias, fanout: make([]int32, nin)}
	nnz := 0
	for r := 0; r < nout; r++ {
		for j, v := range w.Data[r*nin : (r+1)*nin] {
			if v != 0 {
				op.fanout[j]++
				nnz++
			}
		}
	}
	if float64(nnz) <= sparseDensity*float64(nin*nout) {
		op.occupied = make([]uint64, (nin+63)/64)
		for j, f := range op.fanout {
			if f != 0 {
				op.occupied[j>>6] |= 1 << (j & 63)
			}
		}
		op.cols = newColumns(w.Data, nout, nin, op.fanout, nnz)
		return op
	}
	if prec == Int8 {
		op.wq, op.qstep = make([]int8, nin*nout), make([]float32, nin)
		quantizeInt8(w.Data, nout, nin, op.wq, op.qstep)
		return op
	}
	if prec == BFloat16 {
		op.wb = make([]uint16, nin*nout)
		for r := 0; r < nout; r++ {
			for j, v := range w.Data[r*nin : (r+1)*nin] {
				op.wb[j*nout+r] = toBF16(v)
			}
		}
		return op
	}
	op.wt, op.coef = make([]float32, nin*nout), make([]float32, nin)
	for r := 0; r < nout; r++ {
		for j, v := range w.Data[r*nin : (r+1)*nin] {
			op.wt[j*nout+r] = v
		}
	}
	return op
}

func (op *linearOp) step(s *Simulator, sn *simNode, c *Counters) {
	for slot := 0; slot < sn.batch; slot++ {
		if s.idle(slot) {
			continue
		}
		y := sn.out[slot*op.nout : (slot+1)*op.nout]
		switch {
		case op.bias != nil:
			copy(y, op.bias)
		case op.lastOK != nil && op.lastOK[slot]:
			for _, j := range op.lastCols[slot] {
				op.cols.zero(y, j)
			}
		default:
			clear(y)
		}
	}
	track := op.cols != nil && op.bias == nil && len(sn.srcs) == 1
	if track && op.lastOK == nil {
		op.lastCols, op.lastOK = make([][]int32, sn.batch), make([]bool, sn.batch)
	}
	for _, src := range sn.srcs {
		xs := src.buf(sn)
		op.dense = op.dense[:0]
		op.evSlots, op.evWork = op.evSlots[:0], 0
		for slot := 0; slot < sn.batch; slot++ {
			if s.idle(slot) {
				continue
			}
			x := xs[slot*op.nin : (slot+1)*op.nin]
			y := sn.out[slot*op.nout : (slot+1)*op.nout]
			list, ok := s.eventList(src, sn, slot)
			switch {
			case ok && op.wt != nil && s.pool != nil && float64(len(list)) <= s.opts.EventFraction*float64(op.nin):
				for _, j := range list {
					c.SynapticOps += int64(op.fanout[j])
				}
				op.evSlots = append(op.evSlots, evSlot{slot, list})
				op.evWork += len(list)
			case ok && (op.cols != nil || float64(len(list)) <= s.opts.EventFraction*float64(op.nin)):
				c.SynapticOps += op.events(list, x, y)
				if track {
					op.lastCols[slot], op.lastOK[slot] = op.appendOccupied(op.lastCols[slot][:0], list), true
				}
			case op.cols != nil:
				c.SynapticOps += op.sparseDense(x, y)
				if track {
					op.lastOK[slot] = false
				}
			default:
				c.SynapticOps += op.fanoutOf(x)
				op.dense = append(op.dense, slot)
			}
		}
		if len(op.evSlots) > 0 {
			op.eventProduct(s.pool, xs, sn.out)
		}
		if len(op.dense) > 0 {
			op.denseProduct(s.pool, xs, sn.out)
		}
	}
}

// eventProduct runs the event-driven products of op.evSlots, sharing the
// slots among the pool's workers when there are enough multiply-adds,
// each part about the same number of active inputs. Each slot's sums are
// those of events, whoever runs them.
func (op *linearOp) eventProduct(p *pool, xs, ys []float32) {
	if len(op.coefs) < len(xs) {
		op.coefs = make([]float32, len(xs))
	}
	parts := 1
	if op.evWork*op.nout >= parallelMin {
		parts = min(p.n+1, len(op.evSlots))
	}
	if parts == 1 {
		op.eventRange(xs, ys, 0, len(op.evSlots))
		return
	}
	j := &op.job
	j.reset()
	j.tasks = j.tasks[:0]
	own := -1 // the end of the stepping goroutine's part, the first
	lo, done, part := 0, 0, 1
	for k, e := range op.evSlots {
		done += len(e.list)
		if done*parts < part*op.evWork && k < len(op.evSlots)-1 {
			continue // the part has less than its share
		}
		if own < 0 {
			own = k + 1
		} else {
			j.tasks = append(j.tasks, denseTask{op: op, xs: xs, ys: ys, c0: lo, c1: k + 1, events: true})
		}
		lo, part = k+1, part+1
	}
	p.run(j, func() { op.eventRange(xs, ys, 0, own) })
}

// eventRange runs the event-driven products of op.evSlots[k0:k1].
func (op *linearOp) eventRange(xs, ys []float32, k0, k1 int) {
	for _, e := range op.evSlots[k0:k1] {
		x := xs[e.slot*op.nin : (e.slot+1)*op.nin]
		a := op.coefs[e.slot*op.nin:][:len(e.list)]
		for k, j := range e.list {
			a[k] = x[j]
		}
		gatherT(ys[e.slot*op.nout:(e.slot+1)*op.nout], op.wt, a, e.list, op.nout)
	}
}

// denseProduct adds W·x to y for the slots in op.dense, sharing the output
// columns among the pool's workers when the product is large enough.
func (op *linearOp) denseProduct(p *pool, xs, ys []float32) {
	if op.wq != nil {
		if len(op.xq) < len(xs) {
			op.xq = make([]float32, len(xs))
		}
		for _, slot := range op.dense {
			lo, hi := slot*op.nin, (slot+1)*op.nin
			mul(op.xq[lo:hi], xs[lo:hi], op.qstep)
		}
		xs = op.xq
	}
	op.groups = 0
	if isa != isaGo {
		op.groups = len(op.dense) / 4
	}
	if need := op.groups * 4 * op.nin; len(op.xi) < need {
		op.xi = make([]float32, need)
	}
	for g := range op.groups {
		x := op.slotInputs(xs, op.dense[4*g:4*g+4])
		interleave4(op.xi[4*g*op.nin:], &x)
	}
	parts := 1
	if p != nil && op.nin*op.nout*len(op.dense) >= parallelMin {
		parts = min(p.n+1, (op.nout+63)/64)
	}
	if parts == 1 {
		op.denseRange(xs, ys, 0, op.nout)
		return
	}
	per := ((op.nout+parts-1)/parts + 63) &^ 63 // whole 64-column blocks
	parts = (op.nout + per - 1) / per
	j := &op.job
	j.reset()
	j.tasks = j.tasks[:0]
	for i := 1; i < parts; i++ {
		j.tasks = append(j.tasks, denseTask{op: op, xs: xs, ys: ys, c0: i * per, c1: min((i+1)*per, op.nout)})
	}
	p.run(j, func() { op.denseRange(xs, ys, 0, min(per, op.nout)) })
}

// denseRange adds columns [c0, c1) of W·x to y for every slot in
// op.dense. Groups of four slots (op.groups, with assembly) run in one
// gemm4T, which loads each weight once for the four. Of the rest, one slot
// is one gemvT; several go 64 or 128 output columns at a time, so the
// slots share each block of the weights while it is in the cache instead
// of each slot streaming the whole matrix. Every path gives the same sums.
func (op *linearOp) denseRange(xs, ys []float32, c0, c1 int) {
	for g := range op.groups {
		slots := op.dense[4*g : 4*g+4]
		x := op.slotInputs(xs, slots)
		var y [4][]float32
		for s, slot := range slots {
			y[s] = ys[slot*op.nout+c0 : slot*op.nout+c1]
		}
		xi := op.xi[4*g*op.nin : 4*(g+1)*op.nin]
		switch {
		case op.wq != nil:
			gemm4TI8(&y, &x, xi, op.wq[c0:], op.nout)
		case op.wb != nil:
			gemm4TBF16(&y, &x, xi, op.wb[c0:], op.nout)
		default:
			gemm4T(&y, &x, xi, op.wt[c0:], op.nout)
		}
	}
	block := 64
	if isa == isaAVX512 {
		block = 128 // the kernel's widest block; the sums are the same
	}
	if len(op.dense)-4*op.groups == 1 {
		block = c1 - c0
	}
	for b0 := c0; b0 < c1; b0 += block {
		b1 := min(b0+block, c1)
		for _, slot := range op.dense[4*op.groups:] {
			y, x := ys[slot*op.nout+b0:slot*op.nout+b1], xs[slot*op.nin:(slot+1)*op.nin]
			switch {
			case op.wq != nil:
				gemvTI8(y, op.wq[b0:], x, op.nout)
			case op.wb != nil:
				gemvTBF16(y, op.wb[b0:], x, op.nout)
			default:
				gemvT(y, op.wt[b0:], x, op.nout)
			}
		}
	}
}

// slotInputs returns the inputs of four slots.
func (op *linearOp) slotInputs(xs []float32, slots []int) [4][]float32 {
	var x [4][]float32
	for s, slot := range slots[:4] {
		x[s] = xs[slot*op.nin : (slot+1)*op.nin]
	}
	return x
}

// events adds the columns of the active inputs, scaled by their values.
func (op *linearOp) events(list []int32, x, y []float32) int64 {
	var ops int64
	if op.wq != nil {
		for _, j := range list {
			axpyI8(x[j]*op.qstep[j], op.wq[int(j)*op.nout:(int(j)+1)*op.nout], y)
			ops += int64(op.fanout[j])
		}
		return ops
	}
	if op.wb != nil {
		for _, j := range list {
			axpyBF16(x[j], op.wb[int(j)*op.nout:(int(j)+1)*op.nout], y)
			ops += int64(op.fanout[j])
		}
		return ops
	}
	if op.wt != nil {
		if len(list) > len(op.coef) { // a list holds each input once
			op.coef = make([]float32, len(list))
		}
		a := op.coef[:len(list)]
		for k, j := range list {
			a[k] = x[j]
			ops += int64(op.fanout[j])
		}
		gatherT(y, op.wt, a, list, op.nout)
		return ops
	}
	for _, j := range list {
		if op.occupied[j>>6]&(1<<(j&63)) == 0 {
			continue
		}
		op.cols.add(y, j, x[j])
		ops += int64(op.fanout[j])
	}
	return ops
}

// appendOccupied appends to dst the inputs of list whose columns are not
// empty (sparse only).
func (op *linearOp) appendOccupied(dst, list []int32) []int32 {
	for _, j := range list {
		if op.occupied[j>>6]&(1<<(j&63)) != 0 {
			dst = append(dst, j)
		}
	}
	return dst
}

func (op *linearOp) sparseDense(x, y []float32) int64 {
	var ops int64
	for j, xj := range x {
		if xj == 0 {
			continue
		}
		op.cols.add(y, int32(j), xj)
		ops += int64(op.fanout[j])
	}
	return ops
}

func (op *linearOp) fanoutOf(x []float32) int64 {
	var ops int64
	for j, xj := range x {
		if xj != 0 {
			ops += int64(op.fanout[j])
		}
	}
	return ops
}

func (op *linearOp) reset(*simNode, int) {}

// convOp is a grouped 2-D convolution (Conv1d runs as one with height 1),
// computed by scattering each non-zero input into the outputs it reaches:
// the same code serves spikes (few non-zeros) and graded values.
type convOp struct {
	inC, inSp, outC, outSp int
	groups, icPer, ocPer   int
	ksz                    int
	// taps[p] lists, for input position p, the (kernel index, output
	// position) pairs it contributes to.
	tapStart []int32
	taps     []convTap
	// wk[(ci·ksz + k)·ocPer + o]: weight from input channel ci (within its
	// group), kernel position k, to output channel o of that group.
	wk   []float32
	bias []float32
	// biasMap is the bias at every output (outC × outSp), what each step
	// starts from: one copy instead of a fill per channel.
	biasMap []float32
	job     denseJob // the step's slot ranges (Simulator.stepSlots)
}

type convTap struct{ k, opos int32 }

func newConvOp(w *Tensor, bias []float32, in []int, stride, pad, dil [2]int, groups int) *convOp {
	oc, icPer, kh, kw := w.Shape[0], w.Shape[1], w.Shape[2], w.Shape[3]
	ih, iw := in[1], in[2]
	oh := convOut(ih, kh, stride[0], pad[0], dil[0])
	ow := convOut(iw, kw, stride[1], pad[1], dil[1])
	op := &convOp{inC: in[0], inSp: ih * iw, outC: oc, outSp: oh * ow, groups: groups, icPer: icPer, ocPer: oc / groups, ksz: kh * kw, bias: bias}
	op.tapStart = make([]int32, ih*iw+1)
	for p := 0; p < ih*iw; p++ {
		y, x := p/iw, p%iw
		for ky := 0; ky < kh; ky++ {
			for kx := 0; kx < kw; kx++ {
				ny := y + pad[0] - ky*dil[0]
				nx := x + pad[1] - kx*dil[1]
				if ny < 0 || nx < 0 || ny%stride[0] != 0 || nx%stride[1] != 0 {
					continue
				}
				oy, ox := ny/stride[0], nx/stride[1]
				if oy >= oh || ox >= ow {
					continue
				}
				op.taps = append(op.taps, convTap{int32(ky*kw + kx), int32(oy*ow + ox)})
			}
		}
		op.tapStart[p+1] = int32(len(op.taps))
	}
	op.wk = make([]float32, len(w.Data))
	for o := 0; o < oc; o++ {
		g, og := o/op.ocPer, o%op.ocPer
		_ = g
		for ci := 0; ci < icPer; ci++ {
			for k := 0; k < op.ksz; k++ {
				op.wk[((o/op.ocPer)*icPer*op.ksz+ci*op.ksz+k)*op.ocPer+og] = w.Data[(o*icPer+ci)*op.ksz+k]
			}
		}
	}
	if bias != nil {
		op.biasMap = make([]float32, op.outC*op.outSp)
		for o := 0; o < op.outC; o++ {
			fill(op.biasMap[o*op.outSp:(o+1)*op.outSp], bias[o])
		}
	}
	return op
}

func (op *convOp) step(s *Simulator, sn *simNode, c *Counters) {
	nin := op.inC * op.inSp
	active := 0 // the inputs to scatter, over the slots
	for _, src := range sn.srcs {
		for slot := 0; slot < sn.batch; slot++ {
			if s.idle(slot) {
				continue
			}
			list, ok := s.eventList(src, sn, slot) // scanned here, read in stepSlots
			if !ok {
				active += nin
				continue
			}
			active += len(list)
		}
	}
	s.stepSlots(op, sn, &op.job, active*op.ksz*op.ocPer, c)
}

// stepSlots is step for slots lo:hi.
func (op *convOp) stepSlots(s *Simulator, sn *simNode, lo, hi, _ int, c *Counters) {
	nin := op.inC * op.inSp
	for slot := lo; slot < hi; slot++ {
		if s.idle(slot) {
			continue
		}
		y := sn.out[slot*sn.n : (slot+1)*sn.n]
		if op.bias != nil {
			copy(y, op.biasMap)
		} else {
			clear(y)
		}
		for _, src := range sn.srcs {
			x := src.buf(sn)[slot*nin : (slot+1)*nin]
			if list, ok := s.eventList(src, sn, slot); ok {
				for _, j := range list {
					c.SynapticOps += op.scatter(int(j), x[j], y)
				}
				continue
			}
			for j, v := range x {
				if v != 0 {
					c.SynapticOps += op.scatter(j, v, y)
				}
			}
		}
	}
}

// scatter adds input element j (channel-major index) with value v to every
// output it reaches.
func (op *convOp) scatter(j int, v float32, y []float32) int64 {
	ci, p := j/op.inSp, j%op.inSp
	g, cig := ci/op.icPer, ci%op.icPer
	taps := op.taps[op.tapStart[p]:op.tapStart[p+1]]
	base := (g*op.icPer + cig) * op.ksz
	ocBase := g * op.ocPer
	for _, t := range taps {
		w := op.wk[(base+int(t.k))*op.ocPer : (base+int(t.k)+1)*op.ocPer]
		yo := y[ocBase*op.outSp+int(t.opos):]
		for o, wv := range w {
			yo[o*op.outSp] += v * wv
		}
	}
	return int64(len(taps) * op.ocPer)
}

func (op *convOp) reset(*simNode, int) {}

func fill(xs []float32, v float32) {
	for i := range xs {
		xs[i] = v
	}
}

// poolOp sums (scale 1) or averages (scale 1/kernel area) windows, by
// scattering non-zero inputs like convOp.
type poolOp struct {
	c, inSp, outSp int
	tapStart       []int32
	taps           []int32 // output positions
	scale          float32
}

func newPoolOp(in []int, k, stride, pad [2]int, scale float32) *poolOp {
	ih, iw := in[1], in[2]
	oh := convOut(ih, k[0], stride[0], pad[0], 1)
	ow := convOut(iw, k[1], stride[1], pad[1], 1)
	op := &poolOp{c: in[0], inSp: ih * iw, outSp: oh * ow, scale: scale, tapStart: make([]int32, ih*iw+1)}
	for p := 0; p < ih*iw; p++ {
		y, x := p/iw, p%iw
		for ky := 0; ky < k[0]; ky++ {
			for kx := 0; kx < k[1]; kx++ {
				ny, nx := y+pad[0]-ky, x+pad[1]-kx
				if ny < 0 || nx < 0 || ny%stride[0] != 0 || nx%stride[1] != 0 {
					continue
				}
				oy, ox := ny/stride[0], nx/stride[1]
				if oy < oh && ox < ow {
					op.taps = append(op.taps, int32(oy*ow+ox))
				}
			}
		}
		op.tapStart[p+1] = int32(len(op.taps))
	}
	return op
}

func (op *poolOp) step(s *Simulator, sn *simNode, c *Counters) {
	nin := op.c * op.inSp
	for slot := 0; slot < sn.batch; slot++ {
		if s.idle(slot) {
			continue
		}
		y := sn.out[slot*sn.n : (slot+1)*sn.n]
		clear(y)
		for _, src := range sn.srcs {
			x := src.buf(sn)[slot*nin : (slot+1)*nin]
			list, ok := s.eventList(src, sn, slot)
			if ok {
				for _, j := range list {
					c.SynapticOps += op.scatter(int(j), x[j], y)
				}
				continue
			}
			for j, v := range x {
				if v != 0 {
					c.SynapticOps += op.scatter(j, v, y)
				}
			}
		}
	}
}

func (op *poolOp) scatter(j int, v float32, y []float32) int64 {
	ch, p := j/op.inSp, j%op.inSp
	taps := op.taps[op.tapStart[p]:op.tapStart[p+1]]
	yc := y[ch*op.outSp : (ch+1)*op.outSp]
	v *= op.scale
	for _, o := range taps {
		yc[o] += v
	}
	return int64(len(taps))
}

func (op *poolOp) reset(*simNode, int) {}

// delayOp keeps the last maxDelay+1 inputs in a ring per slot, with a
// position per slot: an idle slot's ring stands still (SetActive), so
// after it it reads the inputs of its own last active steps.
type delayOp struct {
	steps []int32 // per element
	ring  []float32
	depth int   // ring length in steps
	pos   []int // per slot
	n     int
}

func newDelayOp(d []float64, sn *simNode, dt float64) *delayOp {
	op := &delayOp{steps: make([]int32, sn.n), n: sn.n, pos: make([]int, sn.batch)}
	maxd := 0
	for i := range op.steps {
		k := int(math.Round(at(d, i) / dt))
		op.steps[i] = int32(k)
		maxd = max(maxd, k)
	}
	op.depth = maxd + 1
	op.ring = make([]float32, sn.batch*op.depth*sn.n)
	return op
}

func (op *delayOp) step(s *Simulator, sn *simNode, _ *Counters) {
	x := sn.gatherInput()
	for slot := 0; slot < sn.batch; slot++ {
		if s.idle(slot) {
			continue
		}
		pos := (op.pos[slot] + 1) % op.depth
		op.pos[slot] = pos
		ring := op.ring[slot*op.depth*op.n : (slot+1)*op.depth*op.n]
		copy(ring[pos*op.n:(pos+1)*op.n], x[slot*op.n:(slot+1)*op.n])
		out := sn.out[slot*op.n : (slot+1)*op.n]
		for i, k := range op.steps {
			r := pos - int(k)
			if r < 0 {
				r += op.depth
			}
			out[i] = ring[r*op.n+i]
		}
	}
}

func (op *delayOp) reset(sn *simNode, slot int) {
	clear(op.ring[slot*op.depth*op.n : (slot+1)*op.depth*op.n])
}
