//go:build amd64 && !noasm

#include "textflag.h"

// The int8 weight kernels: a weight widens exactly (sign-extend, convert to
// float32) and the arithmetic is the float32 kernels', in the same order
// with the same roundings. The input is already scaled by its column's
// quantisation step (precision.go), so each product is x·step times the
// integer weight, one fused multiply-add.

#define TAILMASK(reg) \
	MOVQ reg, CX \
	MOVL $1, BX  \
	SHLL CX, BX  \
	DECL BX      \
	KMOVW BX, K1

// WIDEN16(off, dst) loads 16 int8 weights at off(R11) as float32s.
#define WIDEN16(off, dst) \
	VPMOVSXBD off(R11), dst \
	VCVTDQ2PS dst, dst

// WIDEN8(off, dst) loads 8 int8 weights at off(R11) as float32s.
#define WIDEN8(off, dst) \
	VPMOVSXBD off(R11), dst \
	VCVTDQ2PS dst, dst

// func gemvTI8AVX512(y *float32, w *int8, x *float32, nin, ldw, cols int)
TEXT ·gemvTI8AVX512(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ nin+24(FP), R8
	MOVQ ldw+32(FP), R9
	MOVQ cols+40(FP), R10
	XORQ AX, AX

bblock128:
	CMPQ    R10, $128
	JLT     bblock64
	VMOVUPS (DI)(AX*4), Z0
	VMOVUPS 64(DI)(AX*4), Z1
	VMOVUPS 128(DI)(AX*4), Z2
	VMOVUPS 192(DI)(AX*4), Z3
	VMOVUPS 256(DI)(AX*4), Z4
	VMOVUPS 320(DI)(AX*4), Z5
	VMOVUPS 384(DI)(AX*4), Z6
	VMOVUPS 448(DI)(AX*4), Z7
	LEAQ    (SI)(AX*1), R11
	XORQ    R12, R12

brow128:
	CMPQ         R12, R8
	JGE          bstore128
	VBROADCASTSS (DX)(R12*4), Z8
	WIDEN16(0, Z9)
	WIDEN16(16, Z10)
	WIDEN16(32, Z11)
	WIDEN16(48, Z12)
	WIDEN16(64, Z13)
	WIDEN16(80, Z14)
	WIDEN16(96, Z15)
	WIDEN16(112, Z16)
	VFMADD231PS  Z9, Z8, Z0
	VFMADD231PS  Z10, Z8, Z1
	VFMADD231PS  Z11, Z8, Z2
	VFMADD231PS  Z12, Z8, Z3
	VFMADD231PS  Z13, Z8, Z4
	VFMADD231PS  Z14, Z8, Z5
	VFMADD231PS  Z15, Z8, Z6
	VFMADD231PS  Z16, Z8, Z7
	ADDQ         R9, R11
	INCQ         R12
	JMP          brow128

bstore128:
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
	JMP     bblock128

bblock64:
	CMPQ    R10, $64
	JLT     bblock16
	VMOVUPS (DI)(AX*4), Z0
	VMOVUPS 64(DI)(AX*4), Z1
	VMOVUPS 128(DI)(AX*4), Z2
	VMOVUPS 192(DI)(AX*4), Z3
	LEAQ    (SI)(AX*1), R11
	XORQ    R12, R12

brow64:
	CMPQ         R12, R8
	JGE          bstore64
	VBROADCASTSS (DX)(R12*4), Z8
	WIDEN16(0, Z9)
	WIDEN16(16, Z10)
	WIDEN16(32, Z11)
	WIDEN16(48, Z12)
	VFMADD231PS  Z9, Z8, Z0
	VFMADD231PS  Z10, Z8, Z1
	VFMADD231PS  Z11, Z8, Z2
	VFMADD231PS  Z12, Z8, Z3
	ADDQ         R9, R11
	INCQ         R12
	JMP          brow64

bstore64:
	VMOVUPS Z0, (DI)(AX*4)
	VMOVUPS Z1, 64(DI)(AX*4)
	VMOVUPS Z2, 128(DI)(AX*4)
	VMOVUPS Z3, 192(DI)(AX*4)
	ADDQ    $64, AX
	SUBQ    $64, R10

bblock16:
	CMPQ    R10, $16
	JLT     btail
	VMOVUPS (DI)(AX*4), Z0
	LEAQ    (SI)(AX*1), R11
	XORQ    R12, R12

brow16:
	CMPQ         R12, R8
	JGE          bstore16
	VBROADCASTSS (DX)(R12*4), Z8
	WIDEN16(0, Z9)
	VFMADD231PS  Z9, Z8, Z0
	ADDQ         R9, R11
	INCQ         R12
	JMP          brow16

bstore16:
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ    $16, AX
	SUBQ    $16, R10
	JMP     bblock16

btail:
	TESTQ     R10, R10
	JZ        bdone
	TAILMASK(R10)
	VMOVUPS.Z (DI)(AX*4), K1, Z0
	LEAQ      (SI)(AX*1), R11
	XORQ      R12, R12

browt:
	CMPQ         R12, R8
	JGE          bstoret
	VBROADCASTSS (DX)(R12*4), Z8
	VMOVDQU8.Z   (R11), K1, X9
	VPMOVSXBD    X9, Z9
	VCVTDQ2PS    Z9, Z9
	VFMADD231PS  Z9, Z8, Z0
	ADDQ         R9, R11
	INCQ         R12
	JMP          browt

bstoret:
	VMOVUPS Z0, K1, (DI)(AX*4)

bdone:
	VZEROUPPER
	RET

// func axpyI8AVX512(a float32, w *int8, y *float32, n int)
// y[i] = fma(a, w[i], y[i]).
TEXT ·axpyI8AVX512(SB), NOSPLIT, $0-32
	VBROADCASTSS a+0(FP), Z8
	MOVQ w+8(FP), R11
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), DX

