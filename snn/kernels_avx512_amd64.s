//go:build amd64 && !noasm

#include "textflag.h"

// The AVX-512 kernels: the AVX2 kernels' arithmetic, in the same order
// and with the same roundings, on 16 lanes, with masked loads and stores
// for the last n mod 16 elements instead of a scalar tail.

// TAILMASK sets K1 to the low n bits (n in reg, 0 < n < 16); clobbers BX, CX.
#define TAILMASK(reg) \
	MOVQ reg, CX \
	MOVL $1, BX  \
	SHLL CX, BX  \
	DECL BX      \
	KMOVW BX, K1

// func axpbyAVX512(a, b float32, y, x *float32, n int)
// y[i] = b*x[i] + (a*y[i]), one rounding for the multiply-add.
TEXT ·axpbyAVX512(SB), NOSPLIT, $0-32
	VBROADCASTSS a+0(FP), Z0
	VBROADCASTSS b+4(FP), Z1
	MOVQ y+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), DX
	XORQ AX, AX

loop64:
	CMPQ DX, $64
	JLT  loop16
	VMULPS      (DI)(AX*4), Z0, Z2
	VMULPS      64(DI)(AX*4), Z0, Z3
	VMULPS      128(DI)(AX*4), Z0, Z4
	VMULPS      192(DI)(AX*4), Z0, Z5
	VFMADD231PS (SI)(AX*4), Z1, Z2
	VFMADD231PS 64(SI)(AX*4), Z1, Z3
	VFMADD231PS 128(SI)(AX*4), Z1, Z4
	VFMADD231PS 192(SI)(AX*4), Z1, Z5
	VMOVUPS     Z2, (DI)(AX*4)
	VMOVUPS     Z3, 64(DI)(AX*4)
	VMOVUPS     Z4, 128(DI)(AX*4)
	VMOVUPS     Z5, 192(DI)(AX*4)
	ADDQ        $64, AX
	SUBQ        $64, DX
	JMP         loop64

loop16:
	CMPQ DX, $16
	JLT  tail
	VMULPS      (DI)(AX*4), Z0, Z2
	VFMADD231PS (SI)(AX*4), Z1, Z2
	VMOVUPS     Z2, (DI)(AX*4)
	ADDQ        $16, AX
	SUBQ        $16, DX
	JMP         loop16

tail:
	TESTQ DX, DX
	JZ    done
	TAILMASK(DX)
	VMOVUPS.Z   (DI)(AX*4), K1, Z2
	VMOVUPS.Z   (SI)(AX*4), K1, Z3
	VMULPS      Z2, Z0, Z2
	VFMADD231PS Z3, Z1, Z2
	VMOVUPS     Z2, K1, (DI)(AX*4)

done:
	VZEROUPPER
	RET

// func scalAVX512(a float32, y *float32, n int)
TEXT ·scalAVX512(SB), NOSPLIT, $0-24
	VBROADCASTSS a+0(FP), Z0
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), DX
	XORQ AX, AX

sloop64:
	CMPQ DX, $64
	JLT  sloop16
	VMULPS  (DI)(AX*4), Z0, Z2
	VMULPS  64(DI)(AX*4), Z0, Z3
	VMULPS  128(DI)(AX*4), Z0, Z4
	VMULPS  192(DI)(AX*4), Z0, Z5
	VMOVUPS Z2, (DI)(AX*4)
	VMOVUPS Z3, 64(DI)(AX*4)
	VMOVUPS Z4, 128(DI)(AX*4)
	VMOVUPS Z5, 192(DI)(AX*4)
	ADDQ    $64, AX
	SUBQ    $64, DX
	JMP     sloop64

sloop16:
	CMPQ DX, $16
	JLT  stail
	VMULPS  (DI)(AX*4), Z0, Z2
	VMOVUPS Z2, (DI)(AX*4)
	ADDQ    $16, AX
	SUBQ    $16, DX
	JMP     sloop16

stail:
	TESTQ DX, DX
	JZ    sdone
	TAILMASK(DX)
	VMOVUPS.Z (DI)(AX*4), K1, Z2
	VMULPS    Z2, Z0, Z2
	VMOVUPS   Z2, K1, (DI)(AX*4)

sdone:
	VZEROUPPER
	RET

// func nextAboveAVX512(u *float32, n int, th float32) int
// The first i in [0, n) with u[i] > th, or n. th < u[i] (LT_OQ, false for
// NaN) is u[i] > th (GT_OQ).
TEXT ·nextAboveAVX512(SB), NOSPLIT, $0-32
	MOVQ         u+0(FP), SI
	MOVQ         n+8(FP), R8
	VBROADCASTSS th+16(FP), Z0
	XORQ         AX, AX
	MOVQ         R8, DX

nloop64:
	CMPQ     DX, $64
	JLT      nloop16
	VCMPPS   $0x11, (SI)(AX*4), Z0, K1
	VCMPPS   $0x11, 64(SI)(AX*4), Z0, K2
	VCMPPS   $0x11, 128(SI)(AX*4), Z0, K3
	VCMPPS   $0x11, 192(SI)(AX*4), Z0, K4
	KORW     K1, K2, K5
	KORW     K3, K4, K6
	KORTESTW K5, K6
	JNZ      nloop16
	ADDQ     $64, AX
	SUBQ     $64, DX
	JMP      nloop64

