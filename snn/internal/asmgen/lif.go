package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The fused updates of a uniform leaky neuron: the input sum, the state
// update and the threshold test in one pass, with the arithmetic of the
// separate passes (gatherInput, axpby, nextAbove), so the results are
// bit-identical to them:
//
//	s    = x1              (one input)
//	s    = (x1 + 0) + x2   (two inputs: gatherInput's sum from zero)
//	u    = fma(c, s, a·u), or u as it was where the neuron is frozen
//	cand = the i with th < u[i] (false for NaN), in order
//
// A frozen neuron (its bit set in frozen: held after a spike) keeps its
// state, so that its refractory hold costs nothing per step. The frozen
// bits come in a vector at a time, 8 or 16, which on a little-endian
// machine walks the 64-bit words in order. The threshold test of a vector
// is one branch, not taken unless a lane crossed: the candidates to fire
// are few, and the caller need not scan a bit a neuron for them. The
// kernels return how many they wrote. On AVX2 n is a multiple of 8; the
// caller does the rest.

// Vector registers of the neuron update.
const (
	lifA, lifC, lifTh = 0, 1, 2 // the constants
	lifS, lifU        = 3, 4    // the input sum, the new state
	lifTmp            = 5       // x2 in a masked step; AVX2's predicate
	lifZero           = 9       // +0, for gatherInput's sum
	lifOld            = 14      // u before the update
	lifFrozen         = 8       // AVX2: the frozen lanes, by their sign bits
	lifShifts         = 15      // AVX2: laneShifts
)

// laneShifts adds the AVX2 shift counts 31 − k, lane k, that move bit k of
// a broadcast byte of frozen bits to the lane's sign bit, where VBLENDVPS
// reads it.
func (g gen) laneShifts() operand.Mem {
	m := g.StaticGlobal("laneShifts")
	g.DataAttributes(attr.RODATA | attr.NOPTR)
	for k := range 8 {
		g.AppendDatum(operand.U32(31 - k))
	}
	return m
}

// freeze sets new to old in the lanes of the step's frozen neurons, whose
// bits are at R12, and moves R12 past them. It clobbers K3 on AVX-512, BX
// and vector register lifFrozen on AVX2.
func (g gen) freeze(s step, old, new reg.VecPhysical) {
	if s.v.masked {
		g.KMOVW(operand.Mem{Base: reg.R12}, reg.K3)
		g.VMOVAPS(old, reg.K3, new)
	} else {
		f := s.v.vec(lifFrozen)
		g.MOVBLZX(operand.Mem{Base: reg.R12}, reg.EBX)
		g.VMOVD(reg.EBX, vecOf(lifFrozen, reg.S128))
		g.VPBROADCASTD(vecOf(lifFrozen, reg.S128), f)
		g.VPSLLVD(s.v.vec(lifShifts), f, f)
		g.VBLENDVPS(f, old, new, new)
	}
	g.ADDQ(operand.Imm(uint64(s.v.lanes/8)), reg.R12)
}

// frozenArgs loads the frozen bits' address into R12 and, on AVX2, the
// shift counts into lifShifts.
func (g gen) frozenArgs(v isa, shifts operand.Mem) {
	g.Load(g.Param("frozen"), reg.R12)
	if !v.masked {
		g.VMOVDQU(shifts, v.vec(lifShifts))
	}
}

// lifUpdate: the neuron, one input or two.
func (g gen) lifUpdate(v isa, shifts operand.Mem) {
	g.kernel("lifUpdate"+v.name, "func(a, c, th float32, u, x1, x2 *float32, n int, frozen *uint64, cand *int32) int",
		"sets u[i] = fma(c, s, a·u[i]) with s = x1[i], or (x1[i] + 0) + x2[i] "+
			"where x2 is not nil, except where bit i of frozen is set, writes the i with th < u[i] "+
			"to cand in order and returns their number."+v.multipleOf8("n"))
	g.args(arg{"a", v.vec(lifA)}, arg{"c", v.vec(lifC)}, arg{"th", v.vec(lifTh)},
		arg{"u", reg.RDI}, arg{"x1", reg.RSI}, arg{"x2", reg.RDX}, arg{"n", reg.R8}, arg{"cand", reg.R9})
	g.frozenArgs(v, shifts)
	g.VXORPS(v.vec(lifZero), v.vec(lifZero), v.vec(lifZero))
	g.XORQ(reg.RAX, reg.RAX)
	g.TESTQ(reg.RDX, reg.RDX)
	g.JZ(operand.LabelRef(fmt.Sprint("one", v.lanes)))

	g.stream("two", v, reg.R8, []int{1}, callerTail, "done", func(s step) {
		r := s.v.vec
		g.add(s, g.in(s, s.at(reg.RSI, 0), r(lifS)), r(lifZero), r(lifS))
		g.add(s, g.in(s, s.at(reg.RDX, 0), r(lifTmp)), r(lifS), r(lifS))
		g.load(s, s.at(reg.RDI, 0), r(lifOld))
		g.mul(s, r(lifOld), r(lifA), r(lifU))
		g.fma231(s, r(lifS), r(lifC), r(lifU))
		g.freeze(s, r(lifOld), r(lifU))
		g.out(s, r(lifU), s.at(reg.RDI, 0))
		g.candidates(s, "two", r(lifTh), r(lifU), r(lifTmp))
	})

	g.stream("one", v, reg.R8, []int{1}, callerTail, "done", func(s step) {
		r := s.v.vec
		g.load(s, s.at(reg.RDI, 0), r(lifOld))
		g.mul(s, r(lifOld), r(lifA), r(lifU))
		g.fma231(s, g.in(s, s.at(reg.RSI, 0), r(lifS)), r(lifC), r(lifU))
		g.freeze(s, r(lifOld), r(lifU))
		g.out(s, r(lifU), s.at(reg.RDI, 0))
		g.candidates(s, "one", r(lifTh), r(lifU), r(lifTmp))
	})
	g.Label("done")
	g.count()
}

