package main

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// gather emits gatherT, the event-driven product of one slot: for each
// column c < cols, y[c] = fma(a[k], w[rows[k]·ldw + c], y[c]) for k = 0,
// 1, … n−1 in order, the multiply-adds that one axpy a row would do, in
// the same order. The columns go in blocks of blocks[0] vectors held in
// accumulators while the listed rows stream past, so y is read and
// written once per block instead of once per row; then blocks of
// blocks[1] vectors, and so on; then, on AVX-512, one masked vector for
// the last cols mod 16 columns. On AVX2 the caller does those in Go, and
// cols is a multiple of 8.
func (g gen) gather(v isa, blocks []int) {
	g.kernel("gatherT"+v.name, "func(y *float32, w *float32, a *float32, rows *int32, n, ldw, cols int)",
		"adds a[k]·w[rows[k]·ldw + c] to y[c] for c < cols, one fused multiply-add a row, k in order."+
			v.multipleOf8("cols"))

	// DI: y; SI: w; DX: a; R13: rows; R8: n; R9: the row stride in bytes;
	// R10: the columns left from AX; R12: k; R11: row k's address.
	g.args(arg{"y", reg.RDI}, arg{"w", reg.RSI}, arg{"a", reg.RDX}, arg{"rows", reg.R13},
		arg{"n", reg.R8}, arg{"ldw", reg.R9}, arg{"cols", reg.R10})
	g.SHLQ(operand.Imm(2), reg.R9)
	g.XORQ(reg.RAX, reg.RAX)
	g.ladder(v, blocks, reg.R10, func(s step, tag string) { g.gatherBlock(s, tag) })
	g.ret()
}

// gatherBlock emits one block of s.n vectors at column AX: the
// accumulators are registers 0 to s.n−1, the coefficient the next, and a
// masked step's weights the one after.
func (g gen) gatherBlock(s step, tag string) {
	r := func(i int) reg.VecPhysical { return s.v.vec(i) }
	coef, tmp := r(s.n), r(s.n+1)
	for i := range s.n {
		g.load(s, s.at(reg.RDI, i), r(i))
	}
	g.XORQ(reg.R12, reg.R12)
	g.Label("rows" + tag)
	g.CMPQ(reg.R12, reg.R8)
	g.JGE(operand.LabelRef("store" + tag))
	g.MOVLQSX(operand.Mem{Base: reg.R13, Index: reg.R12, Scale: 4}, reg.R11)
	g.IMULQ(reg.R9, reg.R11)
	g.ADDQ(reg.RSI, reg.R11)
	g.VBROADCASTSS(operand.Mem{Base: reg.RDX, Index: reg.R12, Scale: 4}, coef)
	for i := range s.n {
		g.fma231(s, g.in(s, s.at(reg.R11, i), tmp), coef, r(i))
	}
	g.INCQ(reg.R12)
	g.JMP(operand.LabelRef("rows" + tag))
	g.Label("store" + tag)
	for i := range s.n {
		g.out(s, r(i), s.at(reg.RDI, i))
	}
}
