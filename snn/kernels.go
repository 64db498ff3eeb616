package snn

import (
	"fmt"
	"math"
	"os"
	"sync"
	"time"
)

// The vector kernels of the simulator's hot loops. Each has a portable
// version here (the reference); kernels_amd64.go may replace them with
// assembly for AVX2+FMA or AVX-512, chosen once at start-up by CPU feature.
//
// Every implementation of a kernel computes the same thing in the same
// order with the same roundings, so results are bit-identical whichever
// runs: a multiply-add is one fused operation (fma32) everywhere, and the
// dense product sums each output column over its inputs in index order.
// kernels_test.go checks every implementation this CPU can run against the
// reference, bit for bit, by table and by fuzz target. Building with the
// tag noasm leaves only the portable code.

// isaLevel is the instruction set the kernels use.
type isaLevel int

const (
	isaGo     isaLevel = iota // portable Go
	isaAVX2                   // AVX2 and FMA
	isaAVX512                 // AVX-512 F, BW, VL, DQ
)

func (l isaLevel) String() string {
	return [...]string{"go", "avx2", "avx512"}[l]
}

// isa is the level in use: hostISA, unless the environment variable
// NEURO_KERNELS or a test lowers it.
var isa = capISA(hostISA, os.Getenv("NEURO_KERNELS"))

// capISA returns host, or the lower level named by limit ("avx2", "go"),
// so that one machine can run and measure the kernel sets of lesser ones.
// A level above the host's, or an unknown name, leaves host.
func capISA(host isaLevel, limit string) isaLevel {
	for l := isaGo; l < host; l++ {
		if l.String() == limit {
			return l
		}
	}
	return host
}

// KernelISA names the instruction set the simulator's vector kernels use
// on this machine: "avx512", "avx2" or "go" (portable; also under the
// build tag noasm, or with NEURO_KERNELS=go; NEURO_KERNELS=avx2 caps an
// AVX-512 machine at AVX2).
func KernelISA() string { return isa.String() }

// vecMin is the length from which the assembly kernels pay for their call.
const vecMin = 16

// fma32 is a·b + c rounded once to float32, as a hardware fused
// multiply-add computes it. math.FMA rounds the exact value once to
// float64; converting that to float32 rounds a second time, which can
// differ from one rounding only when the float64 lands exactly on a
// float32 halfway point (or below float32's normal range): those rare
// cases take fma32Odd. An explicit conversion keeps the compiler from
// fusing differently on architectures where it fuses.
func fma32(a, b, c float32) float32 {
	r := math.FMA(float64(a), float64(b), float64(c))
	// float32 keeps 23 of float64's 52 fraction bits: halfway is the first
	// dropped bit set and the other 28 clear. An exponent field below
	// 1023−126 is below float32's normal range.
	if bits := math.Float64bits(r); bits&(1<<29-1) == 1<<28 || bits&(0x7ff<<52) < 0x381<<52 {
		return fma32Odd(a, b, c)
	}
	return float32(r)
}

// fma32Odd computes fma32 through a float64 sum rounded to odd, which
// makes the second rounding, to float32, correct (float64 has more than
// 2·24+2 bits). The product of two float32s is exact in float64.
func fma32Odd(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	if math.IsInf(s, 0) || math.IsNaN(s) || s == 0 {
		return float32(s)
	}
	// The error of the float64 sum (Knuth's TwoSum).
	bb := s - p
	e := (p - (s - bb)) + (float64(c) - bb)
	if e != 0 {
		bits := math.Float64bits(s)
		if bits&1 == 0 {
			if (e > 0) == (s > 0) {
				bits++
			} else {
				bits--
			}
			s = math.Float64frombits(bits)
		}
	}
	return float32(s)
}

// axpby sets y = a·y + b·x (one rounding of b·x + (a·y)).
func axpby(a float32, y []float32, b float32, x []float32) {
	x = x[:len(y)]
	if len(y) >= vecMin {
		switch isa {
		case isaAVX512:
			axpbyAVX512(a, b, &y[0], &x[0], len(y))
			return
		case isaAVX2:
			axpbyAVX2(a, b, &y[0], &x[0], len(y))
			return
		}
	}
	axpbyGo(a, y, b, x)
}

func axpbyGo(a float32, y []float32, b float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] = fma32(b, x[i], float32(a*y[i]))
	}
}

// axpy sets y = y + a·x (one rounding).
func axpy(a float32, x, y []float32) {
	x = x[:len(y)]
	if len(y) >= vecMin {
		switch isa {
		case isaAVX512:
			axpbyAVX512(1, a, &y[0], &x[0], len(y))
			return
		case isaAVX2:
			axpbyAVX2(1, a, &y[0], &x[0], len(y))
			return
		}
	}
	for i := range y {
		y[i] = fma32(a, x[i], y[i])
	}
}

