package pytorch

import (
	"io"

	"github.com/neuro-go/neuro/compile/pytorch/internal/torchfile"
)

// The reading layer lives in internal/torchfile, so that the importer and
// the extension point for architectures (architecture.go) sit on top of it
// with no access to its insides. The names below are aliases: a value of
// pytorch.File is a torchfile.File, and the sentinel errors are the same
// values, so errors.Is and errors.As match either spelling. Their
// documentation is in internal/torchfile.

// File is an opened PyTorch file; see Open.
type File = torchfile.File

// Kind says what a file holds.
type Kind = torchfile.Kind

// The kinds of file.
const (
	KindObject      = torchfile.KindObject
	KindStateDict   = torchfile.KindStateDict
	KindModule      = torchfile.KindModule
	KindTorchScript = torchfile.KindTorchScript
)

// NamedTensor is one entry of a state_dict.
type NamedTensor = torchfile.NamedTensor

// Attr is a named attribute value.
type Attr = torchfile.Attr

// ModuleInfo describes one module of a module tree.
type ModuleInfo = torchfile.ModuleInfo

// Options configures Open and Unpickle. The zero value (or a nil *Options)
// is safe to use on untrusted files.
type Options = torchfile.Options

// Limits bounds the work and memory a file can demand.
type Limits = torchfile.Limits

// Storage is the flat buffer behind one or more tensors.
type Storage = torchfile.Storage

// Tensor is a strided view of a Storage; Float32s reads its elements.
type Tensor = torchfile.Tensor

// DType is a tensor's element type.
type DType = torchfile.DType

// The element types read.
const (
	Float32  = torchfile.Float32
	Float64  = torchfile.Float64
	Float16  = torchfile.Float16
	BFloat16 = torchfile.BFloat16
	Int8     = torchfile.Int8
	Uint8    = torchfile.Uint8
	Int16    = torchfile.Int16
	Int32    = torchfile.Int32
	Int64    = torchfile.Int64
	Bool     = torchfile.Bool
)

// The Go values of Python values, as Unpickle and File.Root return them.
type (
	Tuple    = torchfile.Tuple
	List     = torchfile.List
	Set      = torchfile.Set
	DictItem = torchfile.DictItem
	Dict     = torchfile.Dict
	Module   = torchfile.Module
	Object   = torchfile.Object
	Global   = torchfile.Global
)

// NewDict returns an empty Dict.
func NewDict() *Dict { return torchfile.NewDict() }

// Sentinel errors of the reading layer; the typed errors wrap them.
var (
	ErrForbidden   = torchfile.ErrForbidden
	ErrLimit       = torchfile.ErrLimit
	ErrTruncated   = torchfile.ErrTruncated
	ErrFormat      = torchfile.ErrFormat
	ErrUnsupported = torchfile.ErrUnsupported
	ErrNoStateDict = torchfile.ErrNoStateDict
)

// Typed errors of the reading layer, which say where a problem is.
type (
	ForbiddenClassError = torchfile.ForbiddenClassError
	PickleError         = torchfile.PickleError
	ZipError            = torchfile.ZipError
	TensorError         = torchfile.TensorError
	LimitError          = torchfile.LimitError
)

// Open reads a file written by torch.save (PyTorch 1.6 or later, the zip
// format) or torch.jit.save. It reads and checks the container and the
// pickles but no tensor data: tensors read their elements when asked.
// Errors wrap ErrForbidden, ErrLimit, ErrTruncated, ErrFormat or
// ErrUnsupported, and are typed (*ForbiddenClassError, *PickleError,
// *ZipError, *TensorError, *LimitError) where a location is known.
func Open(r io.ReaderAt, size int64, opts *Options) (*File, error) {
	return torchfile.Open(r, size, opts)
}

// Unpickle decodes one pickle on its own (no archive, so tensors have no
// data) with the same allowlist and limits as Open.
func Unpickle(data []byte, opts *Options) (any, error) {
	return torchfile.Unpickle(data, opts)
}

// ReadFloat32s opens a file torch.save wrote and returns every tensor of
// its state_dict as float32 values by name: fixtures, reference traces.
func ReadFloat32s(path string, opts *Options) (map[string][]float32, error) {
	return torchfile.ReadFloat32s(path, opts)
}
