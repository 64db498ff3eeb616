package snn

import (
	"fmt"
	"math"
)

// Precision is how the simulator stores the weights of dense synapse
// products (Linear and Affine nodes kept as a dense matrix). Sums, states
// and sparse (compressed) weights stay float32 whatever it is.
type Precision uint8

const (
	// Float32 keeps the weights as the graph gives them: exact. The default.
	Float32 Precision = iota
	// BFloat16 rounds each weight to the nearest bfloat16 (8 bits of
	// mantissa, float32's range), halving the bytes a product streams.
	// Products and sums stay float32.
	BFloat16
	// Int8 stores each weight as an integer in [−127, 127] times a float32
	// step shared by the weights of one input (a column of the matrix:
	// the weights one neuron's output is multiplied by), the largest
	// magnitude of the column over 127. A product multiplies each input by
	// its step once, then by the integer weights, exactly widened: a
	// quarter of float32's bytes. Products and sums stay float32.
	Int8
)

func (p Precision) String() string {
	switch p {
	case Float32:
		return "float32"
	case BFloat16:
		return "bfloat16"
	case Int8:
		return "int8"
	}
	return fmt.Sprintf("Precision(%d)", p)
}

// ParsePrecision reads a precision by name: "float32" (or "f32", ""),
// "bfloat16" (or "bf16"), "int8".
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "", "float32", "f32", "fp32":
		return Float32, nil
	case "bfloat16", "bf16":
		return BFloat16, nil
	case "int8":
		return Int8, nil
	}
	return 0, fmt.Errorf("snn: unknown precision %q (want float32, bfloat16 or int8)", s)
}

// WeightBytes is the bytes one weight takes at p.
func (p Precision) WeightBytes() int {
	switch p {
	case BFloat16:
		return 2
	case Int8:
		return 1
	}
	return 4
}

// quantizeInt8 sets q[j·nout + r] and step[j] from w (nout × nin, row
// major) as Int8 describes: per input column j, step = max|w[·, j]|/127 and
// q = w/step rounded to the nearest integer, ties to even. A column of
// zeros has step 0.
func quantizeInt8(w []float32, nout, nin int, q []int8, step []float32) {
	for j := range nin {
		var m float32
		for r := range nout {
			m = max(m, float32(math.Abs(float64(w[r*nin+j]))))
		}
		step[j] = m / 127
		if m == 0 {
			continue
		}
		inv := 127 / float64(m)
		for r := range nout {
			q[j*nout+r] = int8(math.RoundToEven(float64(w[r*nin+j]) * inv))
		}
	}
}

// gemvTI8 is gemvT with int8 weights, widened exactly; x is already
// scaled by the steps: the same sum as gemvT over the widened matrix, bit
// for bit.
func gemvTI8(y []float32, w []int8, x []float32, ldw int) {
	if len(x) == 0 || len(y) == 0 {
		return
	}
	_ = w[(len(x)-1)*ldw+len(y)-1]
	cols := 0
	switch {
	case isa == isaAVX512:
		gemvTI8AVX512(&y[0], &w[0], &x[0], len(x), ldw, len(y))
		return
	case isa == isaAVX2 && len(y) >= 8:
		cols = len(y) &^ 7
		gemvTI8AVX2(&y[0], &w[0], &x[0], len(x), ldw, cols)
	}
	for j, xj := range x {
		row := w[j*ldw+cols : j*ldw+len(y)]
		for i, q := range row {
			y[cols+i] = fma32(xj, float32(q), y[cols+i])
		}
	}
}

// gemm4TI8 is gemm4T with int8 weights: bit-identical to gemvTI8 for each
// slot.
func gemm4TI8(ys, xs *[4][]float32, xi []float32, w []int8, ldw int) {
	gemm4(ys, xs, xi, w, ldw, gemvTI8, gemm4TI8AVX512, gemm4TI8AVX2)
}

// axpyI8 sets y = y + a·w (one rounding), w in int8.
func axpyI8(a float32, w []int8, y []float32) {
	w = w[:len(y)]
	done := 0
	switch {
	case isa == isaAVX512 && len(y) > 0:
		axpyI8AVX512(a, &w[0], &y[0], len(y))
		return
	case isa == isaAVX2 && len(y) >= 8:
		done = len(y) &^ 7
		axpyI8AVX2(a, &w[0], &y[0], done)
	}
	for i := done; i < len(y); i++ {
		y[i] = fma32(a, float32(w[i]), y[i])
	}
}

// toBF16 rounds v to the nearest bfloat16, ties to even; a NaN stays a
// (quiet) NaN.
func toBF16(v float32) uint16 {
	b := math.Float32bits(v)
	if v != v {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// fromBF16 widens a bfloat16 exactly.
func fromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// gemvTBF16 is gemvT with bfloat16 weights, widened exactly: the same sum
// as gemvT over the widened matrix, bit for bit.
func gemvTBF16(y []float32, w []uint16, x []float32, ldw int) {
	if len(x) == 0 || len(y) == 0 {
		return
	}
	_ = w[(len(x)-1)*ldw+len(y)-1]
	cols := 0
	switch {
	case isa == isaAVX512:
		gemvTBF16AVX512(&y[0], &w[0], &x[0], len(x), ldw, len(y))
		return
	case isa == isaAVX2 && len(y) >= 8:
		cols = len(y) &^ 7
		gemvTBF16AVX2(&y[0], &w[0], &x[0], len(x), ldw, cols)
	}
	if cols < len(y) {
		gemvTBF16Go(y[cols:], w[cols:], x, ldw)
	}
}

func gemvTBF16Go(y []float32, w []uint16, x []float32, ldw int) {
	for j, xj := range x {
		row := w[j*ldw : j*ldw+len(y)]
		for i, h := range row {
			y[i] = fma32(xj, fromBF16(h), y[i])
		}
	}
}

// gemm4TBF16 is gemm4T with bfloat16 weights: bit-identical to
// gemvTBF16 for each slot.
func gemm4TBF16(ys, xs *[4][]float32, xi []float32, w []uint16, ldw int) {
	gemm4(ys, xs, xi, w, ldw, gemvTBF16, gemm4TBF16AVX512, gemm4TBF16AVX2)
}

// axpyBF16 sets y = y + a·w (one rounding), w in bfloat16.
func axpyBF16(a float32, w []uint16, y []float32) {
	w = w[:len(y)]
	done := 0
	switch {
	case isa == isaAVX512 && len(y) > 0:
		axpyBF16AVX512(a, &w[0], &y[0], len(y))
		return
	case isa == isaAVX2 && len(y) >= 8:
		done = len(y) &^ 7
		axpyBF16AVX2(a, &w[0], &y[0], done)
	}
	for i := done; i < len(y); i++ {
		y[i] = fma32(a, fromBF16(w[i]), y[i])
	}
}

// mul sets dst[i] = a[i]·b[i].
func mul(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}
