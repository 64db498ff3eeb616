package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// dense emits a transposed product of a weight matrix with the inputs of
// slots batch slots (1: gemvT, 4: gemm4T): for each slot s and column
// c < cols, y_s[c] = fma(x_s[j], w[j·ldw + c], y_s[c]) for j = 0, 1, …
// nin−1 in order, so the four-slot kernels' sums are bit-identical to
// the one-slot kernel's.
//
// The columns go in blocks of blocks[0] vectors per slot held in
// accumulators while every weight row streams past, so y is read and
// written once per block and the multiply-adds of consecutive rows are
// independent; then blocks of blocks[1] vectors, and so on; then, on
// AVX-512, one masked vector for the last cols mod 16 columns. On AVX2 the
// caller does those in Go, and cols is a multiple of 8. Four slots share
// each weight load.
//
// The four slots' inputs come interleaved, xi[4j+s] = x_s[j], so that
// one row's are together.
func (g gen) dense(v isa, w weight, slots int, blocks []int) {
	name, sig, doc := "gemvT", "func(y *float32, w *%s, x *float32, nin, ldw, cols int)",
		"adds Σ_j x[j]·w[j·ldw + c] to y[c] for c < cols, one fused multiply-add a row, rows in order."
	if slots == 4 {
		name, sig, doc = "gemm4T", "func(y0, y1, y2, y3 *float32, w *%s, xi *float32, nin, ldw, cols int)",
			"is gemvT for four slots: y_s[c] += Σ_j xi[4j+s]·w[j·ldw + c], loading each weight once."
	}
	g.kernel(name+w.name+v.name, fmt.Sprintf(sig, w.goType), doc+v.multipleOf8("cols"))

	// SI: w; DX: the inputs, R12 walking them a row at a time up to R8;
	// R9: the weights' row stride in bytes, R11 walking the rows; R10: the
	// columns left from AX; DI: y, for one slot (four slots load theirs
	// into BX from the arguments, for each block's loads and stores).
	x := "x"
	if slots == 4 {
		x = "xi"
	}
	g.args(arg{"w", reg.RSI}, arg{x, reg.RDX}, arg{"nin", reg.R8}, arg{"ldw", reg.R9}, arg{"cols", reg.R10})
	if slots == 1 {
		g.args(arg{"y", reg.RDI})
	}
	g.SHLQ(operand.Imm(2+log2(slots)), reg.R8)
	g.ADDQ(reg.RDX, reg.R8)
	if w.size > 1 {
		g.SHLQ(operand.Imm(log2(w.size)), reg.R9)
	}
	g.XORQ(reg.RAX, reg.RAX)

	d := denseRegs{slots: slots, most: blocks[0], nregs: v.nregs}
	g.ladder(v, blocks, reg.R10, func(s step, tag string) { g.denseBlock(s, w, d, tag) })
	g.ret()
}

// denseRegs places a dense kernel's values in the vector registers: the
// accumulators first, then each slot's input, then the weights.
type denseRegs struct {
	slots int // batch slots
	most  int // the widest block's vectors per slot
	nregs int // vector registers
}

// acc is the accumulator of slot s, vector i, in a block of n vectors.
func (d denseRegs) acc(s, i, n int) int { return s*n + i }

// x is slot s's input.
func (d denseRegs) x(s int) int { return d.slots*d.most + s }

// w is the register of weight vector i.
func (d denseRegs) w(i int) int { return d.slots*d.most + d.slots + i%d.chunk() }

// chunk is how many weight vectors are loaded before their multiply-adds:
// as many as the registers left hold, a power of two.
func (d denseRegs) chunk() int {
	left := d.nregs - d.slots*d.most - d.slots
	c := 1
	for 2*c <= min(left, d.most) {
		c *= 2
	}
	return c
}

// denseBlock emits one block of s.n vectors per slot at column AX: load
// the accumulators, add every row's products, store them.
func (g gen) denseBlock(s step, w weight, d denseRegs, tag string) {
	r := func(i int) reg.VecPhysical { return s.v.vec(i) }
	for sl := range d.slots {
		y := g.output(d.slots, sl)
		for i := range s.n {
			g.load(s, s.at(y, i), r(d.acc(sl, i, s.n)))
		}
	}
	g.LEAQ(w.at(step{v: s.v}, reg.RSI, 0), reg.R11)
	g.MOVQ(reg.RDX, reg.R12)

	g.Label("rows" + tag)
	g.CMPQ(reg.R12, reg.R8)
	g.JGE(operand.LabelRef("store" + tag))
	// The inputs: one slot's before the weights; four slots' after the
	// first weights, whose widening then overlaps the broadcasts (each
	// order measured the faster for its kernels).
	inputs := func() {
		for sl := range d.slots {
			g.VBROADCASTSS(operand.Mem{Base: reg.R12, Disp: 4 * sl}, r(d.x(sl)))
		}
	}
	if d.slots == 1 {
		inputs()
	}
	for c := 0; c < s.n; c += d.chunk() {
		chunk := min(d.chunk(), s.n-c)
		ws := make([]operand.Op, chunk)
		for i := range chunk {
			m := operand.Mem{Base: reg.R11, Disp: (c + i) * s.v.lanes * w.size}
			if d.slots == 1 {
				ws[i] = g.weightOperand(s, w, m, r(d.w(c+i)))
			} else {
				g.loadWeights(s, w, m, r(d.w(c+i)))
				ws[i] = r(d.w(c + i))
			}
		}
		if c == 0 && d.slots > 1 {
			inputs()
		}
		for sl := range d.slots {
			for i := range chunk {
				g.fma231(s, ws[i], r(d.x(sl)), r(d.acc(sl, c+i, s.n)))
			}
		}
	}
	g.ADDQ(reg.R9, reg.R11)
	g.ADDQ(operand.Imm(uint64(4*d.slots)), reg.R12)
	g.JMP(operand.LabelRef("rows" + tag))

	g.Label("store" + tag)
	for sl := range d.slots {
		y := g.output(d.slots, sl)
		for i := range s.n {
			g.out(s, r(d.acc(sl, i, s.n)), s.at(y, i))
		}
	}
}

// output is the register that points at slot sl's output: DI for one
// slot, else BX, loaded with the slot's argument.
func (g gen) output(slots, sl int) reg.Register {
	if slots == 1 {
		return reg.RDI
	}
	g.args(arg{fmt.Sprint("y", sl), reg.RBX})
	return reg.RBX
}

func log2(n int) uint64 {
	var k uint64
	for 1<<k < n {
		k++
	}
	return k
}
