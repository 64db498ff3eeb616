package torchfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/neuro-go/neuro/compile"
)

// Sentinel errors. The typed errors below wrap them, so callers can branch with
// errors.Is whatever the detail.
var (
	// ErrForbidden is wrapped by *ForbiddenClassError: a pickle named a class
	// or function outside the allowlist.
	ErrForbidden = compile.Sentinel("pytorch: forbidden class", compile.ErrForbidden)
	// ErrLimit means the file asked for more than Limits allows.
	ErrLimit = compile.Sentinel("pytorch: limit exceeded", compile.ErrLimit)
	// ErrTruncated means the file ends before the data it declares.
	ErrTruncated = errors.New("pytorch: truncated data")
	// ErrFormat means the bytes are not a well-formed PyTorch file.
	ErrFormat = errors.New("pytorch: malformed file")
	// ErrUnsupported means a well-formed file uses a feature this package does
	// not read (legacy serialization, out-of-band buffers, quantized tensors).
	ErrUnsupported = compile.Sentinel("pytorch: unsupported feature", compile.ErrUnsupported)
	// ErrNoStateDict is returned by File.StateDict when the file holds neither
	// a state_dict nor a module tree.
	ErrNoStateDict = errors.New("pytorch: file holds no state_dict or module tree")
)

// ForbiddenClassError reports a class or function that the safe unpickler
// refused by name. Nothing named by it was constructed or called.
type ForbiddenClassError struct {
	Entry  string // the pickle's zip entry, e.g. "archive/data.pkl"
	Module string // as written in the pickle, e.g. "posix"
	Name   string // e.g. "system"
	Offset int64  // byte offset of the GLOBAL/STACK_GLOBAL/INST opcode
}

func (e *ForbiddenClassError) Error() string {
	return fmt.Sprintf("pytorch: %s: offset %d: forbidden class %s.%s (not on the allowlist; nothing was called)",
		entryName(e.Entry), e.Offset, e.Module, e.Name)
}

// cause formats a wrapped error without repeating the package prefix.
func cause(err error) string {
	return strings.TrimPrefix(err.Error(), "pytorch: ")
}

// Unwrap lets errors.Is(err, ErrForbidden) match.
func (e *ForbiddenClassError) Unwrap() error { return ErrForbidden }

// PickleError reports a malformed or over-limit pickle, with the offset and the
// opcode where reading stopped.
type PickleError struct {
	Entry  string // the pickle's zip entry; empty for Unpickle on raw bytes
	Offset int64  // byte offset of the opcode
	Op     byte   // the opcode byte
	Err    error
}

func (e *PickleError) Error() string {
	return fmt.Sprintf("pytorch: %s: offset %d (opcode %s): %v", entryName(e.Entry), e.Offset, opName(e.Op), cause(e.Err))
}

func (e *PickleError) Unwrap() error { return e.Err }

// ZipError reports a problem with the zip container or one of its entries.
type ZipError struct {
	Entry string // the entry name; empty for the archive as a whole
	Err   error
}

func (e *ZipError) Error() string {
	if e.Entry == "" {
		return fmt.Sprintf("pytorch: zip: %s", cause(e.Err))
	}
	return fmt.Sprintf("pytorch: zip entry %q: %s", e.Entry, cause(e.Err))
}

func (e *ZipError) Unwrap() error { return e.Err }

// TensorError reports a tensor whose shape, strides, dtype or storage are
// inconsistent, or that cannot be materialised.
type TensorError struct {
	Storage string // the storage key, e.g. "0"; empty when unknown
	Err     error
}

func (e *TensorError) Error() string {
	return fmt.Sprintf("pytorch: tensor on storage %q: %s", e.Storage, cause(e.Err))
}

func (e *TensorError) Unwrap() error { return e.Err }

// LimitError says which limit was exceeded and by how much. It wraps ErrLimit.
type LimitError struct {
	Limit string // the Limits field name
	Value int64  // what the file asked for
	Max   int64  // the limit in force
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("pytorch: limit exceeded: %s: %d > %d", e.Limit, e.Value, e.Max)
}

func (e *LimitError) Unwrap() error { return ErrLimit }

func entryName(s string) string {
	if s == "" {
		return "pickle"
	}
	return s
}

// contextError adds what was being done to an error, keeping it matchable
// with errors.Is and errors.As.
type contextError struct {
	what string
	err  error
}

func (e *contextError) Error() string { return "pytorch: " + e.what + ": " + cause(e.err) }
func (e *contextError) Unwrap() error { return e.err }

func withContext(what string, err error) error { return &contextError{what, err} }
