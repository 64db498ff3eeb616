package onnx

import (
	"errors"
	"fmt"
	"strings"

	"github.com/neuro-go/neuro/compile"
)

// Sentinel errors for conditions callers branch on. The typed errors below
// match them through errors.Is.
var (
	// ErrMalformed reports bytes that are not a well-formed ONNX protobuf, or
	// a model whose parts contradict each other.
	ErrMalformed = errors.New("onnx: malformed model")
	// ErrUnsupported reports a valid ONNX construct that this package does not
	// read: an operator, an attribute value, a data type, an opset.
	ErrUnsupported = compile.Sentinel("onnx: unsupported", compile.ErrUnsupported)
	// ErrLimit reports a model larger than the limits in Options.
	ErrLimit = compile.Sentinel("onnx: limit exceeded", compile.ErrLimit)
)

// FormatError reports malformed protobuf bytes at a byte offset of the file.
type FormatError struct {
	Offset int64  // byte offset in the file where the problem was found
	Field  string // the message or field being read, such as "GraphProto.node"
	Reason string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("onnx: malformed protobuf at byte %d (%s): %s", e.Offset, e.Field, e.Reason)
}

// Is reports whether target is ErrMalformed.
func (e *FormatError) Is(target error) bool { return target == ErrMalformed }

// LimitError reports a size beyond a limit of Options, found before the
// memory for it was allocated.
type LimitError struct {
	What  string // what was measured, such as `elements of initializer "w"`
	Value int64  // the size declared by the file (-1 when it overflows int64)
	Limit int64
}

func (e *LimitError) Error() string {
	if e.Value < 0 {
		return fmt.Sprintf("onnx: %s overflows int64 (limit %d)", e.What, e.Limit)
	}
	return fmt.Sprintf("onnx: %s is %d, over the limit of %d", e.What, e.Value, e.Limit)
}

// Is reports whether target is ErrLimit.
func (e *LimitError) Is(target error) bool { return errors.Is(ErrLimit, target) }

// OpsetError reports an operator set version this package does not read.
type OpsetError struct {
	Domain  string // "" is the default ONNX domain ("ai.onnx")
	Version int64  // 0 when the model imports no default-domain opset
}

func (e *OpsetError) Error() string {
	d := e.Domain
	if d == "" {
		d = "ai.onnx"
	}
	if e.Version == 0 {
		return fmt.Sprintf("onnx: model imports no %s opset; need one of %d..%d", d, MinOpset, MaxOpset)
	}
	return fmt.Sprintf("onnx: %s opset %d is not supported; need %d..%d", d, e.Version, MinOpset, MaxOpset)
}

// Is reports whether target is ErrUnsupported.
func (e *OpsetError) Is(target error) bool { return errors.Is(ErrUnsupported, target) }

// UnsupportedOpError reports a node whose operator this package does not read.
type UnsupportedOpError struct {
	Op     string
	Domain string // "" for the default ONNX domain
	Node   string // the node's name, or "output <name>" when the node has none
}

func (e *UnsupportedOpError) Error() string {
	op := e.Op
	if e.Domain != "" && e.Domain != "ai.onnx" {
		op = e.Domain + "." + e.Op
	}
	return fmt.Sprintf("onnx: node %q: operator %s is not supported (supported: %s)",
		e.Node, op, strings.Join(SupportedOps(), ", "))
}

// Is reports whether target is ErrUnsupported.
func (e *UnsupportedOpError) Is(target error) bool { return errors.Is(ErrUnsupported, target) }

// NodeError reports a problem with one node: a missing or invalid attribute
// or input, or shapes that do not fit the operator.
type NodeError struct {
	Op   string
	Node string
	Err  error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("onnx: node %q (%s): %v", e.Node, e.Op, e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }

// DanglingInputError reports a node input, or a graph output, that no graph
// input, initializer or node produces.
type DanglingInputError struct {
	Node  string // the consuming node, or "" for a graph output
	Input string // the missing value's name
}

func (e *DanglingInputError) Error() string {
	if e.Node == "" {
		return fmt.Sprintf("onnx: graph output %q is produced by no node, input or initializer", e.Input)
	}
	return fmt.Sprintf("onnx: node %q: input %q is produced by no node, graph input or initializer", e.Node, e.Input)
}

// Is reports whether target is ErrMalformed.
func (e *DanglingInputError) Is(target error) bool { return target == ErrMalformed }

// CycleError reports a graph whose nodes cannot be put in topological order.
type CycleError struct {
	Nodes []string // the nodes left when ordering stopped: every cycle goes through them
}

func (e *CycleError) Error() string {
	const show = 8
	names := e.Nodes
	more := ""
	if len(names) > show {
		more = fmt.Sprintf(" and %d more", len(names)-show)
		names = names[:show]
	}
	return fmt.Sprintf("onnx: graph has a cycle through nodes %q%s", names, more)
}

// Is reports whether target is ErrMalformed.
func (e *CycleError) Is(target error) bool { return target == ErrMalformed }

// TensorError reports an initializer, Constant value or graph value whose
// declaration or data is invalid or unsupported.
type TensorError struct {
	Name   string
	Reason string
	Err    error // ErrMalformed or ErrUnsupported
}

func (e *TensorError) Error() string {
	return fmt.Sprintf("onnx: tensor %q: %s", e.Name, e.Reason)
}

func (e *TensorError) Unwrap() error { return e.Err }

// nodeLabel names a node in errors: its name, or its first output when the
// file leaves the name empty, as many exporters do.
func nodeLabel(name string, outputs []string) string {
	if name != "" {
		return name
	}
	if len(outputs) > 0 {
		return "output " + outputs[0]
	}
	return "(unnamed)"
}
