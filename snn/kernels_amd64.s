//go:build amd64 && !noasm

#include "textflag.h"

// func axpbyAVX2(a, b float32, y, x *float32, n int)
// y[i] = a*y[i] + b*x[i]
TEXT ·axpbyAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS a+0(FP), Y0
	VBROADCASTSS b+4(FP), Y1
	MOVQ y+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	XORQ AX, AX

loop32:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $32
	JLT  loop8
	VMULPS      (DI)(AX*4), Y0, Y2
	VMULPS      32(DI)(AX*4), Y0, Y3
	VMULPS      64(DI)(AX*4), Y0, Y4
	VMULPS      96(DI)(AX*4), Y0, Y5
	VFMADD231PS (SI)(AX*4), Y1, Y2
	VFMADD231PS 32(SI)(AX*4), Y1, Y3
	VFMADD231PS 64(SI)(AX*4), Y1, Y4
	VFMADD231PS 96(SI)(AX*4), Y1, Y5
	VMOVUPS     Y2, (DI)(AX*4)
	VMOVUPS     Y3, 32(DI)(AX*4)
	VMOVUPS     Y4, 64(DI)(AX*4)
	VMOVUPS     Y5, 96(DI)(AX*4)
	ADDQ        $32, AX
	JMP         loop32

loop8:
	CMPQ DX, $8
	JLT  tail
	VMULPS      (DI)(AX*4), Y0, Y2
	VFMADD231PS (SI)(AX*4), Y1, Y2
	VMOVUPS     Y2, (DI)(AX*4)
	ADDQ        $8, AX
	SUBQ        $8, DX
	JMP         loop8

tail:
	CMPQ AX, CX
	JGE  done
	VMOVSS      (DI)(AX*4), X2
	VMULSS      X0, X2, X2
	VFMADD231SS (SI)(AX*4), X1, X2
	VMOVSS      X2, (DI)(AX*4)
	INCQ        AX
	JMP         tail

done:
	VZEROUPPER
	RET

// func scalAVX2(a float32, y *float32, n int)
// y[i] = a*y[i]
TEXT ·scalAVX2(SB), NOSPLIT, $0-24
	VBROADCASTSS a+0(FP), Y0
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	XORQ AX, AX

sloop32:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $32
	JLT  sloop8
	VMULPS  (DI)(AX*4), Y0, Y2
	VMULPS  32(DI)(AX*4), Y0, Y3
	VMULPS  64(DI)(AX*4), Y0, Y4
	VMULPS  96(DI)(AX*4), Y0, Y5
	VMOVUPS Y2, (DI)(AX*4)
	VMOVUPS Y3, 32(DI)(AX*4)
	VMOVUPS Y4, 64(DI)(AX*4)
	VMOVUPS Y5, 96(DI)(AX*4)
	ADDQ    $32, AX
	JMP     sloop32

sloop8:
	CMPQ DX, $8
	JLT  stail
	VMULPS  (DI)(AX*4), Y0, Y2
	VMOVUPS Y2, (DI)(AX*4)
	ADDQ    $8, AX
	SUBQ    $8, DX
	JMP     sloop8

stail:
	CMPQ AX, CX
	JGE  sdone
	VMOVSS (DI)(AX*4), X2
	VMULSS X0, X2, X2
	VMOVSS X2, (DI)(AX*4)
	INCQ   AX
	JMP    stail

sdone:
	VZEROUPPER
	RET

// func nextAboveAVX2(u *float32, n int, th float32) int
// Returns the first i in [0, n) with u[i] > th, or n.
TEXT ·nextAboveAVX2(SB), NOSPLIT, $0-32
	MOVQ         u+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS th+16(FP), Y0
	XORQ         AX, AX

