package snn

import (
	"math/rand/v2"
	"testing"
)

// checkGatherT compares gatherT at every kernel level, bit for bit, with
// one portable axpy a row.
func checkGatherT(t *testing.T, y0, w, a []float32, rows []int32, ldw int) {
	t.Helper()
	ref := append([]float32(nil), y0...)
	withISA(isaGo, func() {
		for k, j := range rows {
			axpy(a[k], w[int(j)*ldw:int(j)*ldw+len(ref)], ref)
		}
	})
	for _, l := range isaLevels() {
		y := append([]float32(nil), y0...)
		withISA(l, func() { gatherT(y, w, a, rows, ldw) })
		if i := sameBits(y, ref); i >= 0 {
			t.Fatalf("cols %d ldw %d rows %d, level %v: [%d] = %v, axpy a row gives %v", len(y), ldw, len(rows), l, i, y[i], ref[i])
		}
	}
}

// TestGatherTBitIdentical covers every block width and tail of the
// kernels, rows in any order and repeated.
func TestGatherTBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, cols := range []int{1, 7, 8, 15, 16, 17, 20, 33, 64, 100, 128, 200, 256, 257, 300, 520} {
		for _, pad := range []int{0, 3} {
			const nin = 40
			ldw := cols + pad
			w := randInput(rng, nin*ldw, 0.9, false)
			y0 := randInput(rng, cols, 0.5, false)
			for _, n := range []int{0, 1, 5, 40} {
				rows, a := make([]int32, n), make([]float32, n)
				for k := range rows {
					rows[k] = int32(rng.IntN(nin))
					a[k] = 1
					if k%3 == 1 {
						a[k] = float32(rng.NormFloat64())
					}
				}
				checkGatherT(t, y0, w, a, rows, ldw)
			}
		}
	}
}

// FuzzGatherT: the event-driven product agrees bit for bit with axpy a row
// on arbitrary bits (NaN, infinities, subnormals included).
func FuzzGatherT(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, shape uint8, _, _ float32) {
		v := fuzzFloats(data, 4096)
		nin := 1 + int(shape%7)
		pad := int(shape/7) % 5
		cols := (len(v) - 2*nin) / (nin + 1)
		cols -= pad
		if cols <= 0 {
			return
		}
		ldw := cols + pad
		a, y0, w := v[:nin], v[nin:nin+cols], v[nin+cols:]
		if len(w) < (nin-1)*ldw+cols {
			return
		}
		rows := make([]int32, nin)
		for k := range rows {
			rows[k] = int32((k * int(shape)) % nin)
		}
		checkGatherT(t, y0, w, a, rows, ldw)
	})
}
