package nir

import (
	"errors"
	"fmt"

	"github.com/neuro-go/neuro/compile"
)

// ErrInvalid is wrapped by every error about the content of a NIR file: a
// malformed HDF5 structure, a missing or ill-typed field, a graph that
// does not validate.
var ErrInvalid = errors.New("nir: invalid file")

// ErrUnsupported is wrapped by errors about graphs that are valid but that
// NIR, or this package, cannot represent: snn's extensions on export, NIR
// features snn has no equivalent for.
var ErrUnsupported = compile.Sentinel("nir: unsupported", compile.ErrUnsupported)

// FieldError names the node and field at fault. Node is the qualified
// name ("lif1.lif" inside a nested graph); Field is the NIR field name
// ("tau", "weight", "edges"), empty when the node as a whole is at fault.
type FieldError struct {
	Node  string
	Field string
	Msg   string
	Err   error // ErrInvalid or ErrUnsupported
}

func (e *FieldError) Error() string {
	switch {
	case e.Node == "" && e.Field == "":
		return "nir: " + e.Msg
	case e.Field == "":
		return fmt.Sprintf("nir: node %q: %s", e.Node, e.Msg)
	case e.Node == "":
		return fmt.Sprintf("nir: field %s: %s", e.Field, e.Msg)
	}
	return fmt.Sprintf("nir: node %q field %s: %s", e.Node, e.Field, e.Msg)
}

func (e *FieldError) Unwrap() error { return e.Err }

func invalidf(node, field, format string, args ...any) error {
	return &FieldError{Node: node, Field: field, Msg: fmt.Sprintf(format, args...), Err: ErrInvalid}
}

func unsupportedf(node, field, format string, args ...any) error {
	return &FieldError{Node: node, Field: field, Msg: fmt.Sprintf(format, args...), Err: ErrUnsupported}
}