// scal sets x = a·x.
func scal(a float32, x []float32) {
	if len(x) >= vecMin {
		switch isa {
		case isaAVX512:
			scalAVX512(a, &x[0], len(x))
			return
		case isaAVX2:
			scalAVX2(a, &x[0], len(x))
			return
		}
	}
	for i := range x {
		x[i] *= a
	}
}

// addTo sets y = y + x.
func addTo(y, x []float32) {
	x = x[:len(y)]
	if len(y) >= vecMin {
		switch isa {
		case isaAVX512:
			axpbyAVX512(1, 1, &y[0], &x[0], len(y))
			return
		case isaAVX2:
			axpbyAVX2(1, 1, &y[0], &x[0], len(y))
			return
		}
	}
	for i := range y {
		y[i] += x[i]
	}
}

// nextAbove returns the first index i >= from with u[i] > th, or len(u).
func nextAbove(u []float32, th float32, from int) int {
	if len(u)-from >= vecMin {
		switch isa {
		case isaAVX512:
			return from + nextAboveAVX512(&u[from], len(u)-from, th)
		case isaAVX2:
			return from + nextAboveAVX2(&u[from], len(u)-from, th)
		}
	}
	for i := from; i < len(u); i++ {
		if u[i] > th {
			return i
		}
	}
	return len(u)
}

// gemvT adds Σ_j x[j]·w[j·ldw : j·ldw+len(y)] to y: the product of a
// transposed (in × out, row stride ldw) weight matrix with a dense input.
// Each y[c] takes one fused multiply-add per input, in input order.
func gemvT(y, w, x []float32, ldw int) {
	if len(x) == 0 || len(y) == 0 {
		return
	}
	_ = w[(len(x)-1)*ldw+len(y)-1]
	cols := 0
	switch {
	case isa == isaAVX512:
		// Masked stores cover every column.
		gemvTAVX512(&y[0], &w[0], &x[0], len(x), ldw, len(y))
		return
	case isa == isaAVX2 && len(y) >= 8:
		cols = len(y) &^ 7
		gemvTAVX2(&y[0], &w[0], &x[0], len(x), ldw, cols)
	}
	if cols < len(y) {
		gemvTGo(y[cols:], w[cols:], x, ldw)
	}
}

func gemvTGo(y, w, x []float32, ldw int) {
	for j, xj := range x {
		row := w[j*ldw : j*ldw+len(y)]
		for i, v := range row {
			// fma32, inlined by hand: the compiler will not.
			r := math.FMA(float64(xj), float64(v), float64(y[i]))
			if bits := math.Float64bits(r); bits&(1<<29-1) == 1<<28 || bits&(0x7ff<<52) < 0x381<<52 {
				y[i] = fma32Odd(xj, v, y[i])
			} else {
				y[i] = float32(r)
			}
		}
	}
}

// lifUpdate is the fused step of a uniform leaky (or integrating) neuron
// with one or two inputs: u = fma(c, s, a·u) with s = x1, or (x1 + 0) + x2
// as gatherInput sums two inputs from zero, and bit i of mask set where
// th < u[i]. The results are bit-identical to gatherInput, axpby and
// nextAbove run one after the other, in one pass over the state instead of
// four. x2 may be nil; mask holds (len(u)+63)/64 words, and the bits past
// len(u) are left as they are.
func lifUpdate(a, c, th float32, u, x1, x2 []float32, mask []uint64) {
	n := len(u)
	x1, mask = x1[:n], mask[:(n+63)/64]
	var p2 *float32
	if x2 != nil {
		x2 = x2[:n]
		if n > 0 {
			p2 = &x2[0]
		}
	}
	done := 0
	switch {
	case isa == isaAVX512 && n > 0:
		lifUpdateAVX512(a, c, th, &u[0], &x1[0], p2, n, &mask[0])
		return
	case isa == isaAVX2 && n >= 8:
		done = n &^ 7
		lifUpdateAVX2(a, c, th, &u[0], &x1[0], p2, done, &mask[0])
	}
	for i := done; i < n; i++ {
		s := x1[i]
		if x2 != nil {
			s = (s + 0) + x2[i]
		}
		setBit(mask, i, th, fma32(c, s, float32(a*u[i])), u)
	}
}

// setBit stores v in u[i] and sets bit i of mask to th < v.
func setBit(mask []uint64, i int, th, v float32, u []float32) {
	u[i] = v
	if th < v {
		mask[i>>6] |= 1 << (i & 63)
	} else {
		mask[i>>6] &^= 1 << (i & 63)
	}
}

