//go:build amd64 && !noasm

package snn

import "golang.org/x/sys/cpu"

// hostISA is the best kernel set this CPU runs. AVX-512 needs F for the
// arithmetic, BW for the 16-bit weight loads and VL/DQ for the masks.
var hostISA = func() isaLevel {
	x := cpu.X86
	switch {
	case x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512DQ && x.HasFMA:
		return isaAVX512
	case x.HasAVX2 && x.HasFMA:
		return isaAVX2
	}
	return isaGo
}()

//go:noescape
func axpbyAVX2(a, b float32, y, x *float32, n int)

//go:noescape
func scalAVX2(a float32, y *float32, n int)

//go:noescape
func nextAboveAVX2(u *float32, n int, th float32) int

//go:noescape
func gemvTAVX2(y, w, x *float32, nin, ldw, cols int)

//go:noescape
func axpbyAVX512(a, b float32, y, x *float32, n int)

//go:noescape
func scalAVX512(a float32, y *float32, n int)

//go:noescape
func nextAboveAVX512(u *float32, n int, th float32) int

//go:noescape
func gemvTAVX512(y, w, x *float32, nin, ldw, cols int)

//go:noescape
func gemvTBF16AVX512(y *float32, w *uint16, x *float32, nin, ldw, cols int)

//go:noescape
func axpyBF16AVX512(a float32, w *uint16, y *float32, n int)

//go:noescape
func gemvTBF16AVX2(y *float32, w *uint16, x *float32, nin, ldw, cols int)

//go:noescape
func axpyBF16AVX2(a float32, w *uint16, y *float32, n int)

//go:noescape
func gemm4TAVX512(y0, y1, y2, y3, w, xi *float32, nin, ldw, cols int)

//go:noescape
func gemm4TBF16AVX512(y0, y1, y2, y3 *float32, w *uint16, xi *float32, nin, ldw, cols int)

//go:noescape
func lifUpdateAVX512(a, c, th float32, u, x1, x2 *float32, n int, mask *uint64)

//go:noescape
func gemvTI8AVX512(y *float32, w *int8, x *float32, nin, ldw, cols int)

//go:noescape
func axpyI8AVX512(a float32, w *int8, y *float32, n int)

//go:noescape
func gemvTI8AVX2(y *float32, w *int8, x *float32, nin, ldw, cols int)

//go:noescape
func axpyI8AVX2(a float32, w *int8, y *float32, n int)

//go:noescape
func gemm4TI8AVX512(y0, y1, y2, y3 *float32, w *int8, xi *float32, nin, ldw, cols int)

//go:noescape
func lifChainAVX512(a1, c1, a2, c2, a, c, th float32, g1, x1, g2, x2, u *float32, n int, mask *uint64)

//go:noescape
func gemm4TAVX2(y0, y1, y2, y3, w, xi *float32, nin, ldw, cols int)

//go:noescape
func gemm4TBF16AVX2(y0, y1, y2, y3 *float32, w *uint16, xi *float32, nin, ldw, cols int)

//go:noescape
func gemm4TI8AVX2(y0, y1, y2, y3 *float32, w *int8, xi *float32, nin, ldw, cols int)

//go:noescape
func lifUpdateAVX2(a, c, th float32, u, x1, x2 *float32, n int, mask *uint64)

//go:noescape
func lifChainAVX2(a1, c1, a2, c2, a, c, th float32, g1, x1, g2, x2, u *float32, n int, mask *uint64)
