package snn

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// isaLevels are the kernel sets this CPU can run, the portable one first.
func isaLevels() []isaLevel {
	var ls []isaLevel
	for l := isaGo; l <= hostISA; l++ {
		ls = append(ls, l)
	}
	return ls
}

// withISA runs f with the kernels of level l.
func withISA(l isaLevel, f func()) {
	old := isa
	isa = l
	defer func() { isa = old }()
	f()
}

// sameBits reports the first index where a and b differ bit for bit
// (any NaN equals any NaN), or -1.
func sameBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
			return i
		}
	}
	return -1
}

// TestFMA32 checks the portable fused multiply-add against float64
// arithmetic where it is exact, and on halfway cases where a double
// rounding would differ.
func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		a, b, c := float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64()*1e-3)
		want := float32(math.FMA(float64(a), float64(b), float64(c)))
		got := fma32(a, b, c)
		// math.FMA rounds once to float64, then float32() again: the two
		// may differ only when float64 lands on a float32 halfway point.
		if got != want {
			s := math.FMA(float64(a), float64(b), float64(c))
			if math.Float64bits(s)&(1<<28-1) != 1<<28 {
				t.Fatalf("fma32(%v, %v, %v) = %v, want %v", a, b, c, got, want)
			}
		}
	}
	// (1 + 2^-23)·2^-24 + 1 = 1 + 2^-24 + 2^-47: rounded to float64 it
	// stays exact, so the test is of the float32 rounding (up, since above
	// the halfway point). 2^-24·(1 + 2^-23) + 1 with the product rounded
	// first would give the halfway point and round to even, 1.
	if got := fma32(1+1.0/(1<<23), 1.0/(1<<24), 1); got != 1+1.0/(1<<23) {
		t.Fatalf("fma32 near halfway: %v, want %v", got, float32(1+1.0/(1<<23)))
	}
	// 2^-24 + 2^-80 + 1 is a double-rounding case: float64 rounds it to
	// 1 + 2^-24 (halfway for float32), round-to-odd keeps it above.
	a, b := float32(1+1.0/(1<<23)), float32(1.0/(1<<24)+1.0/(1<<47))
	want := float32(1 + 1.0/(1<<23))
	if got := fma32(a, b, 1); got != want {
		t.Fatalf("fma32 double rounding: %v, want %v", got, want)
	}
}

// TestKernelsBitIdentical runs every kernel of every level this CPU has on
// the same inputs, over lengths that reach every block size and tail, and
// requires the results of the portable kernels bit for bit.
func TestKernelsBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	for _, n := range []int{1, 7, 15, 16, 17, 31, 63, 64, 65, 100, 127, 128, 129, 200, 300} {
		x, y0 := vec(n), vec(n)
		a, b := float32(rng.NormFloat64()), float32(rng.NormFloat64())
		th := float32(rng.NormFloat64()) + 1.5
		type gemvCase struct {
			w, x []float32
			ldw  int
		}
		var gemvs []gemvCase
		for _, nin := range []int{1, 5, 33} {
			for _, pad := range []int{0, 3} {
				c := gemvCase{w: vec(nin * (n + pad)), x: vec(nin), ldw: n + pad}
				c.x[0] = 0
				gemvs = append(gemvs, c)
			}
		}
		var ref [][]float32
		for _, l := range isaLevels() {
			var outs [][]float32
			withISA(l, func() {
				y := append([]float32(nil), y0...)
				axpby(a, y, b, x)
				outs = append(outs, y)
				y = append([]float32(nil), y0...)
				axpy(a, x, y)
				outs = append(outs, y)
				y = append([]float32(nil), y0...)
				scal(a, y)
				outs = append(outs, y)
				y = append([]float32(nil), y0...)
				addTo(y, x)
				outs = append(outs, y)
				for _, c := range gemvs {
					y = append([]float32(nil), y0...)
					gemvT(y, c.w, c.x, c.ldw)
					outs = append(outs, y)
				}
				var idx []float32
				for i := nextAbove(y0, th, 0); i < n; i = nextAbove(y0, th, i+1) {
					idx = append(idx, float32(i))
				}
				outs = append(outs, idx)
			})
			if ref == nil {
				ref = outs
				continue
			}
			for k := range outs {
				if len(outs[k]) != len(ref[k]) {
					t.Fatalf("n %d level %v result %d: length %d, want %d", n, l, k, len(outs[k]), len(ref[k]))
				}
				if i := sameBits(outs[k], ref[k]); i >= 0 {
					t.Fatalf("n %d level %v result %d: [%d] = %v, portable %v", n, l, k, i, outs[k][i], ref[k][i])
				}
			}
		}
	}
}