// lifChain is axpby(a1, g1, c1, x1), axpby(a2, g2, c2, x2) and then
// lifUpdate(a, c, th, u, g1, g2, mask), bit for bit, in one pass: two
// leaky integrators and the spiking neuron they alone feed.
func lifChain(a1, c1, a2, c2, a, c, th float32, g1, x1, g2, x2, u []float32, mask []uint64) {
	n := len(u)
	g1, x1, g2, x2, mask = g1[:n], x1[:n], g2[:n], x2[:n], mask[:(n+63)/64]
	done := 0
	switch {
	case isa == isaAVX512 && n > 0:
		lifChainAVX512(a1, c1, a2, c2, a, c, th, &g1[0], &x1[0], &g2[0], &x2[0], &u[0], n, &mask[0])
		return
	case isa == isaAVX2 && n >= 8:
		done = n &^ 7
		lifChainAVX2(a1, c1, a2, c2, a, c, th, &g1[0], &x1[0], &g2[0], &x2[0], &u[0], done, &mask[0])
	}
	for i := done; i < n; i++ {
		g1[i] = fma32(c1, x1[i], float32(a1*g1[i]))
		g2[i] = fma32(c2, x2[i], float32(a2*g2[i]))
		setBit(mask, i, th, fma32(c, (g1[i]+0)+g2[i], float32(a*u[i])), u)
	}
}

// gemm4T adds four slots' products to their outputs: ys[s] += (the
// weights' columns)·xs[s], with the same sums, bit for bit, as gemvT(ys[s],
// w, xs[s], ldw) for each s. xi holds the inputs interleaved
// (interleave4), from which the kernels broadcast the four slots' values
// of an input row together and load each weight once for the four.
func gemm4T(ys, xs *[4][]float32, xi, w []float32, ldw int) {
	gemm4(ys, xs, xi, w, ldw, gemvT, gemm4TAVX512, gemm4TAVX2)
}

// gemm4 runs a four-slot kernel (AVX-512, or AVX2 for whole blocks of 8
// columns, the rest one slot at a time), and the one-slot product four
// times without assembly.
func gemm4[W float32 | uint16 | int8](ys, xs *[4][]float32, xi []float32, w []W, ldw int,
	one func(y []float32, w []W, x []float32, ldw int),
	four512, four2 func(y0, y1, y2, y3 *float32, w *W, xi *float32, nin, ldw, cols int)) {
	nin, cols := len(xs[0]), len(ys[0])
	four, done := four512, cols
	if isa == isaAVX2 {
		four, done = four2, cols&^7
	}
	if isa == isaGo || nin == 0 || done == 0 {
		done = 0
	} else {
		checkGemm4(ys, xs, xi, len(w), ldw)
		four(&ys[0][0], &ys[1][0], &ys[2][0], &ys[3][0], &w[0], &xi[0], nin, ldw, done)
	}
	if done < cols {
		for s := range ys {
			one(ys[s][done:], w[done:], xs[s], ldw)
		}
	}
}

// checkGemm4 panics, as a slice access would, where a four-slot kernel
// would read or write out of bounds.
func checkGemm4(ys, xs *[4][]float32, xi []float32, nw, ldw int) {
	nin, cols := len(xs[0]), len(ys[0])
	for s := range ys {
		_ = ys[s][cols-1]
		_ = xs[s][nin-1]
	}
	_ = xi[4*nin-1]
	if (nin-1)*ldw+cols > nw {
		panic(fmt.Sprintf("snn: gemm4: %d weights, want %d", nw, (nin-1)*ldw+cols))
	}
}

// interleave4 writes xs's four inputs into xi as xi[4j+s] = xs[s][j].
func interleave4(xi []float32, xs *[4][]float32) {
	n := len(xs[0])
	xi = xi[:4*n]
	x0, x1, x2, x3 := xs[0][:n], xs[1][:n], xs[2][:n], xs[3][:n]
	for j := range n {
		xi[4*j], xi[4*j+1], xi[4*j+2], xi[4*j+3] = x0[j], x1[j], x2[j], x3[j]
	}
}

// PeakFLOPS measures the floating-point rate the dense kernel reaches when
// its operands sit in the L1 cache, on threads goroutines for about d: the
// compute roof of a roofline for this machine and kernel set (2 FLOPs per
// multiply-add). It is a measurement, not the datasheet figure.
func PeakFLOPS(threads int, d time.Duration) float64 {
	const nin, nout = 16, 256 // 16 KiB of weights
	threads = max(threads, 1)
	var wg sync.WaitGroup
	calls := make([]int64, threads)
	start := time.Now()
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, x, y := make([]float32, nin*nout), make([]float32, nin), make([]float32, nout)
			for i := range w {
				w[i] = 1e-3
			}
			for i := range x {
				x[i] = 1e-3
			}
			for time.Since(start) < d {
				for range 64 {
					gemvT(y, w, x, nout)
				}
				calls[t] += 64
			}
		}()
	}
	wg.Wait()
	var n int64
	for _, c := range calls {
		n += c
	}
	return float64(n) * 2 * nin * nout / time.Since(start).Seconds()
}
