package onnx

import (
	"errors"
	"fmt"
)

// Opset range this package reads, for the default ONNX domain.
const (
	MinOpset = 9
	MaxOpset = 17
)

// Default limits, used where an Options field is zero.
const (
	DefaultMaxBytes          = 256 << 20 // 256 MiB of file
	DefaultMaxTensorElements = 64 << 20  // 64 Mi elements (256 MiB of float32) per tensor
	DefaultMaxTotalElements  = 128 << 20 // 128 Mi elements over all tensors of a model
	DefaultMaxNodes          = 100000
	DefaultMaxRank           = 8
)

// Options limits what Decode accepts. The zero value, and a nil *Options, mean
// the defaults above: generous for the networks a neuromorphic device runs, and
// small enough that a hostile file cannot make Decode allocate without bound.
// Every limit is checked against the sizes a file declares before the memory
// for them is allocated.
type Options struct {
	// MaxBytes bounds the size of the file. Default DefaultMaxBytes.
	MaxBytes int64
	// MaxTensorElements bounds the element count of any one tensor: an
	// initializer, a Constant value, a declared graph value, or a value
	// computed by Run. Default DefaultMaxTensorElements.
	MaxTensorElements int64
	// MaxTotalElements bounds the elements of all initializers and Constant
	// values together. Default DefaultMaxTotalElements.
	MaxTotalElements int64
	// MaxNodes bounds the number of nodes of the graph. Default DefaultMaxNodes.
	MaxNodes int
	// MaxRank bounds the number of dimensions of any tensor. Default DefaultMaxRank.
	MaxRank int
}

// Validate reports a negative limit. Zero fields are valid: they mean the default.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	var errs []error
	if o.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("onnx: Options.MaxBytes is negative (%d)", o.MaxBytes))
	}
	if o.MaxTensorElements < 0 {
		errs = append(errs, fmt.Errorf("onnx: Options.MaxTensorElements is negative (%d)", o.MaxTensorElements))
	}
	if o.MaxTotalElements < 0 {
		errs = append(errs, fmt.Errorf("onnx: Options.MaxTotalElements is negative (%d)", o.MaxTotalElements))
	}
	if o.MaxNodes < 0 {
		errs = append(errs, fmt.Errorf("onnx: Options.MaxNodes is negative (%d)", o.MaxNodes))
	}
	if o.MaxRank < 0 {
		errs = append(errs, fmt.Errorf("onnx: Options.MaxRank is negative (%d)", o.MaxRank))
	}
	return errors.Join(errs...)
}

// limits is Options with the defaults filled in.
type limits struct {
	maxBytes, maxTensor, maxTotal int64
	maxNodes, maxRank             int
}

func (o *Options) limits() limits {
	l := limits{DefaultMaxBytes, DefaultMaxTensorElements, DefaultMaxTotalElements, DefaultMaxNodes, DefaultMaxRank}
	if o == nil {
		return l
	}
	if o.MaxBytes > 0 {
		l.maxBytes = o.MaxBytes
	}
	if o.MaxTensorElements > 0 {
		l.maxTensor = o.MaxTensorElements
	}
	if o.MaxTotalElements > 0 {
		l.maxTotal = o.MaxTotalElements
	}
	if o.MaxNodes > 0 {
		l.maxNodes = o.MaxNodes
	}
	if o.MaxRank > 0 {
		l.maxRank = o.MaxRank
	}
	return l
}

// elements returns the product of dims, or an error when a dimension is
// negative or the product passes max (checked before it can overflow).
func elements(what string, dims []int64, max int64) (int64, error) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("onnx: %s has negative dimension %d in %v: %w", what, d, dims, ErrMalformed)
		}
		if d == 0 {
			return 0, nil
		}
	}
	for _, d := range dims {
		if n > max/d {
			// n*d > max; report the true product when it fits in int64.
			p, ok := product(dims)
			if !ok {
				p = -1
			}
			return 0, &LimitError{What: "element count of " + what, Value: p, Limit: max}
		}
		n *= d
	}
	return n, nil
}

func product(dims []int64) (int64, bool) {
	const maxInt64 = 1<<63 - 1
	n := int64(1)
	for _, d := range dims {
		if d != 0 && n > maxInt64/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}