// fuzzFloats decodes fuzz bytes as float32s, at most n.
func fuzzFloats(b []byte, n int) []float32 {
	v := make([]float32, 0, min(n, len(b)/4))
	for i := 0; i+4 <= len(b) && len(v) < n; i += 4 {
		v = append(v, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return v
}

func fuzzSeeds(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 16, 37, 130, 400} {
		b := make([]byte, 4*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(rng.NormFloat64())))
		}
		f.Add(b, uint8(n%9), float32(0.9), float32(-1.25))
	}
}

// FuzzVectorKernels: axpby, axpy, scal, addTo and nextAbove agree bit for
// bit across levels on arbitrary bits (NaN, infinities, subnormals
// included).
func FuzzVectorKernels(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, off uint8, a, b float32) {
		v := fuzzFloats(data, 1024)
		n := len(v) / 2
		if n == 0 {
			return
		}
		x, y0 := v[:n], v[n:2*n]
		from := int(off) % n
		var ref [][]float32
		for _, l := range isaLevels() {
			var outs [][]float32
			withISA(l, func() {
				y := append([]float32(nil), y0...)
				axpby(a, y, b, x)
				outs = append(outs, y)
				y = append([]float32(nil), y0...)
				axpy(a, x, y)
				outs = append(outs, y)
				y = append([]float32(nil), y0...)
				scal(a, y)
				outs = append(outs, y)
				y = append([]float32(nil), y0...)
				addTo(y, x)
				outs = append(outs, y)
				outs = append(outs, []float32{float32(nextAbove(y0, a, from))})
			})
			if ref == nil {
				ref = outs
				continue
			}
			for k := range outs {
				if i := sameBits(outs[k], ref[k]); i >= 0 {
					t.Fatalf("n %d level %v result %d: [%d] = %v, portable %v", n, l, k, i, outs[k][i], ref[k][i])
				}
			}
		}
	})
}

// FuzzGemvT: the dense product agrees bit for bit across levels for
// arbitrary shapes, strides and bits.
func FuzzGemvT(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, shape uint8, _, _ float32) {
		v := fuzzFloats(data, 4096)
		nin := 1 + int(shape%7)
		pad := int(shape/7) % 5
		nout := (len(v) - nin) / (nin + 1) // y, x and w fit in v
		nout -= pad
		if nout <= 0 {
			return
		}
		ldw := nout + pad
		x, y0, w := v[:nin], v[nin:nin+nout], v[nin+nout:]
		if len(w) < (nin-1)*ldw+nout {
			return
		}
		var ref []float32
		for _, l := range isaLevels() {
			y := append([]float32(nil), y0...)
			withISA(l, func() { gemvT(y, w, x, ldw) })
			if ref == nil {
				ref = y
				continue
			}
			if i := sameBits(y, ref); i >= 0 {
				t.Fatalf("nin %d nout %d ldw %d level %v: [%d] = %v, portable %v", nin, nout, ldw, l, i, y[i], ref[i])
			}
		}
	})
}

// FuzzFMA32: the fast path of fma32 agrees with the round-to-odd one.
func FuzzFMA32(f *testing.F) {
	f.Add(float32(1+1.0/(1<<23)), float32(1.0/(1<<24)+1.0/(1<<47)), float32(1))
	f.Add(float32(1e-30), float32(1e-10), float32(-1e-40))
	f.Fuzz(func(t *testing.T, a, b, c float32) {
		got, want := fma32(a, b, c), fma32Odd(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("fma32(%v, %v, %v) = %v, round-to-odd %v", a, b, c, got, want)
		}
	})
}

