//go:build !amd64 || noasm

package snn

// Without assembly (another architecture, or the build tag noasm) only the
// portable kernels exist.
const hostISA = isaGo

func axpbyAVX2(a, b float32, y, x *float32, n int)      { panic("unreachable") }
func scalAVX2(a float32, y *float32, n int)             { panic("unreachable") }
func nextAboveAVX2(u *float32, n int, th float32) int   { panic("unreachable") }
func gemvTAVX2(y, w, x *float32, nin, ldw, cols int)    { panic("unreachable") }
func axpbyAVX512(a, b float32, y, x *float32, n int)    { panic("unreachable") }
func scalAVX512(a float32, y *float32, n int)           { panic("unreachable") }
func nextAboveAVX512(u *float32, n int, th float32) int { panic("unreachable") }
func gemvTAVX512(y, w, x *float32, nin, ldw, cols int)  { panic("unreachable") }

func gatherTAVX2(y, w, a *float32, rows *int32, n, ldw, cols int)   { panic("unreachable") }
func gatherTAVX512(y, w, a *float32, rows *int32, n, ldw, cols int) { panic("unreachable") }

func gemvTBF16AVX512(y *float32, w *uint16, x *float32, nin, ldw, cols int) { panic("unreachable") }
func axpyBF16AVX512(a float32, w *uint16, y *float32, n int)                { panic("unreachable") }
func gemvTBF16AVX2(y *float32, w *uint16, x *float32, nin, ldw, cols int)   { panic("unreachable") }
func axpyBF16AVX2(a float32, w *uint16, y *float32, n int)                  { panic("unreachable") }

func gemm4TAVX512(y0, y1, y2, y3, w, xi *float32, nin, ldw, cols int) { panic("unreachable") }
func gemm4TBF16AVX512(y0, y1, y2, y3 *float32, w *uint16, xi *float32, nin, ldw, cols int) {
	panic("unreachable")
}

func lifUpdateAVX512(a, c, th float32, u, x1, x2 *float32, n int, frozen *uint64, cand *int32) int {
	panic("unreachable")
}

func gemvTI8AVX512(y *float32, w *int8, x *float32, nin, ldw, cols int) { panic("unreachable") }
func axpyI8AVX512(a float32, w *int8, y *float32, n int)                { panic("unreachable") }
func gemvTI8AVX2(y *float32, w *int8, x *float32, nin, ldw, cols int)   { panic("unreachable") }
func axpyI8AVX2(a float32, w *int8, y *float32, n int)                  { panic("unreachable") }
func gemm4TI8AVX512(y0, y1, y2, y3 *float32, w *int8, xi *float32, nin, ldw, cols int) {
	panic("unreachable")
}

func lifChainAVX512(a1, c1, a2, c2, a, c, th float32, g1, x1, g2, x2, u *float32, n int, frozen *uint64, cand *int32) int {
	panic("unreachable")
}

func gemm4TAVX2(y0, y1, y2, y3, w, xi *float32, nin, ldw, cols int) { panic("unreachable") }
func gemm4TBF16AVX2(y0, y1, y2, y3 *float32, w *uint16, xi *float32, nin, ldw, cols int) {
	panic("unreachable")
}
func gemm4TI8AVX2(y0, y1, y2, y3 *float32, w *int8, xi *float32, nin, ldw, cols int) {
	panic("unreachable")
}

func lifUpdateAVX2(a, c, th float32, u, x1, x2 *float32, n int, frozen *uint64, cand *int32) int {
	panic("unreachable")
}
func lifChainAVX2(a1, c1, a2, c2, a, c, th float32, g1, x1, g2, x2, u *float32, n int, frozen *uint64, cand *int32) int {
	panic("unreachable")
}