nloop16:
	CMPQ   DX, $16
	JLT    ntail
	VCMPPS $0x11, (SI)(AX*4), Z0, K1
	KMOVW  K1, BX
	TESTL  BX, BX
	JNZ    nfound
	ADDQ   $16, AX
	SUBQ   $16, DX
	JMP    nloop16

ntail:
	TESTQ     DX, DX
	JZ        nnone
	TAILMASK(DX)
	KMOVW     K1, R9
	VMOVUPS.Z (SI)(AX*4), K1, Z2
	VCMPPS    $0x11, Z2, Z0, K2
	KMOVW     K2, BX
	ANDL      R9, BX
	JNZ       nfound

nnone:
	MOVQ R8, AX
	JMP  nret

nfound:
	BSFL BX, BX
	ADDQ BX, AX

nret:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func gemvTAVX512(y, w, x *float32, nin, ldw, cols int)
// y[c] = fma(x[j], w[j·ldw + c], y[c]) for j in order, every c < cols.
// Blocks of 128 columns in eight accumulators, then 64 in four, then 16,
// then a masked block, so y is read and written once per block.
TEXT ·gemvTAVX512(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ nin+24(FP), R8
	MOVQ ldw+32(FP), R9
	SHLQ $2, R9
	MOVQ cols+40(FP), R10
	XORQ AX, AX

gblock128:
	CMPQ    R10, $128
	JLT     gblock64
	VMOVUPS (DI)(AX*4), Z0
	VMOVUPS 64(DI)(AX*4), Z1
	VMOVUPS 128(DI)(AX*4), Z2
	VMOVUPS 192(DI)(AX*4), Z3
	VMOVUPS 256(DI)(AX*4), Z4
	VMOVUPS 320(DI)(AX*4), Z5
	VMOVUPS 384(DI)(AX*4), Z6
	VMOVUPS 448(DI)(AX*4), Z7
	LEAQ    (SI)(AX*4), R11
	XORQ    R12, R12

grow128:
	CMPQ         R12, R8
	JGE          gstore128
	VBROADCASTSS (DX)(R12*4), Z8
	VFMADD231PS  (R11), Z8, Z0
	VFMADD231PS  64(R11), Z8, Z1
	VFMADD231PS  128(R11), Z8, Z2
	VFMADD231PS  192(R11), Z8, Z3
	VFMADD231PS  256(R11), Z8, Z4
	VFMADD231PS  320(R11), Z8, Z5
	VFMADD231PS  384(R11), Z8, Z6
	VFMADD231PS  448(R11), Z8, Z7
	ADDQ         R9, R11
	INCQ         R12
	JMP          grow128

gstore128:
	VMOVUPS Z0, (DI)(AX*4)
	VMOVUPS Z1, 64(DI)(AX*4)
	VMOVUPS Z2, 128(DI)(AX*4)
	VMOVUPS Z3, 192(DI)(AX*4)
	VMOVUPS Z4, 256(DI)(AX*4)
	VMOVUPS Z5, 320(DI)(AX*4)
	VMOVUPS Z6, 384(DI)(AX*4)
	VMOVUPS Z7, 448(DI)(AX*4)
	ADDQ    $128, AX
	SUBQ    $128, R10
	JMP     gblock128

gblock64:
	CMPQ    R10, $64
	JLT     gblock16
	VMOVUPS (DI)(AX*4), Z0
	VMOVUPS 64(DI)(AX*4), Z1
	VMOVUPS 128(DI)(AX*4), Z2
	VMOVUPS 192(DI)(AX*4), Z3
	LEAQ    (SI)(AX*4), R11
	XORQ    R12, R12

grow64:
	CMPQ         R12, R8
	JGE          gstore64
	VBROADCASTSS (DX)(R12*4), Z8
	VFMADD231PS  (R11), Z8, Z0
	VFMADD231PS  64(R11), Z8, Z1
	VFMADD231PS  128(R11), Z8, Z2
	VFMADD231PS  192(R11), Z8, Z3
	ADDQ         R9, R11
	INCQ         R12
	JMP          grow64

gstore64:
	VMOVUPS Z0, (DI)(AX*4)
	VMOVUPS Z1, 64(DI)(AX*4)
	VMOVUPS Z2, 128(DI)(AX*4)
	VMOVUPS Z3, 192(DI)(AX*4)
	ADDQ    $64, AX
	SUBQ    $64, R10

gblock16:
	CMPQ    R10, $16
	JLT     gtail
	VMOVUPS (DI)(AX*4), Z0
	LEAQ    (SI)(AX*4), R11
	XORQ    R12, R12

grow16:
	CMPQ         R12, R8
	JGE          gstore16
	VBROADCASTSS (DX)(R12*4), Z8
	VFMADD231PS  (R11), Z8, Z0
	ADDQ         R9, R11
	INCQ         R12
	JMP          grow16

gstore16:
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ    $16, AX
	SUBQ    $16, R10
	JMP     gblock16

gtail:
	TESTQ     R10, R10
	JZ        gdone
	TAILMASK(R10)
	VMOVUPS.Z (DI)(AX*4), K1, Z0
	LEAQ      (SI)(AX*4), R11
	XORQ      R12, R12

growt:
	CMPQ         R12, R8
	JGE          gstoret
	VBROADCASTSS (DX)(R12*4), Z8
	VMOVUPS.Z    (R11), K1, Z9
	VFMADD231PS  Z9, Z8, Z0
	ADDQ         R9, R11
	INCQ         R12
	JMP          growt

gstoret:
	VMOVUPS Z0, K1, (DI)(AX*4)

gdone:
	VZEROUPPER
	RET
