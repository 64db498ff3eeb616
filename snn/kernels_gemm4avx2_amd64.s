//go:build amd64 && !noasm

#include "textflag.h"

// The four-slot dense kernels for AVX2 (kernels_gemm4_amd64.s has the
// AVX-512 ones and the contract): 16 columns of four slots in eight
// accumulators, then 8 columns in four; the caller does the last
// cols mod 8 columns with gemvT. Registers as there: y pointers reloaded
// into BX, AX the block's first column, R10 the columns left, R11 the
// weight row, R12 the interleaved inputs up to R8.

#define YLOAD4(off, r0, r1, r2, r3) \
	MOVQ    y0+0(FP), BX      \
	VMOVUPS off(BX)(AX*4), r0 \
	MOVQ    y1+8(FP), BX      \
	VMOVUPS off(BX)(AX*4), r1 \
	MOVQ    y2+16(FP), BX     \
	VMOVUPS off(BX)(AX*4), r2 \
	MOVQ    y3+24(FP), BX     \
	VMOVUPS off(BX)(AX*4), r3

#define YSTORE4(off, r0, r1, r2, r3) \
	MOVQ    y0+0(FP), BX      \
	VMOVUPS r0, off(BX)(AX*4) \
	MOVQ    y1+8(FP), BX      \
	VMOVUPS r1, off(BX)(AX*4) \
	MOVQ    y2+16(FP), BX     \
	VMOVUPS r2, off(BX)(AX*4) \
	MOVQ    y3+24(FP), BX     \
	VMOVUPS r3, off(BX)(AX*4)

// YFMA16: the four slots' inputs at (R12) times the 16 weights in Y8, Y9,
// into Y0..Y7 (slot s in Y(2s), Y(2s+1)).
#define YFMA16 \
	VBROADCASTSS 0(R12), Y10   \
	VBROADCASTSS 4(R12), Y11   \
	VBROADCASTSS 8(R12), Y12   \
	VBROADCASTSS 12(R12), Y13  \
	VFMADD231PS  Y8, Y10, Y0   \
	VFMADD231PS  Y9, Y10, Y1   \
	VFMADD231PS  Y8, Y11, Y2   \
	VFMADD231PS  Y9, Y11, Y3   \
	VFMADD231PS  Y8, Y12, Y4   \
	VFMADD231PS  Y9, Y12, Y5   \
	VFMADD231PS  Y8, Y13, Y6   \
	VFMADD231PS  Y9, Y13, Y7

// YFMA8: the same for the 8 weights in Y8, into Y0..Y3 (slot s in Ys).
#define YFMA8 \
	VBROADCASTSS 0(R12), Y10  \
	VBROADCASTSS 4(R12), Y11  \
	VBROADCASTSS 8(R12), Y12  \
	VBROADCASTSS 12(R12), Y13 \
	VFMADD231PS  Y8, Y10, Y0  \
	VFMADD231PS  Y8, Y11, Y1  \
	VFMADD231PS  Y8, Y12, Y2  \
	VFMADD231PS  Y8, Y13, Y3

#define YSETUP(shift) \
	MOVQ w+32(FP), SI     \
	MOVQ xi+40(FP), DX    \
	MOVQ nin+48(FP), R8   \
	SHLQ $4, R8           \
	ADDQ DX, R8           \
	MOVQ ldw+56(FP), R9   \
	SHLQ $shift, R9       \
	MOVQ cols+64(FP), R10 \
	XORQ AX, AX

// The weight loads: 8 weights at off(R11) as float32s into dst.
#define W32(off, dst) VMOVUPS off(R11), dst
#define WBF16(off, dst) \
	VPMOVZXWD off(R11), dst \
	VPSLLD    $16, dst, dst
#define WI8(off, dst) \
	VPMOVSXBD off(R11), dst \
	VCVTDQ2PS dst, dst

// func gemm4TAVX2(y0, y1, y2, y3, w, xi *float32, nin, ldw, cols int)
// cols a multiple of 8.
TEXT ·gemm4TAVX2(SB), NOSPLIT, $0-72
	YSETUP(2)

f16:
	CMPQ R10, $16
	JLT  f8
	YLOAD4(0, Y0, Y2, Y4, Y6)
	YLOAD4(32, Y1, Y3, Y5, Y7)
	LEAQ (SI)(AX*4), R11
	MOVQ DX, R12

