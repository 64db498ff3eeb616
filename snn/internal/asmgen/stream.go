package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// tail is how an AVX2 elementwise kernel ends, after its last whole
// vector. The AVX-512 kernels end with a masked step.
type tail int

const (
	callerTail tail = iota // the caller does the elements left, in Go
	scalarTail             // one element at a time
)

// stream emits the loops of an elementwise kernel over the cnt elements
// from index AX on: steps of unroll[0] vectors while there are that many,
// then of unroll[1], and so on, then the tail; then on to done. Labels
// start with prefix, or are loop<elements> and tail without one.
func (g gen) stream(prefix string, v isa, cnt reg.Register, unroll []int, t tail, done string,
	body func(step)) {
	label := func(i int) string {
		switch {
		case i < len(unroll) && prefix == "":
			return fmt.Sprint("loop", unroll[i]*v.lanes)
		case i < len(unroll):
			return fmt.Sprint(prefix, unroll[i]*v.lanes)
		case v.masked || t == scalarTail:
			return prefix + "tail"
		}
		return done
	}
	for i, n := range unroll {
		g.loop(label(i), label(i+1), cnt, n*v.lanes, false, func() {
			body(step{v: v, n: n})
		})
	}
	switch {
	case v.masked:
		g.masked(label(len(unroll)), done, v, cnt, body)
		g.JMP(operand.LabelRef(done)) // pruned where done is next
	case t == scalarTail:
		g.loop(label(len(unroll)), done, cnt, 1, false, func() {
			body(step{v: scalar, n: 1})
		})
	}
}

// elementwise emits the loops of an elementwise kernel over the DX
// elements of its arrays and its return. Each step runs every stage on
// each of its vectors before the next stage: the vectors' chains are
// independent, so their latencies overlap.
func (g gen) elementwise(v isa, t tail, stages ...func(s step, i int)) {
	g.XORQ(reg.RAX, reg.RAX)
	g.stream("", v, reg.RDX, []int{4, 1}, t, "done", func(s step) {
		for _, stage := range stages {
			for i := range s.n {
				stage(s, i)
			}
		}
	})
	g.Label("done")
	g.ret()
}

// Vector registers of axpby and scal: a, b, then a product per vector,
// then x in a masked step.
const axpbyA, axpbyB, axpbyT, axpbyX = 0, 1, 2, 6

// axpby: y[i] = fma(b, x[i], a·y[i]).
func (g gen) axpby(v isa) {
	g.kernel("axpby"+v.name, "func(a, b float32, y, x *float32, n int)",
		"sets y[i] = b·x[i] + (a·y[i]), one rounding for the multiply-add.")
	g.args(arg{"a", v.vec(axpbyA)}, arg{"b", v.vec(axpbyB)},
		arg{"y", reg.RDI}, arg{"x", reg.RSI}, arg{"n", reg.RDX})
	g.elementwise(v, scalarTail, g.scaleY, func(s step, i int) {
		g.fma231(s, g.in(s, s.at(reg.RSI, i), s.v.vec(axpbyX)), s.v.vec(axpbyB), s.v.vec(axpbyT+i))
	}, g.storeY)
}

// scal: y[i] = a·y[i].
func (g gen) scal(v isa) {
	g.kernel("scal"+v.name, "func(a float32, y *float32, n int)", "sets y[i] = a·y[i].")
	g.args(arg{"a", v.vec(axpbyA)}, arg{"y", reg.RDI}, arg{"n", reg.RDX})
	g.elementwise(v, scalarTail, g.scaleY, g.storeY)
}

// scaleY is the stage t_i = a·y_i of axpby and scal.
func (g gen) scaleY(s step, i int) {
	g.mul(s, g.in(s, s.at(reg.RDI, i), s.v.vec(axpbyT+i)), s.v.vec(axpbyA), s.v.vec(axpbyT+i))
}

// storeY is the stage y_i = t_i of axpby and scal.
func (g gen) storeY(s step, i int) {
	g.out(s, s.v.vec(axpbyT+i), s.at(reg.RDI, i))
}

