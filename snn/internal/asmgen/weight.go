package main

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// A weight is the element type of a weight matrix. Every weight widens to
// float32 exactly, so the arithmetic after the load is the float32
// kernels'.
type weight struct {
	name   string // in the kernels' names, after the kernel's
	goType string // the Go element type
	size   int    // bytes
}

var (
	float32W = weight{name: "", goType: "float32", size: 4}

	// A bfloat16 is the top half of a float32: zero-extend, shift left 16.
	bfloat16W = weight{name: "BF16", goType: "uint16", size: 2}

	// An int8 is an integer: sign-extend, convert (exactly) to float32.
	// snn scales the input by the column's quantisation step, so each
	// product is one fused multiply-add of x·step and the integer.
	int8W = weight{name: "I8", goType: "int8", size: 1}
)

// at is vector i of a step in the weight array at base.
func (w weight) at(s step, base reg.Register, i int) operand.Mem {
	return operand.Mem{Base: base, Index: reg.RAX, Scale: uint8(w.size), Disp: i * s.v.lanes * w.size}
}

// weightOperand is the weights at m as float32s, a source operand for
// one use: float32 weights as they are in memory, others widened into
// dst.
func (g gen) weightOperand(s step, w weight, m operand.Mem, dst reg.VecPhysical) operand.Op {
	if w == float32W && !s.masked {
		return m
	}
	g.loadWeights(s, w, m, dst)
	return dst
}

// loadWeights sets dst to the weights at m as float32s. A masked step
// loads the narrow weights under the mask into dst's low part first.
func (g gen) loadWeights(s step, w weight, m operand.Mem, dst reg.VecPhysical) {
	var src operand.Op = m
	if s.masked {
		narrow := vecOf(int(dst.PhysicalIndex()), vecSize(s.v.lanes*w.size))
		switch w {
		case float32W:
			g.VMOVUPS_Z(m, reg.K1, dst)
			return
		case bfloat16W:
			g.VMOVDQU16_Z(m, reg.K1, narrow)
		case int8W:
			g.VMOVDQU8_Z(m, reg.K1, narrow)
		}
		src = narrow
	}
	switch w {
	case float32W:
		g.VMOVUPS(src, dst)
	case bfloat16W:
		g.VPMOVZXWD(src, dst)
		g.VPSLLD(operand.U8(16), dst, dst)
	case int8W:
		g.VPMOVSXBD(src, dst)
		g.VCVTDQ2PS(dst, dst)
	}
}
