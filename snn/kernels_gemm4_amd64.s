//go:build amd64 && !noasm

#include "textflag.h"

// The four-slot dense kernels: the product of one weight matrix with the
// inputs of four batch slots, each weight loaded once for the four. Every
// output is the same chain of fused multiply-adds as gemvT's, in the same
// order (j = 0, 1, ... nin−1), so the sums are bit-identical to four
// gemvT calls.
//
// xi holds the four inputs interleaved: xi[4j+s] = x_s[j].
//
// Registers: the four output pointers are reloaded from the arguments into
// BX at each block's load and store; AX is the block's first column, R10
// the columns left; the inner loop walks the weight rows (R11, stride R9)
// and the interleaved inputs (R12, from DX up to R8).

// LOAD4(off, ...) loads 16 outputs of each slot at column AX, byte offset off.
#define LOAD4(off, z0, z1, z2, z3) \
	MOVQ    y0+0(FP), BX      \
	VMOVUPS off(BX)(AX*4), z0 \
	MOVQ    y1+8(FP), BX      \
	VMOVUPS off(BX)(AX*4), z1 \
	MOVQ    y2+16(FP), BX     \
	VMOVUPS off(BX)(AX*4), z2 \
	MOVQ    y3+24(FP), BX     \
	VMOVUPS off(BX)(AX*4), z3

#define STORE4(off, z0, z1, z2, z3) \
	MOVQ    y0+0(FP), BX      \
	VMOVUPS z0, off(BX)(AX*4) \
	MOVQ    y1+8(FP), BX      \
	VMOVUPS z1, off(BX)(AX*4) \
	MOVQ    y2+16(FP), BX     \
	VMOVUPS z2, off(BX)(AX*4) \
	MOVQ    y3+24(FP), BX     \
	VMOVUPS z3, off(BX)(AX*4)

#define LOAD4M(z0, z1, z2, z3) \
	MOVQ      y0+0(FP), BX          \
	VMOVUPS.Z (BX)(AX*4), K1, z0    \
	MOVQ      y1+8(FP), BX          \
	VMOVUPS.Z (BX)(AX*4), K1, z1    \
	MOVQ      y2+16(FP), BX         \
	VMOVUPS.Z (BX)(AX*4), K1, z2    \
	MOVQ      y3+24(FP), BX         \
	VMOVUPS.Z (BX)(AX*4), K1, z3

#define STORE4M(z0, z1, z2, z3) \
	MOVQ    y0+0(FP), BX         \
	VMOVUPS z0, K1, (BX)(AX*4)   \
	MOVQ    y1+8(FP), BX         \
	VMOVUPS z1, K1, (BX)(AX*4)   \
	MOVQ    y2+16(FP), BX        \
	VMOVUPS z2, K1, (BX)(AX*4)   \
	MOVQ    y3+24(FP), BX        \
	VMOVUPS z3, K1, (BX)(AX*4)

// FMA64: the four slots' broadcast inputs at (R12) times the 64 weights in
// Z16..Z19, into the sixteen accumulators Z0..Z15.
#define FMA64 \
	VBROADCASTSS 0(R12), Z20      \
	VBROADCASTSS 4(R12), Z21      \
	VBROADCASTSS 8(R12), Z22      \
	VBROADCASTSS 12(R12), Z23     \
	VFMADD231PS  Z16, Z20, Z0     \
	VFMADD231PS  Z17, Z20, Z1     \
	VFMADD231PS  Z18, Z20, Z2     \
	VFMADD231PS  Z19, Z20, Z3     \
	VFMADD231PS  Z16, Z21, Z4     \
	VFMADD231PS  Z17, Z21, Z5     \
	VFMADD231PS  Z18, Z21, Z6     \
	VFMADD231PS  Z19, Z21, Z7     \
	VFMADD231PS  Z16, Z22, Z8     \
	VFMADD231PS  Z17, Z22, Z9     \
	VFMADD231PS  Z18, Z22, Z10    \
	VFMADD231PS  Z19, Z22, Z11    \
	VFMADD231PS  Z16, Z23, Z12    \
	VFMADD231PS  Z17, Z23, Z13    \
	VFMADD231PS  Z18, Z23, Z14    \
	VFMADD231PS  Z19, Z23, Z15