aloop64:
	CMPQ DX, $64
	JLT  aloop16
	WIDEN16(0, Z9)
	WIDEN16(16, Z10)
	WIDEN16(32, Z11)
	WIDEN16(48, Z12)
	VFMADD213PS (DI), Z8, Z9
	VFMADD213PS 64(DI), Z8, Z10
	VFMADD213PS 128(DI), Z8, Z11
	VFMADD213PS 192(DI), Z8, Z12
	VMOVUPS     Z9, (DI)
	VMOVUPS     Z10, 64(DI)
	VMOVUPS     Z11, 128(DI)
	VMOVUPS     Z12, 192(DI)
	ADDQ        $64, R11
	ADDQ        $256, DI
	SUBQ        $64, DX
	JMP         aloop64

aloop16:
	CMPQ DX, $16
	JLT  atail
	WIDEN16(0, Z9)
	VFMADD213PS (DI), Z8, Z9
	VMOVUPS     Z9, (DI)
	ADDQ        $16, R11
	ADDQ        $64, DI
	SUBQ        $16, DX
	JMP         aloop16

atail:
	TESTQ       DX, DX
	JZ          adone
	TAILMASK(DX)
	VMOVDQU8.Z  (R11), K1, X9
	VPMOVSXBD   X9, Z9
	VCVTDQ2PS   Z9, Z9
	VMOVUPS.Z   (DI), K1, Z0
	VFMADD231PS Z9, Z8, Z0
	VMOVUPS     Z0, K1, (DI)

adone:
	VZEROUPPER
	RET

// func gemvTI8AVX2(y *float32, w *int8, x *float32, nin, ldw, cols int)
// cols a multiple of 8.
TEXT ·gemvTI8AVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ nin+24(FP), R8
	MOVQ ldw+32(FP), R9
	MOVQ cols+40(FP), R10
	XORQ AX, AX

