package snn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestGemvT checks the transposed product against a plain loop for every
// shape that exercises the 64-column blocks, the 8-column blocks and the
// scalar tail, with a row stride wider than the output.
func TestGemvT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, nin := range []int{1, 3, 17, 64} {
		for _, nout := range []int{1, 7, 8, 9, 63, 64, 65, 72, 130, 300} {
			for _, pad := range []int{0, 5} {
				ldw := nout + pad
				w := make([]float32, nin*ldw)
				x := make([]float32, nin)
				y := make([]float32, nout)
				for i := range w {
					w[i] = float32(rng.NormFloat64())
				}
				for i := range x {
					if i%5 != 2 { // some zero inputs
						x[i] = float32(rng.NormFloat64())
					}
				}
				for i := range y {
					y[i] = float32(rng.NormFloat64())
				}
				want := make([]float64, nout)
				for c := range want {
					want[c] = float64(y[c])
					for j := range x {
						want[c] += float64(x[j]) * float64(w[j*ldw+c])
					}
				}
				gemvT(y, w, x, ldw)
				for c := range y {
					if d := math.Abs(float64(y[c]) - want[c]); d > 1e-4*(1+math.Abs(want[c])) {
						t.Fatalf("nin %d nout %d ldw %d: y[%d] = %v, want %v", nin, nout, ldw, c, y[c], want[c])
					}
				}
			}
		}
	}
}

func BenchmarkGemvT(b *testing.B) {
	for _, sh := range [][2]int{{256, 768}, {384, 1280}, {768, 256}} {
		nin, nout := sh[0], sh[1]
		w := make([]float32, nin*nout)
		x := make([]float32, nin)
		y := make([]float32, nout)
		for i := range w {
			w[i] = float32(i%7) * 0.1
		}
		for i := range x {
			x[i] = 0.5
		}
		for _, l := range isaLevels() {
			b.Run(fmt.Sprintf("%dx%d/%v", nin, nout, l), func(b *testing.B) {
				b.SetBytes(int64(4 * nin * nout))
				withISA(l, func() {
					for b.Loop() {
						gemvT(y, w, x, nout)
					}
				})
			})
		}
		b.Run(fmt.Sprintf("%dx%d/gonum", nin, nout), func(b *testing.B) {
			b.SetBytes(int64(4 * nin * nout))
			for b.Loop() {
				gonum.Implementation{}.Sgemv(blas.Trans, nin, nout, 1, w, nout, x, 1, 1, y, 1)
			}
		})
	}
}

// BenchmarkGemm4 compares four slots' dense products done four at a time
// (gemm4T, each weight loaded once) with the per-slot path (gemvT over
// 128-column blocks, the slots sharing each block while it is cached).
func BenchmarkGemm4(b *testing.B) {
	for _, sh := range [][2]int{{256, 768}, {384, 1280}, {768, 256}} {
		nin, nout := sh[0], sh[1]
		w := make([]float32, nin*nout)
		wb := make([]uint16, nin*nout)
		for i := range w {
			w[i] = float32(i%7) * 0.1
			wb[i] = toBF16(w[i])
		}
		var xs, ys [4][]float32
		for s := range 4 {
			xs[s], ys[s] = make([]float32, nin), make([]float32, nout)
			for i := range xs[s] {
				xs[s][i] = 0.5
			}
		}
		xi := make([]float32, 4*nin)
		interleave4(xi, &xs)
		perSlot := func(bf16 bool) {
			for b0 := 0; b0 < nout; b0 += 128 {
				b1 := min(b0+128, nout)
				for s := range 4 {
					if bf16 {
						gemvTBF16(ys[s][b0:b1], wb[b0:], xs[s], nout)
					} else {
						gemvT(ys[s][b0:b1], w[b0:], xs[s], nout)
					}
				}
			}
		}
		for _, bf16 := range []bool{false, true} {
			prec := "float32"
			if bf16 {
				prec = "bfloat16"
			}
			b.Run(fmt.Sprintf("%dx%d/%s/per-slot", nin, nout, prec), func(b *testing.B) {
				for b.Loop() {
					perSlot(bf16)
				}
			})
			b.Run(fmt.Sprintf("%dx%d/%s/gemm4", nin, nout, prec), func(b *testing.B) {
				for b.Loop() {
					if bf16 {
						gemm4TBF16(&ys, &xs, xi, wb, nout)
					} else {
						gemm4T(&ys, &xs, xi, w, nout)
					}
				}
			})
		}
	}
}

// BenchmarkVectorKernels measures the elementwise kernels on every kernel
// set this CPU runs, at a length with a tail (1000 = 62·16 + 8) and at one
// whose operands are past the L2 cache.
func BenchmarkVectorKernels(b *testing.B) {
	for _, n := range []int{1000, 1 << 20} {
		rng := rand.New(rand.NewPCG(3, uint64(n)))
		vec := func() []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = rng.Float32()
			}
			return v
		}
		x1, x2, g1, g2, u, y := vec(), vec(), vec(), vec(), vec(), vec()
		wb, wq := make([]uint16, n), make([]int8, n)
		for i := range n {
			wb[i], wq[i] = toBF16(rng.Float32()), int8(rng.IntN(256)-128)
		}
		cand := make([]int32, n)
		frozen := frozenBits(u) // about every other neuron held
		// The states stay bounded: every update is a contraction toward
		// its input.
		kernels := []struct {
			name string
			run  func()
		}{
			{"axpby", func() { axpby(0.5, y, 0.5, x1) }},
			{"scal", func() { scal(1, y) }},
			{"nextAbove", func() { nextAbove(u, 2, 0) }}, // u < 2: a full scan
			{"axpyBF16", func() { axpyBF16(1e-3, wb, y); scal(0.5, y) }},
			{"axpyI8", func() { axpyI8(1e-3, wq, y); scal(0.5, y) }},
			{"lifUpdate", func() { lifUpdate(0.5, 0.25, 0.6, u, x1, x2, frozen, cand) }},
			{"lifChain", func() { lifChain(0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0.6, g1, x1, g2, x2, u, frozen, cand) }},
		}
		for _, k := range kernels {
			for _, l := range isaLevels() {
				b.Run(fmt.Sprintf("%s/n=%d/%v", k.name, n, l), func(b *testing.B) {
					withISA(l, func() {
						for b.Loop() {
							k.run()
						}
					})
				})
			}
		}
	}
}