// FMA16: the same for the 16 weights in Z16 and the accumulators Z0..Z3.
#define FMA16 \
	VBROADCASTSS 0(R12), Z20  \
	VBROADCASTSS 4(R12), Z21  \
	VBROADCASTSS 8(R12), Z22  \
	VBROADCASTSS 12(R12), Z23 \
	VFMADD231PS  Z16, Z20, Z0 \
	VFMADD231PS  Z16, Z21, Z1 \
	VFMADD231PS  Z16, Z22, Z2 \
	VFMADD231PS  Z16, Z23, Z3

// SETUP(shift) reads the common arguments; shift is log2 of a weight's size.
#define SETUP(shift) \
	MOVQ  w+32(FP), SI     \
	MOVQ  xi+40(FP), DX    \
	MOVQ  nin+48(FP), R8   \
	SHLQ  $4, R8           \
	ADDQ  DX, R8           \
	MOVQ  ldw+56(FP), R9   \
	SHLQ  $shift, R9       \
	MOVQ  cols+64(FP), R10 \
	XORQ  AX, AX

// MASK16 sets K1 to the min(R10, 16) low bits.
#define MASK16 \
	MOVQ  $16, CX      \
	CMPQ  R10, CX      \
	CMOVQLT R10, CX    \
	MOVL  $1, BX       \
	SHLL  CX, BX       \
	DECL  BX           \
	KMOVW BX, K1

// The AVX2 four-slot kernels: 16 columns of four slots in eight
// accumulators, then 8 columns in four; the caller does the last cols mod
// 8 columns with gemvT. The macros above serve them too (LOAD4, STORE4 and
// SETUP take any register names).

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

// The weight loads: 8 weights at off(R11) as float32s into dst.
#define W32(off, dst) VMOVUPS off(R11), dst
#define WBF16(off, dst) \
	VPMOVZXWD off(R11), dst \
	VPSLLD    $16, dst, dst
#define WI8(off, dst) \
	VPMOVSXBD off(R11), dst \
	VCVTDQ2PS dst, dst

// func gemm4TAVX512(y0, y1, y2, y3, w, xi *float32, nin, ldw, cols int)
TEXT ·gemm4TAVX512(SB), NOSPLIT, $0-72
	SETUP(2)

f64:
	CMPQ R10, $64
	JLT  f16
	LOAD4(0, Z0, Z4, Z8, Z12)
	LOAD4(64, Z1, Z5, Z9, Z13)
	LOAD4(128, Z2, Z6, Z10, Z14)
	LOAD4(192, Z3, Z7, Z11, Z15)
	LEAQ (SI)(AX*4), R11
	MOVQ DX, R12

f64row:
	CMPQ    R12, R8
	JGE     f64store
	VMOVUPS (R11), Z16
	VMOVUPS 64(R11), Z17
	VMOVUPS 128(R11), Z18
	VMOVUPS 192(R11), Z19
	FMA64
	ADDQ    R9, R11
	ADDQ    $16, R12
	JMP     f64row

f64store:
	STORE4(0, Z0, Z4, Z8, Z12)
	STORE4(64, Z1, Z5, Z9, Z13)
	STORE4(128, Z2, Z6, Z10, Z14)
	STORE4(192, Z3, Z7, Z11, Z15)
	ADDQ $64, AX
	SUBQ $64, R10
	JMP  f64

f16:
	TESTQ R10, R10
	JLE   fdone
	MASK16
	LOAD4M(Z0, Z1, Z2, Z3)
	LEAQ (SI)(AX*4), R11
	MOVQ DX, R12

