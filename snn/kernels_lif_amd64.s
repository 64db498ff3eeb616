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

// func lifChainAVX512(a1, c1, a2, c2, a, c, th float32, g1, x1, g2, x2, u *float32, n int, mask *uint64)
// Two leaky integrators and the neuron they feed, in one pass:
//
//	g1 = fma(c1, x1, a1·g1); g2 = fma(c2, x2, a2·g2)
//	u  = fma(c, (g1 + 0) + g2, a·u); mask = th < u
//
// the arithmetic of axpby on each integrator, then lifUpdate on the sum.
// Every load of a block comes before its stores: the arrays are allocated
// 4 KiB-aligned alike, and a load behind a store to the same offset of
// another array would wait on it (4K aliasing).
TEXT ·lifChainAVX512(SB), NOSPLIT, $0-88
	VBROADCASTSS a1+0(FP), Z10
	VBROADCASTSS c1+4(FP), Z11
	VBROADCASTSS a2+8(FP), Z12
	VBROADCASTSS c2+12(FP), Z13
	VBROADCASTSS a+16(FP), Z0
	VBROADCASTSS c+20(FP), Z1
	VBROADCASTSS th+24(FP), Z2
	MOVQ         g1+32(FP), SI
	MOVQ         x1+40(FP), DX
	MOVQ         g2+48(FP), R10
	MOVQ         x2+56(FP), R11
	MOVQ         u+64(FP), DI
	MOVQ         n+72(FP), R8
	MOVQ         mask+80(FP), R9
	VXORPS       Z9, Z9, Z9
	XORQ         AX, AX

chain:
	CMPQ        R8, $16
	JLT         chaintail
	VMULPS      (SI)(AX*4), Z10, Z4
	VFMADD231PS (DX)(AX*4), Z11, Z4
	VMULPS      (R10)(AX*4), Z12, Z5
	VFMADD231PS (R11)(AX*4), Z13, Z5
	VMULPS      (DI)(AX*4), Z0, Z6
	VADDPS      Z4, Z9, Z3
	VADDPS      Z5, Z3, Z3
	VFMADD231PS Z3, Z1, Z6
	VMOVUPS     Z4, (SI)(AX*4)
	VMOVUPS     Z5, (R10)(AX*4)
	VMOVUPS     Z6, (DI)(AX*4)
	VCMPPS      $0x11, Z6, Z2, K2
	KMOVW       K2, (R9)
	ADDQ        $2, R9
	ADDQ        $16, AX
	SUBQ        $16, R8
	JMP         chain

chaintail:
	TESTQ       R8, R8
	JZ          chaindone
	MOVQ        R8, CX
	MOVL        $1, BX
	SHLL        CX, BX
	DECL        BX
	KMOVW       BX, K1
	VMOVUPS.Z   (SI)(AX*4), K1, Z4
	VMULPS      Z4, Z10, Z4
	VMOVUPS.Z   (DX)(AX*4), K1, Z7
	VFMADD231PS Z7, Z11, Z4
	VMOVUPS     Z4, K1, (SI)(AX*4)
	VMOVUPS.Z   (R10)(AX*4), K1, Z5
	VMULPS      Z5, Z12, Z5
	VMOVUPS.Z   (R11)(AX*4), K1, Z7
	VFMADD231PS Z7, Z13, Z5
	VMOVUPS     Z5, K1, (R10)(AX*4)
	VADDPS      Z4, Z9, Z3
	VADDPS      Z5, Z3, Z3
	VMOVUPS.Z   (DI)(AX*4), K1, Z6
	VMULPS      Z6, Z0, Z6
	VFMADD231PS Z3, Z1, Z6
	VMOVUPS     Z6, K1, (DI)(AX*4)
	VCMPPS      $0x11, Z6, Z2, K1, K2
	KMOVW       K2, (R9)

chaindone:
	VZEROUPPER
	RET

