package snn

import (
	"fmt"
	"math"
)

// Tensor is a dense row-major float32 array: the weights of synapse nodes.
// Weights are float32 because every framework we import trains in float32
// and because the simulator's memory traffic is dominated by them.
type Tensor struct {
	Shape []int
	Data  []float32

	wire *tensorJSON // set only while encoding or decoding JSON
}

// NewTensor returns a zero tensor of the given shape.
func NewTensor(shape ...int) *Tensor {
	n, err := numElements(shape)
	if err != nil {
		panic(err) // programmer error: the caller chose the shape
	}
	return &Tensor{Shape: append([]int(nil), shape...), Data: make([]float32, n)}
}

// Len is the number of elements the shape describes.
func (t *Tensor) Len() int {
	n, err := numElements(t.Shape)
	if err != nil {
		return -1
	}
	return n
}

// At returns the element at the given multi-index (row-major).
func (t *Tensor) At(idx ...int) float32 { return t.Data[t.offset(idx)] }

// Set stores v at the given multi-index (row-major).
func (t *Tensor) Set(v float32, idx ...int) { t.Data[t.offset(idx)] = v }

func (t *Tensor) offset(idx []int) int {
	if len(idx) != len(t.Shape) {
		panic(fmt.Sprintf("snn: index of rank %d into tensor of rank %d", len(idx), len(t.Shape)))
	}
	off := 0
	for i, x := range idx {
		if x < 0 || x >= t.Shape[i] {
			panic(fmt.Sprintf("snn: index %v out of range for shape %v", idx, t.Shape))
		}
		off = off*t.Shape[i] + x
	}
	return off
}

// Clone returns a deep copy.
func (t *Tensor) Clone() *Tensor {
	if t == nil {
		return nil
	}
	return &Tensor{Shape: append([]int(nil), t.Shape...), Data: append([]float32(nil), t.Data...)}
}

// MaxElements bounds the size of any tensor or shape the package accepts,
// so that hostile input cannot ask for an absurd allocation.
const MaxElements = 1 << 31

// numElements multiplies out a shape, refusing negative dimensions and
// products that overflow or exceed MaxElements.
func numElements(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("snn: negative dimension in shape %v", shape)
		}
		if d != 0 && n > MaxElements/d {
			return 0, fmt.Errorf("snn: shape %v has more than %d elements", shape, MaxElements)
		}
		n *= d
	}
	return n, nil
}

func checkFinite32(xs []float32) (int, bool) {
	for i, x := range xs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return i, false
		}
	}
	return 0, true
}

func checkFinite64(xs []float64) (int, bool) {
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return i, false
		}
	}
	return 0, true
}
