package main

import (
	"fmt"
	"go/types"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// gen emits the kernels into an avo build context.
type gen struct{ *build.Context }

// An isa is a vector instruction set the kernels are written for.
type isa struct {
	name   string   // the suffix of its kernels' names
	lanes  int      // float32 lanes in a vector register
	size   reg.Spec // a vector register's size
	nregs  int      // vector registers
	masked bool     // opmask registers: predicates are bits, tails masked
}

var (
	avx2   = isa{name: "AVX2", lanes: 8, size: reg.S256, nregs: 16}
	avx512 = isa{name: "AVX512", lanes: 16, size: reg.S512, nregs: 32, masked: true}

	// scalar is one float32 in an X register: the AVX2 kernels' tails.
	scalar = isa{lanes: 1, size: reg.S128, nregs: 16}
)

// vec is vector register i at v's width.
func (v isa) vec(i int) reg.VecPhysical {
	return vecOf(i, v.size)
}

// vecOf is vector register i of the given size.
func vecOf(i int, size reg.Spec) reg.VecPhysical {
	r, ok := reg.Vector.Lookup(reg.Index(i), size).(reg.VecPhysical)
	if !ok {
		panic(fmt.Sprintf("asmgen: no vector register %d of %d bytes", i, size.Size()))
	}
	return r
}

// vecSize is the size of a vector register of n bytes.
func vecSize(n int) reg.Spec {
	switch n {
	case 16:
		return reg.S128
	case 32:
		return reg.S256
	case 64:
		return reg.S512
	}
	panic(fmt.Sprintf("asmgen: no vector register of %d bytes", n))
}

// multipleOf8 documents that the AVX2 kernels leave the tail of arg's
// elements to the caller: they only take a multiple of 8.
func (v isa) multipleOf8(arg string) string {
	if v.masked {
		return ""
	}
	return " " + arg + " is a multiple of 8."
}

// vecBytes is the size of a vector of float32s.
func (v isa) vecBytes() int { return 4 * v.lanes }

// A step is one trip through a loop body: n vectors of v's width from
// element index AX on. A masked step is one vector whose lanes past the
// elements left are off in K1: its loads read zeros there and its stores
// leave memory as it is.
type step struct {
	v      isa
	n      int
	masked bool
}

// at is vector i of the step in the float32 array at base.
func (s step) at(base reg.Register, i int) operand.Mem {
	return operand.Mem{Base: base, Index: reg.RAX, Scale: 4, Disp: i * s.v.vecBytes()}
}

// ltOQ is the comparison predicate a < b, false where either is NaN.
const ltOQ = 0x11

// kernel starts the function name of signature sig (its parameter names
// are the assembly's argument names): a leaf that needs no stack and
// whose pointers do not escape.
func (g gen) kernel(name, sig, doc string) {
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.SignatureExpr(sig)
	g.Pragma("noescape")
	g.Doc(wrap(name+" "+doc, 76)...)
}

// wrap splits text into lines of at most width bytes, between words.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

// An arg is a kernel's argument and the register it goes in.
type arg struct {
	name string
	r    reg.Register
}

// args loads the arguments into their registers: a float32 into every lane
// of a vector register, anything else whole.
func (g gen) args(as ...arg) {
	for _, a := range as {
		b, err := g.Param(a.name).Resolve()
		if err != nil {
			panic(fmt.Sprintf("asmgen: argument %s: %v", a.name, err))
		}
		if b.Type.Kind() == types.Float32 {
			g.VBROADCASTSS(b.Addr, a.r)
		} else {
			g.Load(g.Param(a.name), a.r)
		}
	}
}

// ret ends a kernel, clearing the vector registers' upper halves so that
// SSE code after it does not pay for a state transition.
func (g gen) ret() {
	g.VZEROUPPER()
	g.RET()
}

// loop emits a counted loop at label: while cnt >= n, body, then AX += n
// and cnt -= n; then on to exit. A loop that the caller knows runs at
// most once (once) does not jump back.
func (g gen) loop(label, exit string, cnt reg.Register, n int, once bool, body func()) {
	imm := operand.Imm(uint64(n))
	if n > 255 {
		imm = operand.U32(n) // no 16-bit immediates
	}
	g.Label(label)
	g.CMPQ(cnt, imm)
	g.JLT(operand.LabelRef(exit))
	body()
	g.ADDQ(imm, reg.RAX)
	g.SUBQ(imm, cnt)
	if !once {
		g.JMP(operand.LabelRef(label))
	}
}

// tailMask sets K1 to the low cnt bits, 0 < cnt < 16. It clobbers BX and
// CX.
func (g gen) tailMask(cnt reg.Register) {
	g.MOVQ(cnt, reg.RCX)
	g.MOVL(operand.U32(1), reg.EBX)
	g.SHLL(reg.CL, reg.EBX)
	g.DECL(reg.EBX)
	g.KMOVW(reg.EBX, reg.K1)
}

// ladder emits the blocks of columns a kernel steps through: a loop of
// each width in blocks (vectors a step), widest first, counting cnt
// down, then a masked step for the columns left on an ISA that has one,
// then the label "done". block emits one step, tag naming its labels.
func (g gen) ladder(v isa, blocks []int, cnt reg.Register, block func(s step, tag string)) {
	label := func(i int) string {
		switch {
		case i < len(blocks):
			return fmt.Sprint("block", blocks[i]*v.lanes)
		case v.masked:
			return "tail"
		}
		return "done"
	}
	for i, n := range blocks {
		// A block at least half as wide as the one before runs at most
		// once: fewer than two of it are left.
		once := i > 0 && blocks[i-1] <= 2*n
		g.loop(label(i), label(i+1), cnt, n*v.lanes, once, func() {
			block(step{v: v, n: n}, fmt.Sprint(n*v.lanes))
		})
	}
	if v.masked {
		g.masked("tail", "done", v, cnt, func(s step) { block(s, "tail") })
	}
	g.Label("done")
}

// masked emits a masked step at label for the cnt < lanes elements left,
// if any, then goes on to exit.
func (g gen) masked(label, exit string, v isa, cnt reg.Register, body func(step)) {
	g.Label(label)
	g.TESTQ(cnt, cnt)
	g.JZ(operand.LabelRef(exit))
	g.tailMask(cnt)
	body(step{v: v, n: 1, masked: true})
}

// The float32 operations of a step. Operands follow Go's assembler: the
// destination last, a source that may be memory first.

// in is the vector at m as a source operand: m itself, or in a masked step
// tmp, loaded from m.
func (g gen) in(s step, m operand.Mem, tmp reg.VecPhysical) operand.Op {
	if !s.masked {
		return m
	}
	g.VMOVUPS_Z(m, reg.K1, tmp)
	return tmp
}

// pick is the packed form of an instruction, or in a scalar step its
// scalar form.
func pick(s step, packed, scalar func(...operand.Op)) func(...operand.Op) {
	if s.v.lanes == 1 {
		return scalar
	}
	return packed
}

// load sets dst to the vector at m.
func (g gen) load(s step, m operand.Mem, dst reg.VecPhysical) {
	if s.masked {
		g.VMOVUPS_Z(m, reg.K1, dst)
		return
	}
	pick(s, g.VMOVUPS, g.VMOVSS)(m, dst)
}

// out stores src to m.
func (g gen) out(s step, src reg.VecPhysical, m operand.Mem) {
	if s.masked {
		g.VMOVUPS(src, reg.K1, m)
		return
	}
	pick(s, g.VMOVUPS, g.VMOVSS)(src, m)
}

// add sets dst = b + a.
func (g gen) add(s step, a, b, dst operand.Op) { pick(s, g.VADDPS, g.VADDSS)(a, b, dst) }

// mul sets dst = b·a.
func (g gen) mul(s step, a, b, dst operand.Op) { pick(s, g.VMULPS, g.VMULSS)(a, b, dst) }

// fma231 sets dst = fma(b, a, dst), one rounding.
func (g gen) fma231(s step, a, b, dst operand.Op) { pick(s, g.VFMADD231PS, g.VFMADD231SS)(a, b, dst) }

// fma213 sets dst = fma(b, dst, a), one rounding.
func (g gen) fma213(s step, a, b, dst operand.Op) { pick(s, g.VFMADD213PS, g.VFMADD213SS)(a, b, dst) }

// lessThan sets the predicate p to a < b (ltOQ), lane by lane; in a masked
// step the lanes past the end are false. p is a vector of all-ones lanes
// for AVX2, a mask register for AVX-512.
func (g gen) lessThan(s step, a reg.VecPhysical, b operand.Op, p reg.Register) {
	if s.masked {
		g.VCMPPS(operand.U8(ltOQ), b, a, reg.K1, p)
	} else {
		g.VCMPPS(operand.U8(ltOQ), b, a, p)
	}
}

// bits sets the 32-bit register dst to the predicate p, a bit a lane.
func (g gen) bits(v isa, p reg.Register, dst reg.Register) {
	if v.masked {
		g.KMOVW(p, dst)
	} else {
		g.VMOVMSKPS(p, dst)
	}
}

// ifAny jumps to label if any lane of the predicate p is true, its bits
// in BX.
func (g gen) ifAny(v isa, p reg.Register, label operand.LabelRef) {
	g.bits(v, p, reg.EBX)
	g.TESTL(reg.EBX, reg.EBX)
	g.JNZ(label)
}