// FuzzBF16Kernels: the bfloat16 product and column add agree bit for bit
// across levels, and with the float32 kernels over the widened weights.
func FuzzBF16Kernels(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, shape uint8, a, _ float32) {
		v := fuzzFloats(data, 4096)
		nin := 1 + int(shape%7)
		pad := int(shape/7) % 5
		nout := (len(v)-nin)/(nin+1) - pad
		if nout <= 0 {
			return
		}
		ldw := nout + pad
		x, y0, wf := v[:nin], v[nin:nin+nout], v[nin+nout:]
		if len(wf) < (nin-1)*ldw+nout {
			return
		}
		w := make([]uint16, len(wf))
		wide := make([]float32, len(wf))
		for i, f := range wf {
			w[i] = toBF16(f)
			wide[i] = fromBF16(w[i])
		}
		var ref [2][]float32
		withISA(isaGo, func() {
			ref[0] = append([]float32(nil), y0...)
			gemvT(ref[0], wide, x, ldw)
			ref[1] = append([]float32(nil), y0...)
			axpy(a, wide[:nout], ref[1])
		})
		for _, l := range isaLevels() {
			var got [2][]float32
			withISA(l, func() {
				got[0] = append([]float32(nil), y0...)
				gemvTBF16(got[0], w, x, ldw)
				got[1] = append([]float32(nil), y0...)
				axpyBF16(a, w[:nout], got[1])
			})
			for k := range got {
				if i := sameBits(got[k], ref[k]); i >= 0 {
					t.Fatalf("nin %d nout %d ldw %d level %v kernel %d: [%d] = %v, float32 portable %v", nin, nout, ldw, l, k, i, got[k][i], ref[k][i])
				}
			}
		}
	})
}

func TestToBF16(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{math.Float32frombits(0x3f808000), 0x3f80}, // halfway, to even
		{math.Float32frombits(0x3f818000), 0x3f82}, // halfway, to even (up)
		{math.Float32frombits(0x3f808001), 0x3f81},
		{float32(math.Inf(1)), 0x7f80},
		{math.MaxFloat32, 0x7f80}, // rounds to infinity
	} {
		if got := toBF16(c.in); got != c.want {
			t.Errorf("toBF16(%v) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	if nan := fromBF16(toBF16(float32(math.NaN()))); nan == nan {
		t.Errorf("toBF16(NaN) is not a NaN")
	}
}

// checkGemm4Levels runs the four-slot products at every level and compares
// them bit for bit with four portable gemvT calls over the widened weights
// (float32, bfloat16, int8), with the inputs and outputs cut from vals
// cyclically.
func checkGemm4Levels(t *testing.T, vals []float32, nin, nout, ldw int) {
	t.Helper()
	at := func(k int) float32 { return vals[k%len(vals)] }
	var xs, y0 [4][]float32
	k := 0
	for s := range 4 {
		xs[s], y0[s] = make([]float32, nin), make([]float32, nout)
		for j := range xs[s] {
			xs[s][j] = at(k)
			k++
		}
		for j := range y0[s] {
			y0[s][j] = at(k)
			k++
		}
	}
	n := (nin-1)*ldw + nout
	w, wideB, wideQ := make([]float32, n), make([]float32, n), make([]float32, n)
	wb, wq := make([]uint16, n), make([]int8, n)
	for i := range w {
		w[i] = at(k + 7*i)
		wb[i] = toBF16(w[i])
		wideB[i] = fromBF16(wb[i])
		wq[i] = int8(math.Float32bits(w[i]) >> 11)
		wideQ[i] = float32(wq[i])
	}
	xi := make([]float32, 4*nin)
	interleave4(xi, &xs)
	var ref [3][4][]float32
	withISA(isaGo, func() {
		for p, wide := range [][]float32{w, wideB, wideQ} {
			for s := range 4 {
				ref[p][s] = append([]float32(nil), y0[s]...)
				gemvT(ref[p][s], wide, xs[s], ldw)
			}
		}
	})
	for _, l := range isaLevels() {
		var got [4][4][]float32
		withISA(l, func() {
			for p := range got {
				for s := range 4 {
					got[p][s] = append([]float32(nil), y0[s]...)
				}
			}
			gemm4T(&got[0], &xs, xi, w, ldw)
			gemm4TBF16(&got[1], &xs, xi, wb, ldw)
			gemm4TI8(&got[2], &xs, xi, wq, ldw)
			for s := range 4 {
				gemvTI8(got[3][s], wq, xs[s], ldw)
			}
		})
		for p := range got {
			for s := range 4 {
				want := ref[min(p, 2)][s]
				if i := sameBits(got[p][s], want); i >= 0 {
					t.Fatalf("nin %d nout %d ldw %d level %v kernel %d slot %d: [%d] = %v, portable %v",
						nin, nout, ldw, l, p, s, i, got[p][s][i], want[i])
				}
			}
		}
		// The int8 column add against axpy over the widened weights.
		a := at(3)
		wantY := append([]float32(nil), y0[0]...)
		withISA(isaGo, func() { axpy(a, wideQ[:nout], wantY) })
		gotY := append([]float32(nil), y0[0]...)
		withISA(l, func() { axpyI8(a, wq[:nout], gotY) })
		if i := sameBits(gotY, wantY); i >= 0 {
			t.Fatalf("nout %d level %v axpyI8: [%d] = %v, portable %v", nout, l, i, gotY[i], wantY[i])
		}
	}
}

// TestGemm4BitIdentical covers the four-slot kernels' 64-column blocks,
// 16-column blocks and masked tails, and the int8 kernels' blocks.
func TestGemm4BitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vals := make([]float32, 997)
	for i := range vals {
		vals[i] = float32(rng.NormFloat64())
	}
	vals[5], vals[100] = float32(math.Inf(1)), float32(math.NaN())
	for _, nin := range []int{1, 2, 7, 33} {
		for _, nout := range []int{1, 15, 16, 17, 63, 64, 65, 130, 200} {
			for _, pad := range []int{0, 3} {
				checkGemm4Levels(t, vals, nin, nout, nout+pad)
			}
		}
	}
}