// Vector registers of the chain, besides the neuron's.
const (
	chainA1, chainC1, chainA2, chainC2 = 10, 11, 12, 13 // the integrators' constants
	chainG1, chainG2, chainU, chainTmp = 4, 5, 6, 7     // new states; x in a masked step, AVX2's predicate
)

// lifChain: two leaky integrators and the neuron they alone feed.
func (g gen) lifChain(v isa, shifts operand.Mem) {
	g.kernel("lifChain"+v.name,
		"func(a1, c1, a2, c2, a, c, th float32, g1, x1, g2, x2, u *float32, n int, frozen *uint64, cand *int32) int",
		"is two leaky integrators and the neuron they feed, in one pass: "+
			"g1 = fma(c1, x1, a1·g1); g2 = fma(c2, x2, a2·g2); u = fma(c, (g1 + 0) + g2, a·u) "+
			"where the frozen bit is clear; the i with th < u[i] go to cand, and their number is returned."+
			v.multipleOf8("n"))
	g.args(arg{"a1", v.vec(chainA1)}, arg{"c1", v.vec(chainC1)},
		arg{"a2", v.vec(chainA2)}, arg{"c2", v.vec(chainC2)},
		arg{"a", v.vec(lifA)}, arg{"c", v.vec(lifC)}, arg{"th", v.vec(lifTh)},
		arg{"g1", reg.RSI}, arg{"x1", reg.RDX}, arg{"g2", reg.R10}, arg{"x2", reg.R11}, arg{"u", reg.RDI},
		arg{"n", reg.R8}, arg{"cand", reg.R9})
	g.frozenArgs(v, shifts)
	g.VXORPS(v.vec(lifZero), v.vec(lifZero), v.vec(lifZero))
	g.XORQ(reg.RAX, reg.RAX)

	g.stream("chain", v, reg.R8, []int{1}, callerTail, "done", func(s step) {
		r := s.v.vec
		// Every load of a step before its stores: the arrays are allocated
		// 4 KiB-aligned alike, and a load behind a store to the same offset
		// of another array would wait on it (4K aliasing).
		g.mul(s, g.in(s, s.at(reg.RSI, 0), r(chainG1)), r(chainA1), r(chainG1))
		g.fma231(s, g.in(s, s.at(reg.RDX, 0), r(chainTmp)), r(chainC1), r(chainG1))
		g.mul(s, g.in(s, s.at(reg.R10, 0), r(chainG2)), r(chainA2), r(chainG2))
		g.fma231(s, g.in(s, s.at(reg.R11, 0), r(chainTmp)), r(chainC2), r(chainG2))
		g.load(s, s.at(reg.RDI, 0), r(lifOld))
		g.mul(s, r(lifOld), r(lifA), r(chainU))
		g.add(s, r(chainG1), r(lifZero), r(lifS))
		g.add(s, r(chainG2), r(lifS), r(lifS))
		g.fma231(s, r(lifS), r(lifC), r(chainU))
		g.freeze(s, r(lifOld), r(chainU))
		g.out(s, r(chainG1), s.at(reg.RSI, 0))
		g.out(s, r(chainG2), s.at(reg.R10, 0))
		g.out(s, r(chainU), s.at(reg.RDI, 0))
		g.candidates(s, "chain", r(lifTh), r(chainU), r(chainTmp))
	})
	g.Label("done")
	g.count()
}

// candidates writes, at R9 and on, the indices of the step's lanes with th
// < u, and moves R9 past them; a step with none costs one branch. An AVX2
// predicate needs the vector register tmp; AVX-512's is K2, and a masked
// step's lanes past the end are false. tag names the step's labels. It
// clobbers BX and CX.
func (g gen) candidates(s step, tag string, th, u, tmp reg.VecPhysical) {
	if s.masked {
		tag += "tail"
	}
	if s.v.masked {
		g.lessThan(s, th, u, reg.K2)
		g.KMOVW(reg.K2, reg.EBX)
	} else {
		g.lessThan(s, th, u, tmp)
		g.VMOVMSKPS(tmp, reg.EBX)
	}
	g.TESTL(reg.EBX, reg.EBX)
	g.JZ(operand.LabelRef("none" + tag))
	g.Label("each" + tag)
	g.BSFL(reg.EBX, reg.ECX)
	g.ADDL(reg.EAX, reg.ECX)
	g.MOVL(reg.ECX, operand.Mem{Base: reg.R9})
	g.ADDQ(operand.Imm(4), reg.R9)
	g.LEAL(operand.Mem{Base: reg.RBX, Disp: -1}, reg.ECX)
	g.ANDL(reg.ECX, reg.EBX)
	g.JNZ(operand.LabelRef("each" + tag))
	g.Label("none" + tag)
}

// count ends a kernel that writes candidates: it returns how many, from
// where R9 ended.
func (g gen) count() {
	g.SUBQ(g.candStart(), reg.R9)
	g.SHRQ(operand.Imm(2), reg.R9)
	g.Store(reg.R9, g.ReturnIndex(0))
	g.ret()
}

// candStart is the cand argument, where the candidates start.
func (g gen) candStart() operand.Mem {
	b, err := g.Param("cand").Resolve()
	if err != nil {
		panic(fmt.Sprintf("asmgen: argument cand: %v", err))
	}
	return b.Addr
}