f16row:
	CMPQ      R12, R8
	JGE       f16store
	VMOVUPS.Z (R11), K1, Z16
	FMA16
	ADDQ      R9, R11
	ADDQ      $16, R12
	JMP       f16row

f16store:
	STORE4M(Z0, Z1, Z2, Z3)
	ADDQ $16, AX
	SUBQ $16, R10
	JMP  f16

fdone:
	VZEROUPPER
	RET

// WIDEN(off, dst) loads 16 bfloat16 weights at off(R11) as float32s.
#define WIDEN(off, dst) \
	VPMOVZXWD off(R11), dst \
	VPSLLD    $16, dst, dst

// func gemm4TBF16AVX512(y0, y1, y2, y3 *float32, w *uint16, xi *float32, nin, ldw, cols int)
TEXT ·gemm4TBF16AVX512(SB), NOSPLIT, $0-72
	SETUP(1)

b64:
	CMPQ R10, $64
	JLT  b16
	LOAD4(0, Z0, Z4, Z8, Z12)
	LOAD4(64, Z1, Z5, Z9, Z13)
	LOAD4(128, Z2, Z6, Z10, Z14)
	LOAD4(192, Z3, Z7, Z11, Z15)
	LEAQ (SI)(AX*2), R11
	MOVQ DX, R12

b64row:
	CMPQ R12, R8
	JGE  b64store
	WIDEN(0, Z16)
	WIDEN(32, Z17)
	WIDEN(64, Z18)
	WIDEN(96, Z19)
	FMA64
	ADDQ R9, R11
	ADDQ $16, R12
	JMP  b64row

b64store:
	STORE4(0, Z0, Z4, Z8, Z12)
	STORE4(64, Z1, Z5, Z9, Z13)
	STORE4(128, Z2, Z6, Z10, Z14)
	STORE4(192, Z3, Z7, Z11, Z15)
	ADDQ $64, AX
	SUBQ $64, R10
	JMP  b64

b16:
	TESTQ R10, R10
	JLE   bdone
	MASK16
	LOAD4M(Z0, Z1, Z2, Z3)
	LEAQ (SI)(AX*2), R11
	MOVQ DX, R12

b16row:
	CMPQ        R12, R8
	JGE         b16store
	VMOVDQU16.Z (R11), K1, Y16
	VPMOVZXWD   Y16, Z16
	VPSLLD      $16, Z16, Z16
	FMA16
	ADDQ        R9, R11
	ADDQ        $16, R12
	JMP         b16row

b16store:
	STORE4M(Z0, Z1, Z2, Z3)
	ADDQ $16, AX
	SUBQ $16, R10
	JMP  b16

bdone:
	VZEROUPPER
	RET

// WIDEN4(off, dst) loads 16 int8 weights at off(R11) as float32s.
#define WIDEN4(off, dst) \
	VPMOVSXBD off(R11), dst \
	VCVTDQ2PS dst, dst

// func gemm4TI8AVX512(y0, y1, y2, y3 *float32, w *int8, xi *float32, nin, ldw, cols int)
TEXT ·gemm4TI8AVX512(SB), NOSPLIT, $0-72
	SETUP(0)

b64:
	CMPQ R10, $64
	JLT  b16
	LOAD4(0, Z0, Z4, Z8, Z12)
	LOAD4(64, Z1, Z5, Z9, Z13)
	LOAD4(128, Z2, Z6, Z10, Z14)
	LOAD4(192, Z3, Z7, Z11, Z15)
	LEAQ (SI)(AX*1), R11
	MOVQ DX, R12

b64row:
	CMPQ R12, R8
	JGE  b64store
	WIDEN4(0, Z16)
	WIDEN4(16, Z17)
	WIDEN4(32, Z18)
	WIDEN4(48, Z19)
	FMA64
	ADDQ R9, R11
	ADDQ $16, R12
	JMP  b64row

