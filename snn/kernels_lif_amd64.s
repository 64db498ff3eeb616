//go:build amd64 && !noasm

#include "textflag.h"

// The fused update of a uniform leaky neuron with one or two inputs: the
// input sum, the state update and the threshold test in one pass, with the
// arithmetic of the separate passes (gatherInput, axpby, nextAbove), so the
// results are bit-identical to them:
//
//	s    = x1              (one input)
//	s    = (x1 + 0) + x2   (two inputs: gatherInput's sum from zero)
//	u    = fma(c, s, a·u)
//	mask = th < u          (LT_OQ: false for NaN), one bit per neuron

// func lifUpdateAVX512(a, c, th float32, u, x1, x2 *float32, n int, mask *uint64)
// x2 == nil: one input. The bits go out 16 at a time, which on a
// little-endian machine fills the 64-bit words in order.
TEXT ·lifUpdateAVX512(SB), NOSPLIT, $0-56
	VBROADCASTSS a+0(FP), Z0
	VBROADCASTSS c+4(FP), Z1
	VBROADCASTSS th+8(FP), Z2
	MOVQ         u+16(FP), DI
	MOVQ         x1+24(FP), SI
	MOVQ         x2+32(FP), DX
	MOVQ         n+40(FP), R8
	MOVQ         mask+48(FP), R9
	VXORPS       Z9, Z9, Z9
	XORQ         AX, AX
	TESTQ        DX, DX
	JZ           one

two:
	CMPQ        R8, $16
	JLT         twotail
	VADDPS      (SI)(AX*4), Z9, Z3
	VADDPS      (DX)(AX*4), Z3, Z3
	VMULPS      (DI)(AX*4), Z0, Z4
	VFMADD231PS Z3, Z1, Z4
	VMOVUPS     Z4, (DI)(AX*4)
	VCMPPS      $0x11, Z4, Z2, K2
	KMOVW       K2, (R9)
	ADDQ        $2, R9
	ADDQ        $16, AX
	SUBQ        $16, R8
	JMP         two

twotail:
	TESTQ       R8, R8
	JZ          done
	MOVQ        R8, CX
	MOVL        $1, BX
	SHLL        CX, BX
	DECL        BX
	KMOVW       BX, K1
	VMOVUPS.Z   (SI)(AX*4), K1, Z3
	VADDPS      Z9, Z3, Z3
	VMOVUPS.Z   (DX)(AX*4), K1, Z5
	VADDPS      Z5, Z3, Z3
	VMOVUPS.Z   (DI)(AX*4), K1, Z4
	VMULPS      Z4, Z0, Z4
	VFMADD231PS Z3, Z1, Z4
	VMOVUPS     Z4, K1, (DI)(AX*4)
	VCMPPS      $0x11, Z4, Z2, K1, K2
	KMOVW       K2, (R9)
	JMP         done

one:
	CMPQ        R8, $16
	JLT         onetail
	VMULPS      (DI)(AX*4), Z0, Z4
	VFMADD231PS (SI)(AX*4), Z1, Z4
	VMOVUPS     Z4, (DI)(AX*4)
	VCMPPS      $0x11, Z4, Z2, K2
	KMOVW       K2, (R9)
	ADDQ        $2, R9
	ADDQ        $16, AX
	SUBQ        $16, R8
	JMP         one

onetail:
	TESTQ       R8, R8
	JZ          done
	MOVQ        R8, CX
	MOVL        $1, BX
	SHLL        CX, BX
	DECL        BX
	KMOVW       BX, K1
	VMOVUPS.Z   (SI)(AX*4), K1, Z3
	VMOVUPS.Z   (DI)(AX*4), K1, Z4
	VMULPS      Z4, Z0, Z4
	VFMADD231PS Z3, Z1, Z4
	VMOVUPS     Z4, K1, (DI)(AX*4)
	VCMPPS      $0x11, Z4, Z2, K1, K2
	KMOVW       K2, (R9)

done:
	VZEROUPPER
	RET