// FuzzGemm4: the four-slot products, and the int8 product and column add,
// agree bit for bit with gemvT and axpy over the widened weights, slot by
// slot, at every level, for arbitrary shapes and bits.
func FuzzGemm4(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, shape uint8, _, _ float32) {
		v := fuzzFloats(data, 4096)
		if len(v) == 0 {
			return
		}
		nin := 1 + int(shape%11)
		nout := 1 + int(shape)*len(v)%150
		checkGemm4Levels(t, v, nin, nout, nout+int(shape/11)%4)
	})
}

// frozenBits is a bit mask of n neurons with bit i set where bit 3 of
// u[i]'s encoding is: about every other neuron, arbitrarily placed.
func frozenBits(u []float32) []uint64 {
	f := make([]uint64, (len(u)+63)/64)
	for i, v := range u {
		if math.Float32bits(v)&8 != 0 {
			f[i>>6] |= 1 << (i & 63)
		}
	}
	return f
}

// refLIF is the reference of lifUpdate, with the portable kernels: the
// passes it fuses (gatherInput's sum from zero, axpby), then the frozen
// neurons put back, then nextAbove for the threshold test.
func refLIF(a, c, th float32, u0, x1, x2 []float32, frozen []uint64) (u []float32, above []int) {
	n := len(u0)
	u = append([]float32(nil), u0...)
	withISA(isaGo, func() {
		s := x1
		if x2 != nil {
			s = make([]float32, n)
			addTo(s, x1)
			addTo(s, x2)
		}
		axpby(a, u, c, s)
		for i := range u {
			if frozen[i>>6]&(1<<(i&63)) != 0 {
				u[i] = u0[i]
			}
		}
		for i := nextAbove(u, th, 0); i < n; i = nextAbove(u, th, i+1) {
			above = append(above, i)
		}
	})
	return u, above
}