cblock64:
	CMPQ    R10, $64
	JLT     cblock8
	VMOVUPS (DI)(AX*4), Y0
	VMOVUPS 32(DI)(AX*4), Y1
	VMOVUPS 64(DI)(AX*4), Y2
	VMOVUPS 96(DI)(AX*4), Y3
	VMOVUPS 128(DI)(AX*4), Y4
	VMOVUPS 160(DI)(AX*4), Y5
	VMOVUPS 192(DI)(AX*4), Y6
	VMOVUPS 224(DI)(AX*4), Y7
	LEAQ    (SI)(AX*1), R11
	XORQ    R12, R12

crow64:
	CMPQ         R12, R8
	JGE          cstore64
	VBROADCASTSS (DX)(R12*4), Y8
	WIDEN8(0, Y9)
	WIDEN8(8, Y10)
	WIDEN8(16, Y11)
	WIDEN8(24, Y12)
	VFMADD231PS  Y9, Y8, Y0
	VFMADD231PS  Y10, Y8, Y1
	VFMADD231PS  Y11, Y8, Y2
	VFMADD231PS  Y12, Y8, Y3
	WIDEN8(32, Y9)
	WIDEN8(40, Y10)
	WIDEN8(48, Y11)
	WIDEN8(56, Y12)
	VFMADD231PS  Y9, Y8, Y4
	VFMADD231PS  Y10, Y8, Y5
	VFMADD231PS  Y11, Y8, Y6
	VFMADD231PS  Y12, Y8, Y7
	ADDQ         R9, R11
	INCQ         R12
	JMP          crow64

cstore64:
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	VMOVUPS Y4, 128(DI)(AX*4)
	VMOVUPS Y5, 160(DI)(AX*4)
	VMOVUPS Y6, 192(DI)(AX*4)
	VMOVUPS Y7, 224(DI)(AX*4)
	ADDQ    $64, AX
	SUBQ    $64, R10
	JMP     cblock64

cblock8:
	CMPQ    R10, $8
	JLT     cdone
	VMOVUPS (DI)(AX*4), Y0
	LEAQ    (SI)(AX*1), R11
	XORQ    R12, R12

crow8:
	CMPQ         R12, R8
	JGE          cstore8
	VBROADCASTSS (DX)(R12*4), Y8
	WIDEN8(0, Y9)
	VFMADD231PS  Y9, Y8, Y0
	ADDQ         R9, R11
	INCQ         R12
	JMP          crow8

cstore8:
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	SUBQ    $8, R10
	JMP     cblock8

cdone:
	VZEROUPPER
	RET

// func axpyI8AVX2(a float32, w *int8, y *float32, n int)
// n a multiple of 8.
TEXT ·axpyI8AVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS a+0(FP), Y8
	MOVQ w+8(FP), R11
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), DX

dloop32:
	CMPQ DX, $32
	JLT  dloop8
	WIDEN8(0, Y9)
	WIDEN8(8, Y10)
	WIDEN8(16, Y11)
	WIDEN8(24, Y12)
	VFMADD213PS (DI), Y8, Y9
	VFMADD213PS 32(DI), Y8, Y10
	VFMADD213PS 64(DI), Y8, Y11
	VFMADD213PS 96(DI), Y8, Y12
	VMOVUPS     Y9, (DI)
	VMOVUPS     Y10, 32(DI)
	VMOVUPS     Y11, 64(DI)
	VMOVUPS     Y12, 96(DI)
	ADDQ        $32, R11
	ADDQ        $128, DI
	SUBQ        $32, DX
	JMP         dloop32

dloop8:
	CMPQ DX, $8
	JLT  ddone
	WIDEN8(0, Y9)
	VFMADD213PS (DI), Y8, Y9
	VMOVUPS     Y9, (DI)
	ADDQ        $8, R11
	ADDQ        $32, DI
	SUBQ        $8, DX
	JMP         dloop8

ddone:
	VZEROUPPER
	RET