// axpyW: y[i] = fma(a, w[i], y[i]) with narrow weights w.
func (g gen) axpyW(v isa, w weight) {
	g.kernel("axpy"+w.name+v.name, fmt.Sprintf("func(a float32, w *%s, y *float32, n int)", w.goType),
		"sets y[i] = a·w[i] + y[i], one rounding."+v.multipleOf8("n"))
	// Vector registers: y in a masked step, a, then the weights.
	const ry, ra, rw = 0, 8, 9
	g.args(arg{"a", v.vec(ra)}, arg{"w", reg.R11}, arg{"y", reg.RDI}, arg{"n", reg.RDX})
	g.elementwise(v, callerTail, func(s step, i int) {
		g.loadWeights(s, w, w.at(s, reg.R11, i), s.v.vec(rw+i))
	}, func(s step, i int) {
		g.fma213(s, g.in(s, s.at(reg.RDI, i), s.v.vec(ry)), s.v.vec(ra), s.v.vec(rw+i))
	}, func(s step, i int) {
		g.out(s, s.v.vec(rw+i), s.at(reg.RDI, i))
	})
}

// nextAbove: the first i with u[i] > th, or n.
func (g gen) nextAbove(v isa) {
	g.kernel("nextAbove"+v.name, "func(u *float32, n int, th float32) int",
		"returns the first i in [0, n) with u[i] > th, or n.")
	// Vector registers: th, then u in a tail. The predicates are vectors
	// (AVX2) or mask registers (AVX-512) from 2 on: K1 is the tail's mask.
	const rth, ru, rp = 0, 2, 2
	pred := func(i int) reg.Register {
		if v.masked {
			return reg.Opmask.Lookup(reg.Index(rp+i), reg.S64)
		}
		return v.vec(rp + i)
	}
	g.args(arg{"u", reg.RSI}, arg{"n", reg.R8}, arg{"th", v.vec(rth)})
	g.XORQ(reg.RAX, reg.RAX)
	g.MOVQ(reg.R8, reg.RDX)
	// th < u is u > th, false for NaN. Four vectors at a time, the
	// predicates or-ed: a true lane sends the search on to one vector at a
	// time, which finds it.
	g.stream("", v, reg.RDX, []int{4, 1}, scalarTail, "none", func(s step) {
		th := s.v.vec(rth)
		switch {
		case s.v.lanes == 1:
			// VUCOMISS sets CF for NaN; JA wants CF and ZF clear.
			u := s.v.vec(ru)
			g.VMOVSS(s.at(reg.RSI, 0), u)
			g.VUCOMISS(th, u)
			g.JA(operand.LabelRef("return"))
		case s.n == 4:
			for i := range 4 {
				g.lessThan(s, th, s.at(reg.RSI, i), pred(i))
			}
			one := operand.LabelRef(fmt.Sprint("loop", v.lanes))
			if v.masked {
				g.KORW(pred(0), pred(1), pred(4))
				g.KORW(pred(2), pred(3), pred(5))
				g.KORTESTW(pred(4), pred(5))
				g.JNZ(one)
			} else {
				g.VORPS(pred(0), pred(1), pred(4))
				g.VORPS(pred(2), pred(3), pred(5))
				g.VORPS(pred(4), pred(5), pred(4))
				g.ifAny(v, pred(4), one)
			}
		default:
			g.lessThan(s, th, g.in(s, s.at(reg.RSI, 0), s.v.vec(ru)), pred(0))
			g.ifAny(v, pred(0), "found")
		}
	})
	g.Label("none")
	g.MOVQ(reg.R8, reg.RAX)
	g.JMP(operand.LabelRef("return"))
	g.Label("found")
	g.BSFL(reg.EBX, reg.EBX)
	g.ADDQ(reg.RBX, reg.RAX)
	g.Label("return")
	g.Store(reg.RAX, g.ReturnIndex(0))
	g.ret()
}