nloop32:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $32
	JLT  nloop8
	VMOVUPS (SI)(AX*4), Y2
	VMOVUPS 32(SI)(AX*4), Y3
	VMOVUPS 64(SI)(AX*4), Y4
	VMOVUPS 96(SI)(AX*4), Y5
	VCMPPS  $0x1e, Y0, Y2, Y2
	VCMPPS  $0x1e, Y0, Y3, Y3
	VCMPPS  $0x1e, Y0, Y4, Y4
	VCMPPS  $0x1e, Y0, Y5, Y5
	VORPS   Y2, Y3, Y6
	VORPS   Y4, Y5, Y7
	VORPS   Y6, Y7, Y6
	VMOVMSKPS Y6, BX
	TESTL   BX, BX
	JNZ     nloop8
	ADDQ    $32, AX
	JMP     nloop32

nloop8:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $8
	JLT  ntail
	VMOVUPS   (SI)(AX*4), Y2
	VCMPPS    $0x1e, Y0, Y2, Y2
	VMOVMSKPS Y2, BX
	TESTL     BX, BX
	JNZ       nfound
	ADDQ      $8, AX
	JMP       nloop8

nfound:
	BSFL BX, BX
	ADDQ BX, AX
	JMP  nret

ntail:
	CMPQ    AX, CX
	JGE     nret
	VMOVSS  (SI)(AX*4), X2
	VUCOMISS X0, X2
	JA      nret
	INCQ    AX
	JMP     ntail

nret:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func gemvTAVX2(y, w, x *float32, nin, ldw, cols int)
// y[c] += Σ_j x[j]·w[j·ldw + c] for c < cols, cols a multiple of 8.
// Columns go in blocks of 64 held in eight accumulators while every row
// streams past, so y is read and written once per block and the FMAs of
// consecutive rows are independent.
TEXT ·gemvTAVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ nin+24(FP), R8
	MOVQ ldw+32(FP), R9
	SHLQ $2, R9
	MOVQ cols+40(FP), CX
	XORQ AX, AX

gblock64:
	MOVQ CX, R10
	SUBQ AX, R10
	CMPQ R10, $64
	JLT  gblock8
	VMOVUPS (DI)(AX*4), Y0
	VMOVUPS 32(DI)(AX*4), Y1
	VMOVUPS 64(DI)(AX*4), Y2
	VMOVUPS 96(DI)(AX*4), Y3
	VMOVUPS 128(DI)(AX*4), Y4
	VMOVUPS 160(DI)(AX*4), Y5
	VMOVUPS 192(DI)(AX*4), Y6
	VMOVUPS 224(DI)(AX*4), Y7
	LEAQ    (SI)(AX*4), R11
	XORQ    R12, R12

grow64:
	CMPQ         R12, R8
	JGE          gstore64
	VBROADCASTSS (DX)(R12*4), Y8
	VFMADD231PS  (R11), Y8, Y0
	VFMADD231PS  32(R11), Y8, Y1
	VFMADD231PS  64(R11), Y8, Y2
	VFMADD231PS  96(R11), Y8, Y3
	VFMADD231PS  128(R11), Y8, Y4
	VFMADD231PS  160(R11), Y8, Y5
	VFMADD231PS  192(R11), Y8, Y6
	VFMADD231PS  224(R11), Y8, Y7
	ADDQ         R9, R11
	INCQ         R12
	JMP          grow64

gstore64:
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	VMOVUPS Y4, 128(DI)(AX*4)
	VMOVUPS Y5, 160(DI)(AX*4)
	VMOVUPS Y6, 192(DI)(AX*4)
	VMOVUPS Y7, 224(DI)(AX*4)
	ADDQ    $64, AX
	JMP     gblock64

gblock8:
	CMPQ    R10, $8
	JLT     gdone
	VMOVUPS (DI)(AX*4), Y0
	LEAQ    (SI)(AX*4), R11
	XORQ    R12, R12

grow8:
	CMPQ         R12, R8
	JGE          gstore8
	VBROADCASTSS (DX)(R12*4), Y8
	VFMADD231PS  (R11), Y8, Y0
	ADDQ         R9, R11
	INCQ         R12
	JMP          grow8

gstore8:
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	SUBQ    $8, R10
	JMP     gblock8

gdone:
	VZEROUPPER
	RET
