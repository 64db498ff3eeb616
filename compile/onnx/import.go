package onnx

import (
	"errors"
	"fmt"
	"io"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// errInternal marks a panic recovered at Import's boundary: a bug of this
// package, never a property of the file. Fuzz tests look for it.
var errInternal = errors.New("onnx: internal error")

// Import reads an ONNX file of a ReLU network and converts it to a spiking
// graph: Decode (bounded by opts.MaxBytes), (*Model).ANN, then
// compile.ConvertANN with opts.Conversion. It is registered as the
// compile format "onnx". opts may be nil.
//
// The converted graph is built for opts.Dt (default 1e-3): its IF and
// integrator neurons add their input once per step whatever the step is.
// Present a sample by injecting it as current at every step for
// opts.Conversion.Timesteps steps; the Output's value is then that many
// times the ANN's logits, approximately.
func Import(r io.ReaderAt, size int64, opts *compile.ImportOptions) (g *snn.Graph, rep *compile.ImportReport, err error) {
	o := opts.WithDefaults()
	if r == nil {
		return nil, nil, errors.New("onnx: Import: nil reader")
	}
	if size < 0 {
		return nil, nil, fmt.Errorf("onnx: Import: negative size %d", size)
	}
	if o.MaxBytes < 0 {
		return nil, nil, fmt.Errorf("onnx: Import: ImportOptions.MaxBytes is negative (%d)", o.MaxBytes)
	}
	if size > o.MaxBytes {
		return nil, nil, &LimitError{What: "file size", Value: size, Limit: o.MaxBytes}
	}
	// Grow as the bytes arrive rather than trust size with one allocation.
	b, err := io.ReadAll(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, nil, fmt.Errorf("onnx: reading model: %w", err)
	}
	if int64(len(b)) < size {
		return nil, nil, fmt.Errorf("onnx: reading model: read %d of %d bytes: %w", len(b), size, io.ErrUnexpectedEOF)
	}
	defer func() {
		if p := recover(); p != nil {
			g, rep = nil, nil
			err = fmt.Errorf("%w: panic importing the model: %v", errInternal, p)
		}
	}()
	// MaxBytes bounds the tensors too: four bytes per float32 element.
	elems := max(1, o.MaxBytes/4)
	m, err := DecodeBytes(b, &Options{MaxBytes: o.MaxBytes, MaxTensorElements: elems, MaxTotalElements: elems})
	if err != nil {
		return nil, nil, err
	}
	ann, notes, err := m.ANN()
	if err != nil {
		return nil, nil, err
	}
	conv := o.Conversion
	if conv.MaxValues == 0 {
		conv.MaxValues = o.MaxValues
	}
	g, crep, err := compile.ConvertANN(ann, &conv)
	if err != nil {
		return nil, nil, err
	}
	retime(g, o.Dt)
	rep = &compile.ImportReport{Format: "onnx", Kind: "onnx ann", Converted: true, Conversion: crep}
	if len(o.Layers) > 0 {
		rep.Warnings = append(rep.Warnings, "ImportOptions.Layers ignored: an ONNX file describes its own layers")
	}
	rep.Warnings = append(rep.Warnings, notes.folded...)
	rep.Warnings = append(rep.Warnings, crep.Warnings...)
	rep.Approximate = notes.approximated
	return g, rep, nil
}

// retime rebuilds the integrating neurons of a graph ConvertANN built for
// compile.ConvertedDt so that they add their input once per step of dt.
// Their R is 1/ConvertedDt (times a scale); the simulator integrates R·x·dt
// per step, so R must scale by ConvertedDt/dt.
func retime(g *snn.Graph, dt float64) {
	if dt == compile.ConvertedDt {
		return
	}
	f := compile.ConvertedDt / dt
	for _, n := range g.Nodes {
		switch x := n.(type) {
		case *snn.IF:
			for i := range x.R {
				x.R[i] *= f
			}
		case *snn.I:
			for i := range x.R {
				x.R[i] *= f
			}
		}
	}
}