// checkCand compares the candidates of a fused step (cand[:k]) with want
// and checks that the index past the neurons (guard) is left as it is.
func checkCand(t *testing.T, what string, cand []int32, k int, want []int) {
	t.Helper()
	got := make([]int, k)
	for i, c := range cand[:k] {
		got[i] = int(c)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || cand[len(cand)-1] != -7 {
		t.Fatalf("%s: above threshold %v, want %v (guard %d)", what, got, want, cand[len(cand)-1])
	}
}

// newCand is room for the candidates of n neurons and a guard past them.
func newCand(n int) []int32 {
	c := make([]int32, n+1)
	c[n] = -7
	return c
}

// checkLIFUpdate compares lifUpdate at every level with refLIF.
func checkLIFUpdate(t *testing.T, a, c, th float32, u0, x1, x2 []float32, frozen []uint64) {
	t.Helper()
	n := len(u0)
	want, wantIdx := refLIF(a, c, th, u0, x1, x2, frozen)
	for _, l := range isaLevels() {
		u := append([]float32(nil), u0...)
		cand := newCand(n)
		var k int
		withISA(l, func() { k = lifUpdate(a, c, th, u, x1, x2, frozen, cand[:n]) })
		if i := sameBits(u, want); i >= 0 {
			t.Fatalf("n %d two %v level %v: u[%d] = %v, want %v", n, x2 != nil, l, i, u[i], want[i])
		}
		checkCand(t, fmt.Sprintf("n %d two %v level %v", n, x2 != nil, l), cand, k, wantIdx)
	}
}

// checkLIFChain compares lifChain at every level with the two axpby
// passes of the integrators, then refLIF on their states.
func checkLIFChain(t *testing.T, a, c, th float32, u0, g10, x1, g20, x2 []float32, frozen []uint64) {
	t.Helper()
	n := len(u0)
	const a1, c1, a2, c2 = 0.75, 1.5, 0.875, -0.5
	wg1, wg2 := append([]float32(nil), g10...), append([]float32(nil), g20...)
	withISA(isaGo, func() {
		axpby(a1, wg1, c1, x1)
		axpby(a2, wg2, c2, x2)
	})
	want, wantIdx := refLIF(a, c, th, u0, wg1, wg2, frozen)
	for _, l := range isaLevels() {
		u, g1, g2 := append([]float32(nil), u0...), append([]float32(nil), g10...), append([]float32(nil), g20...)
		cand := newCand(n)
		var k int
		withISA(l, func() { k = lifChain(a1, c1, a2, c2, a, c, th, g1, x1, g2, x2, u, frozen, cand[:n]) })
		for j, p := range [][2][]float32{{u, want}, {g1, wg1}, {g2, wg2}} {
			if i := sameBits(p[0], p[1]); i >= 0 {
				t.Fatalf("chain n %d level %v: state %d [%d] = %v, want %v", n, l, j, i, p[0][i], p[1][i])
			}
		}
		checkCand(t, fmt.Sprintf("chain n %d level %v", n, l), cand, k, wantIdx)
	}
}

func TestLIFUpdateBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	negZero := float32(math.Copysign(0, -1))
	for _, n := range []int{0, 1, 15, 16, 17, 33, 100, 4000} {
		u, x1, x2, g1, g2 := vec(n), vec(n), vec(n), vec(n), vec(n)
		for i := 0; i < n; i += 7 { // signed zeros, NaN and infinities on every path
			x1[i], x2[i] = negZero, negZero
			if i%3 == 0 {
				u[i] = negZero
			}
		}
		if n > 20 {
			u[3], x1[5], x2[9] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
		}
		none := make([]uint64, (n+63)/64)
		frozen := frozenBits(u)
		for i := range u { // frozen above the threshold: its bit tests the state kept
			if frozen[i>>6]&(1<<(i&63)) != 0 && i%5 == 0 {
				u[i] = 2
			}
		}
		for _, f := range [][]uint64{none, frozen} {
			checkLIFUpdate(t, 0.9, 0.35, 0.5, u, x1, nil, f)
			checkLIFUpdate(t, 0.9, 0.35, 0.5, u, x1, x2, f)
			checkLIFChain(t, 0.9, 0.35, 0.5, u, g1, x1, g2, x2, f)
		}
	}
}

// FuzzLIFUpdate: the fused neuron steps agree with the passes they
// replace on arbitrary bits, some neurons frozen.
func FuzzLIFUpdate(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, off uint8, a, c float32) {
		v := fuzzFloats(data, 5*1024)
		n := len(v) / 5
		th := float32(int(off)-128) / 64
		u, x1, x2, g1, g2 := v[:n], v[n:2*n], v[2*n:3*n], v[3*n:4*n], v[4*n:5*n]
		frozen := frozenBits(x2)
		checkLIFUpdate(t, a, c, th, u, x1, nil, frozen)
		checkLIFUpdate(t, a, c, th, u, x1, x2, frozen)
		checkLIFChain(t, a, c, th, u, g1, x1, g2, x2, frozen)
	})
}