b64store:
	STORE4(0, Z0, Z4, Z8, Z12)
	STORE4(64, Z1, Z5, Z9, Z13)
	STORE4(128, Z2, Z6, Z10, Z14)
	STORE4(192, Z3, Z7, Z11, Z15)
	ADDQ $64, AX
	SUBQ $64, R10
	JMP  b64

b16:
	TESTQ R10, R10
	JLE   bdone
	MASK16
	LOAD4M(Z0, Z1, Z2, Z3)
	LEAQ (SI)(AX*1), R11
	MOVQ DX, R12

b16row:
	CMPQ        R12, R8
	JGE         b16store
	VMOVDQU8.Z  (R11), K1, X16
	VPMOVSXBD   X16, Z16
	VCVTDQ2PS   Z16, Z16
	FMA16
	ADDQ        R9, R11
	ADDQ        $16, R12
	JMP         b16row

b16store:
	STORE4M(Z0, Z1, Z2, Z3)
	ADDQ $16, AX
	SUBQ $16, R10
	JMP  b16

bdone:
	VZEROUPPER
	RET

// func gemm4TAVX2(y0, y1, y2, y3, w, xi *float32, nin, ldw, cols int)
// cols a multiple of 8.
TEXT ·gemm4TAVX2(SB), NOSPLIT, $0-72
	SETUP(2)

f16:
	CMPQ R10, $16
	JLT  f8
	LOAD4(0, Y0, Y2, Y4, Y6)
	LOAD4(32, Y1, Y3, Y5, Y7)
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
	STORE4(0, Y0, Y2, Y4, Y6)
	STORE4(32, Y1, Y3, Y5, Y7)
	ADDQ $16, AX
	SUBQ $16, R10
	JMP  f16

f8:
	CMPQ R10, $8
	JLT  fdone
	LOAD4(0, Y0, Y1, Y2, Y3)
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
	STORE4(0, Y0, Y1, Y2, Y3)
	ADDQ $8, AX
	SUBQ $8, R10
	JMP  f8

fdone:
	VZEROUPPER
	RET

// func gemm4TBF16AVX2(y0, y1, y2, y3 *float32, w *uint16, xi *float32, nin, ldw, cols int)
// cols a multiple of 8.
TEXT ·gemm4TBF16AVX2(SB), NOSPLIT, $0-72
	SETUP(1)

b16:
	CMPQ R10, $16
	JLT  b8
	LOAD4(0, Y0, Y2, Y4, Y6)
	LOAD4(32, Y1, Y3, Y5, Y7)
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
	STORE4(0, Y0, Y2, Y4, Y6)
	STORE4(32, Y1, Y3, Y5, Y7)
	ADDQ $16, AX
	SUBQ $16, R10
	JMP  b16

b8:
	CMPQ R10, $8
	JLT  bdone
	LOAD4(0, Y0, Y1, Y2, Y3)
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
	STORE4(0, Y0, Y1, Y2, Y3)
	ADDQ $8, AX
	SUBQ $8, R10
	JMP  b8

bdone:
	VZEROUPPER
	RET

// func gemm4TI8AVX2(y0, y1, y2, y3 *float32, w *int8, xi *float32, nin, ldw, cols int)
// cols a multiple of 8.
TEXT ·gemm4TI8AVX2(SB), NOSPLIT, $0-72
	SETUP(0)

i16:
	CMPQ R10, $16
	JLT  i8
	LOAD4(0, Y0, Y2, Y4, Y6)
	LOAD4(32, Y1, Y3, Y5, Y7)
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
	STORE4(0, Y0, Y2, Y4, Y6)
	STORE4(32, Y1, Y3, Y5, Y7)
	ADDQ $16, AX
	SUBQ $16, R10
	JMP  i16

i8:
	CMPQ R10, $8
	JLT  idone
	LOAD4(0, Y0, Y1, Y2, Y3)
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
	STORE4(0, Y0, Y1, Y2, Y3)
	ADDQ $8, AX
	SUBQ $8, R10
	JMP  i8

idone:
	VZEROUPPER
	RET