f16row:
	CMPQ R12, R8
	JGE  f16store
	W32(0, Y8)
	W32(32, Y9)
	YFMA16
	ADDQ R9, R11
	ADDQ $16, R12
	JMP  f16row

f16store:
	YSTORE4(0, Y0, Y2, Y4, Y6)
	YSTORE4(32, Y1, Y3, Y5, Y7)
	ADDQ $16, AX
	SUBQ $16, R10
	JMP  f16

f8:
	CMPQ R10, $8
	JLT  fdone
	YLOAD4(0, Y0, Y1, Y2, Y3)
	LEAQ (SI)(AX*4), R11
	MOVQ DX, R12

f8row:
	CMPQ R12, R8
	JGE  f8store
	W32(0, Y8)
	YFMA8
	ADDQ R9, R11
	ADDQ $16, R12
	JMP  f8row

f8store:
	YSTORE4(0, Y0, Y1, Y2, Y3)
	ADDQ $8, AX
	SUBQ $8, R10
	JMP  f8

fdone:
	VZEROUPPER
	RET

// func gemm4TBF16AVX2(y0, y1, y2, y3 *float32, w *uint16, xi *float32, nin, ldw, cols int)
// cols a multiple of 8.
TEXT ·gemm4TBF16AVX2(SB), NOSPLIT, $0-72
	YSETUP(1)

b16:
	CMPQ R10, $16
	JLT  b8
	YLOAD4(0, Y0, Y2, Y4, Y6)
	YLOAD4(32, Y1, Y3, Y5, Y7)
	LEAQ (SI)(AX*2), R11
	MOVQ DX, R12

b16row:
	CMPQ R12, R8
	JGE  b16store
	WBF16(0, Y8)
	WBF16(16, Y9)
	YFMA16
	ADDQ R9, R11
	ADDQ $16, R12
	JMP  b16row

b16store:
	YSTORE4(0, Y0, Y2, Y4, Y6)
	YSTORE4(32, Y1, Y3, Y5, Y7)
	ADDQ $16, AX
	SUBQ $16, R10
	JMP  b16

b8:
	CMPQ R10, $8
	JLT  bdone
	YLOAD4(0, Y0, Y1, Y2, Y3)
	LEAQ (SI)(AX*2), R11
	MOVQ DX, R12

b8row:
	CMPQ R12, R8
	JGE  b8store
	WBF16(0, Y8)
	YFMA8
	ADDQ R9, R11
	ADDQ $16, R12
	JMP  b8row

b8store:
	YSTORE4(0, Y0, Y1, Y2, Y3)
	ADDQ $8, AX
	SUBQ $8, R10
	JMP  b8

bdone:
	VZEROUPPER
	RET

// func gemm4TI8AVX2(y0, y1, y2, y3 *float32, w *int8, xi *float32, nin, ldw, cols int)
// cols a multiple of 8.
TEXT ·gemm4TI8AVX2(SB), NOSPLIT, $0-72
	YSETUP(0)

i16:
	CMPQ R10, $16
	JLT  i8
	YLOAD4(0, Y0, Y2, Y4, Y6)
	YLOAD4(32, Y1, Y3, Y5, Y7)
	LEAQ (SI)(AX*1), R11
	MOVQ DX, R12

i16row:
	CMPQ R12, R8
	JGE  i16store
	WI8(0, Y8)
	WI8(8, Y9)
	YFMA16
	ADDQ R9, R11
	ADDQ $16, R12
	JMP  i16row

i16store:
	YSTORE4(0, Y0, Y2, Y4, Y6)
	YSTORE4(32, Y1, Y3, Y5, Y7)
	ADDQ $16, AX
	SUBQ $16, R10
	JMP  i16

i8:
	CMPQ R10, $8
	JLT  idone
	YLOAD4(0, Y0, Y1, Y2, Y3)
	LEAQ (SI)(AX*1), R11
	MOVQ DX, R12

i8row:
	CMPQ R12, R8
	JGE  i8store
	WI8(0, Y8)
	YFMA8
	ADDQ R9, R11
	ADDQ $16, R12
	JMP  i8row

i8store:
	YSTORE4(0, Y0, Y1, Y2, Y3)
	ADDQ $8, AX
	SUBQ $8, R10
	JMP  i8

idone:
	VZEROUPPER
	RET