// TestFusedNeuronStep: a recurrent network whose LIF population has two
// conductance inputs and a refractory period (the fused step on AVX-512)
// and an IF population with one input and subtractive reset gives the
// same spikes and states, bit for bit, at every kernel level, in a batch
// of three with one slot idle part of the time.
func TestFusedNeuronStep(t *testing.T) {
	const n, nin, batch, steps = 300, 40, 3, 400
	rng := rand.New(rand.NewPCG(13, 14))
	dense := func(rows, cols int, scale, p float64) *Tensor {
		w := NewTensor(rows, cols)
		for i := range w.Data {
			if rng.Float64() < p {
				w.Data[i] = float32(scale * rng.NormFloat64())
			}
		}
		return w
	}
	one := func(v float64) []float64 { return []float64{v} }
	g := NewGraph().
		Add("x", &Input{Shape: []int{nin}}).
		Add("in", &Linear{Weight: dense(n, nin, 4, 0.3)}).
		Add("P", &LIF{Tau: one(0.02), R: one(1), VLeak: one(0), VThreshold: one(1), VReset: one(0),
			Refractory: one(0.003), Shape: []int{n}}).
		Add("Ce", &Linear{Weight: dense(n, n, 0.8, 0.05)}).
		Add("ge", &LI{Tau: one(0.005), R: one(3), VLeak: one(0)}).
		Add("Q", &IF{R: one(200), VThreshold: one(1), VReset: one(0), Reset: ResetSubtract}).
		Add("y", &Output{}).
		Connect("x", "in", "P").
		Connect("P", "Ce", "ge", "P").
		Connect("ge", "Q", "y")
	in := make([]float32, batch*nin)
	run := func() (out []float32, v []float32) {
		sim, err := NewSimulator(g, &Options{Dt: 1e-3, Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		defer sim.Close()
		r := rand.New(rand.NewPCG(15, 16))
		on := make([]bool, batch)
		for step := range steps {
			for i := range in {
				in[i] = 0
				if r.Float64() < 0.2 {
					in[i] = 1
				}
			}
			for s := range on {
				on[s] = s != 2 || step%50 < 25
			}
			if err := sim.SetActive(on); err != nil {
				t.Fatal(err)
			}
			if err := sim.Step(in); err != nil {
				t.Fatal(err)
			}
			out = append(out, sim.Output(0)...)
		}
		v, err = sim.State(nil, "P", VarV)
		if err != nil {
			t.Fatal(err)
		}
		return out, v
	}
	var refOut, refV []float32
	for _, l := range isaLevels() {
		var out, v []float32
		withISA(l, func() { out, v = run() })
		if refOut == nil {
			refOut, refV = out, v
			spikes := 0
			for _, o := range out {
				spikes += int(o)
			}
			if spikes == 0 {
				t.Fatal("Q never fired: the test exercises nothing")
			}
			continue
		}
		if i := sameBits(out, refOut); i >= 0 {
			t.Fatalf("level %v: output %d = %v, portable %v", l, i, out[i], refOut[i])
		}
		if i := sameBits(v, refV); i >= 0 {
			t.Fatalf("level %v: v[%d] = %v, portable %v", l, i, v[i], refV[i])
		}
	}
}

// TestFusedChain: a CUBA-shaped network, whose LIF population alone reads
// two conductances (LI nodes fed back from it through sparse excitatory
// and inhibitory synapses, so read one step late), runs its fused chain on
// AVX-512 and gives the same spikes, states and conductances, bit for bit,
// as the separate steps at every level, in a batch with one slot idle part
// of the time, one reset midway and the states set while neurons are
// held; also when the conductances are looked at after every step
// (settle), and with a third reader of one of them, which turns the
// fusion off.
// chainGraph is CUBA's shape at n neurons: a refractory LIF population
// P fed by two leaky integrators, ge and gi, through the weights ce and
// ci, gi read through the delayed edge that closes its cycle; y is P's
// spikes.
func chainGraph(n int, ce, ci *Tensor) *Graph {
	one := func(v float64) []float64 { return []float64{v} }
	return NewGraph().
		Add("P", &LIF{Tau: one(0.02), R: one(1), VLeak: one(1.2), VThreshold: one(1), VReset: one(0),
			Refractory: one(0.002), Shape: []int{n}}).
		Add("Ce", &Linear{Weight: ce}).
		Add("Ci", &Linear{Weight: ci}).
		Add("ge", &LI{Tau: one(0.005), R: one(2), VLeak: one(0)}).
		Add("gi", &LI{Tau: one(0.01), R: one(2), VLeak: one(0)}).
		Add("y", &Output{}).
		Connect("P", "Ce", "ge", "P").
		Connect("P", "Ci", "gi", "P").
		Connect("P", "y")
}

func TestFusedChain(t *testing.T) {
	const n, batch, steps = 500, 3, 300
	rng := rand.New(rand.NewPCG(23, 24))
	sparse := func(scale, p float64) *Tensor {
		w := NewTensor(n, n)
		for i := range w.Data {
			if rng.Float64() < p {
				w.Data[i] = float32(scale * (0.5 + rng.Float64()))
			}
		}
		return w
	}
	ce, ci := sparse(0.05, 0.05), sparse(-0.1, 0.05)
	v0 := make([]float32, n)
	for i := range v0 {
		v0[i] = float32(rng.Float64())
	}
	build := func(extraReader bool) *Graph {
		g := chainGraph(n, ce, ci)
		if extraReader {
			g.Add("z", &Output{}).Connect("gi", "z")
		}
		return g
	}
	run := func(g *Graph, watch bool) (res [4][]float32, chained bool, cnt Counters) {
		sim, err := NewSimulator(g, &Options{Dt: 1e-3, Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		defer sim.Close()
		chained = len(sim.chains) == 1
		if err := sim.SetState("P", VarV, v0); err != nil {
			t.Fatal(err)
		}
		on := make([]bool, batch)
		for step := range steps {
			for s := range on {
				on[s] = s != 1 || step%40 < 20
			}
			if err := sim.SetActive(on); err != nil {
				t.Fatal(err)
			}
			switch step {
			case steps / 3: // held neurons too: they go back to their held values
				if err := sim.SetState("P", VarV, v0); err != nil {
					t.Fatal(err)
				}
			case steps / 2:
				if err := sim.Reset(2); err != nil {
					t.Fatal(err)
				}
			}
			if err := sim.Step(); err != nil {
				t.Fatal(err)
			}
			res[0] = append(res[0], sim.Output(0)...)
			if watch {
				gi, _ := sim.State(nil, "gi", VarV)
				res[3] = append(res[3], gi...)
			}
		}
		res[1], _ = sim.State(nil, "P", VarV)
		res[2] = append([]float32(nil), sim.NodeOutput("ge")...)
		return res, chained, sim.Counters()
	}
	for _, c := range []struct{ extra, watch bool }{{false, false}, {false, true}, {true, false}} {
		var ref [4][]float32
		var refCnt Counters
		for _, l := range isaLevels() {
			var got [4][]float32
			var chained bool
			var cnt Counters
			withISA(l, func() { got, chained, cnt = run(build(c.extra), c.watch) })
			if want := l != isaGo && !c.extra; chained != want {
				t.Fatalf("%+v level %v: chain fused %v", c, l, chained)
			}
			if ref[0] == nil {
				ref, refCnt = got, cnt
				spikes := 0
				for _, o := range got[0] {
					spikes += int(o)
				}
				if spikes == 0 || spikes == len(got[0]) {
					t.Fatalf("P fired %d of %d times: the test exercises nothing", spikes, len(got[0]))
				}
				continue
			}
			for k := range got {
				if i := sameBits(got[k], ref[k]); i >= 0 {
					t.Fatalf("%+v level %v result %d: [%d] = %v, portable %v", c, l, k, i, got[k][i], ref[k][i])
				}
			}
			if cnt != refCnt { // the fused integrators count, not stepped
				t.Fatalf("%+v level %v: counters %+v, portable %+v", c, l, cnt, refCnt)
			}
		}
	}
}

func TestCapISA(t *testing.T) {
	for _, c := range []struct {
		host  isaLevel
		limit string
		want  isaLevel
	}{
		{isaAVX512, "", isaAVX512}, {isaAVX512, "avx2", isaAVX2}, {isaAVX512, "go", isaGo},
		{isaAVX2, "avx512", isaAVX2}, {isaAVX2, "AVX2", isaAVX2}, {isaGo, "avx2", isaGo}, {isaAVX512, "sse", isaAVX512},
	} {
		if got := capISA(c.host, c.limit); got != c.want {
			t.Errorf("capISA(%v, %q) = %v, want %v", c.host, c.limit, got, c.want)
		}
	}
}
