package snn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Compressed columns add and zero the same values, bit for bit, whether
// rows take two bytes or four and whether a column keeps its one weight
// once or per row.
func TestCompressedColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name      string
		nout, nin int
		uniform   bool
	}{
		{"rows16", 300, 40, false},
		{"rows16 uniform", 300, 40, true},
		{"rows32", 70_000, 3, false},
		{"rows32 uniform", 70_000, 3, true},
	} {
		w := make([]float32, tc.nout*tc.nin)
		fanout := make([]int32, tc.nin)
		nnz := 0
		for j := 0; j < tc.nin; j++ {
			col := float32(rng.NormFloat64())
			if j == 1 {
				continue // an empty column
			}
			for r := 0; r < tc.nout; r++ {
				if rng.Float64() < 0.1 {
					v := col
					if !tc.uniform {
						v = float32(rng.NormFloat64())
					}
					w[r*tc.nin+j] = v
					fanout[j]++
					nnz++
				}
			}
		}
		m := newColumns(w, tc.nout, tc.nin, fanout, nnz)
		if (m.rows16 != nil) != (tc.nout <= 1<<16) || (m.vals == nil) != tc.uniform {
			t.Fatalf("%s: rows16 %v, vals %v", tc.name, m.rows16 != nil, m.vals != nil)
		}
		y := make([]float32, tc.nout)
		want := make([]float32, tc.nout)
		for i := range y {
			y[i] = float32(rng.NormFloat64())
			want[i] = y[i]
		}
		for j := 0; j < tc.nin; j++ {
			xj := float32(rng.NormFloat64())
			m.add(y, int32(j), xj)
			for r := 0; r < tc.nout; r++ {
				want[r] += xj * w[r*tc.nin+j]
			}
		}
		for r := range y {
			if math.Float32bits(y[r]) != math.Float32bits(want[r]) {
				t.Fatalf("%s: row %d is %v, want %v", tc.name, r, y[r], want[r])
			}
		}
		m.zero(y, 0)
		for r := range y {
			if w[r*tc.nin] != 0 {
				want[r] = 0
			}
			if y[r] != want[r] {
				t.Fatalf("%s: after zeroing column 0, row %d is %v, want %v", tc.name, r, y[r], want[r])
			}
		}
	}
}