// func lifUpdateAVX2(a, c, th float32, u, x1, x2 *float32, n int, mask *uint64)
// lifUpdateAVX512 for AVX2, n a multiple of 8: the bits go out 8 at a time.
TEXT ·lifUpdateAVX2(SB), NOSPLIT, $0-56
	VBROADCASTSS a+0(FP), Y0
	VBROADCASTSS c+4(FP), Y1
	VBROADCASTSS th+8(FP), Y2
	MOVQ         u+16(FP), DI
	MOVQ         x1+24(FP), SI
	MOVQ         x2+32(FP), DX
	MOVQ         n+40(FP), R8
	MOVQ         mask+48(FP), R9
	VXORPS       Y9, Y9, Y9
	XORQ         AX, AX
	TESTQ        DX, DX
	JZ           yone

ytwo:
	CMPQ        R8, $8
	JLT         ydone
	VADDPS      (SI)(AX*4), Y9, Y3
	VADDPS      (DX)(AX*4), Y3, Y3
	VMULPS      (DI)(AX*4), Y0, Y4
	VFMADD231PS Y3, Y1, Y4
	VMOVUPS     Y4, (DI)(AX*4)
	VCMPPS      $0x1e, Y2, Y4, Y5
	VMOVMSKPS   Y5, BX
	MOVB        BX, (R9)
	INCQ        R9
	ADDQ        $8, AX
	SUBQ        $8, R8
	JMP         ytwo

yone:
	CMPQ        R8, $8
	JLT         ydone
	VMULPS      (DI)(AX*4), Y0, Y4
	VFMADD231PS (SI)(AX*4), Y1, Y4
	VMOVUPS     Y4, (DI)(AX*4)
	VCMPPS      $0x1e, Y2, Y4, Y5
	VMOVMSKPS   Y5, BX
	MOVB        BX, (R9)
	INCQ        R9
	ADDQ        $8, AX
	SUBQ        $8, R8
	JMP         yone

ydone:
	VZEROUPPER
	RET

// func lifChainAVX2(a1, c1, a2, c2, a, c, th float32, g1, x1, g2, x2, u *float32, n int, mask *uint64)
// lifChainAVX512 for AVX2, n a multiple of 8.
TEXT ·lifChainAVX2(SB), NOSPLIT, $0-88
	VBROADCASTSS a1+0(FP), Y10
	VBROADCASTSS c1+4(FP), Y11
	VBROADCASTSS a2+8(FP), Y12
	VBROADCASTSS c2+12(FP), Y13
	VBROADCASTSS a+16(FP), Y0
	VBROADCASTSS c+20(FP), Y1
	VBROADCASTSS th+24(FP), Y2
	MOVQ         g1+32(FP), SI
	MOVQ         x1+40(FP), DX
	MOVQ         g2+48(FP), R10
	MOVQ         x2+56(FP), R11
	MOVQ         u+64(FP), DI
	MOVQ         n+72(FP), R8
	MOVQ         mask+80(FP), R9
	VXORPS       Y9, Y9, Y9
	XORQ         AX, AX

ychain:
	CMPQ        R8, $8
	JLT         ychaindone
	VMULPS      (SI)(AX*4), Y10, Y4
	VFMADD231PS (DX)(AX*4), Y11, Y4
	VMULPS      (R10)(AX*4), Y12, Y5
	VFMADD231PS (R11)(AX*4), Y13, Y5
	VMULPS      (DI)(AX*4), Y0, Y6
	VADDPS      Y4, Y9, Y3
	VADDPS      Y5, Y3, Y3
	VFMADD231PS Y3, Y1, Y6
	VMOVUPS     Y4, (SI)(AX*4)
	VMOVUPS     Y5, (R10)(AX*4)
	VMOVUPS     Y6, (DI)(AX*4)
	VCMPPS      $0x1e, Y2, Y6, Y7
	VMOVMSKPS   Y7, BX
	MOVB        BX, (R9)
	INCQ        R9
	ADDQ        $8, AX
	SUBQ        $8, R8
	JMP         ychain

ychaindone:
	VZEROUPPER
	RET
