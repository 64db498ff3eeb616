package torchfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Kind says what a file holds.
type Kind int

const (
	// KindObject is any other picklable value (a training checkpoint dict,
	// a list of tensors, ...).
	KindObject Kind = iota
	// KindStateDict is a dict from string keys to tensors: what
	// module.state_dict() returns.
	KindStateDict
	// KindModule is a whole nn.Module pickled by torch.save(model).
	KindModule
	// KindTorchScript is an archive written by torch.jit.save.
	KindTorchScript
)

func (k Kind) String() string {
	switch k {
	case KindStateDict:
		return "state_dict"
	case KindModule:
		return "module"
	case KindTorchScript:
		return "torchscript"
	}
	return "object"
}

// File is an opened PyTorch file: its unpickled root value and the archive
// that the root's tensors read their data from. Methods are safe for
// concurrent use; tensor data is read on demand through the io.ReaderAt
// given to Open, which must stay usable while tensors are read.
type File struct {
	kind      Kind
	root      any
	constants any
	name      string
	version   int64
	codeFiles []string
	limits    Limits
}

// NamedTensor is one entry of a state_dict.
type NamedTensor struct {
	Name   string
	Tensor *Tensor
}

// Attr is a named attribute value.
type Attr struct {
	Name  string
	Value any
}

// ModuleInfo describes one module of a module tree.
type ModuleInfo struct {
	Path  string // dotted path from the root, "" for the root: "0", "encoder.1"
	Class string // qualified class name: "torch.nn.modules.linear.Linear"
	// Hyper holds the attributes that are neither tensors, submodules,
	// "training" nor underscore-prefixed: in_features, kernel_size, eps,
	// beta, threshold, reset_mechanism... in attribute order.
	Hyper []Attr
	// Params and Buffers are the module's own tensors, by local name. A
	// TorchScript pickle does not say which tensors are buffers, so there
	// every tensor attribute is listed in Params.
	Params  []NamedTensor
	Buffers []NamedTensor
	Module  *Module
}

// Hyperparameter returns the Hyper value called name.
func (m *ModuleInfo) Hyperparameter(name string) (any, bool) {
	for _, a := range m.Hyper {
		if a.Name == name {
			return a.Value, true
		}
	}
	return nil, false
}

var zipMagic = []byte("PK\x03\x04")

// scanLegacy runs the safe unpickler over the pickles at the start of a
// legacy torch.save file (magic number, protocol, system information,
// the object), so that a hostile one is reported as forbidden, like a
// zip archive's, rather than only as an unsupported format. It builds
// nothing but allowlisted values and calls nothing; a pickle it cannot
// read ends the scan.
func scanLegacy(r io.ReaderAt, size int64, o Options) error {
	data := make([]byte, min(size, o.Limits.MaxPickleBytes))
	if n, err := r.ReadAt(data, 0); err != nil && err != io.EOF {
		return fmt.Errorf("pytorch: reading: %w", err)
	} else {
		data = data[:n]
	}
	for off, k := 0, 0; k < 4 && off < len(data); k++ {
		u := newUnpickler(data[off:], "", o, nil)
		_, err := u.run()
		var fe *ForbiddenClassError
		if errors.As(err, &fe) {
			fe.Offset += int64(off)
			return fe
		}
		if err != nil {
			return nil
		}
		off += u.pos
	}
	return nil
}

// Open reads a file written by torch.save (PyTorch 1.6 or later, the zip
// format) or torch.jit.save. It reads and checks the container and the
// pickles but no tensor data: tensors read their elements when asked.
// Errors wrap ErrForbidden, ErrLimit, ErrTruncated, ErrFormat or
// ErrUnsupported, and are typed (*ForbiddenClassError, *PickleError,
// *ZipError, *TensorError, *LimitError) where a location is known.
func Open(r io.ReaderAt, size int64, opts *Options) (f *File, err error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("%w: internal error: %v", ErrFormat, p)
		}
	}()
	if size < 0 {
		return nil, fmt.Errorf("pytorch: negative size %d", size)
	}
	head := make([]byte, min(size, 4))
	if _, err := r.ReadAt(head, 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("pytorch: reading header: %w", err)
	}
	if !bytes.Equal(head, zipMagic) {
		if len(head) > 0 && head[0] == opProto {
			if err := scanLegacy(r, size, o); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: legacy (pre-1.6, non-zip) torch.save format; re-save with a current torch.save", ErrUnsupported)
		}
		return nil, fmt.Errorf("%w: not a zip archive (no PK signature)", ErrFormat)
	}
	a, err := openArchive(r, size, o.Limits)
	if err != nil {
		return nil, err
	}
	f = &File{name: a.prefix, limits: o.Limits}
	if !a.has("data.pkl") {
		return nil, &ZipError{Entry: a.prefix + "/data.pkl", Err: fmt.Errorf("%w: missing entry (not a torch.save or torch.jit.save archive)", ErrFormat)}
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if a.has("byteorder") {
		b, err := a.read("byteorder", 16, "byteorder")
		if err != nil {
			return nil, err
		}
		switch string(b) {
		case "little":
		case "big":
			order = binary.BigEndian
		default:
			return nil, &ZipError{Entry: a.prefix + "/byteorder", Err: fmt.Errorf("%w: byte order %q", ErrFormat, truncate(b))}
		}
	}
	for _, rel := range []string{"version", ".data/version"} {
		if !a.has(rel) {
			continue
		}
		b, err := a.read(rel, 32, "version")
		if err != nil {
			return nil, err
		}
		v, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if perr != nil {
			return nil, &ZipError{Entry: a.prefix + "/" + rel, Err: fmt.Errorf("%w: version %q", ErrFormat, truncate(b))}
		}
		f.version = v
		break
	}
	script := a.has("constants.pkl")
	for _, n := range a.names {
		if rel := strings.TrimPrefix(n, a.prefix+"/"); strings.HasPrefix(rel, "code/") && !strings.HasSuffix(rel, "/") {
			script = true
			f.codeFiles = append(f.codeFiles, rel)
		}
	}
	slices.Sort(f.codeFiles)

	load := func(pkl, dir string) (any, error) {
		data, err := a.read(pkl, o.Limits.MaxPickleBytes, "MaxPickleBytes")
		if err != nil {
			return nil, err
		}
		resolve := func(st *Storage) error {
			src, entry, err := a.source(dir+"/"+st.Key, st.Len*int64(st.DType.Size()))
			if err != nil {
				return err
			}
			st.src, st.Entry, st.order = src, entry, order
			return nil
		}
		return newUnpickler(data, a.prefix+"/"+pkl, o, resolve).run()
	}
	if f.root, err = load("data.pkl", "data"); err != nil {
		return nil, err
	}
	if script && a.has("constants.pkl") {
		if f.constants, err = load("constants.pkl", "constants"); err != nil {
			return nil, err
		}
	}
	switch {
	case script:
		f.kind = KindTorchScript
	case isStateDict(f.root):
		f.kind = KindStateDict
	default:
		if _, ok := f.root.(*Module); ok {
			f.kind = KindModule
		}
	}
	return f, nil
}

func isStateDict(v any) bool {
	d, ok := v.(*Dict)
	if !ok {
		return false
	}
	for _, it := range d.Items() {
		_, ok1 := it.Key.(string)
		_, ok2 := it.Value.(*Tensor)
		if !ok1 || !ok2 {
			return false
		}
	}
	return true
}

// Kind says what the file holds.
func (f *File) Kind() Kind { return f.kind }

// Root returns the unpickled value of data.pkl (see Unpickle for the Go types
// of Python values).
func (f *File) Root() any { return f.root }

// Constants returns the unpickled constants.pkl of a TorchScript archive (a
// Tuple of tensors), or nil.
func (f *File) Constants() any { return f.constants }

// ArchiveName returns the archive's top-level directory: "archive", or the
// file's name stem in files written by torch 1.x.
func (f *File) ArchiveName() string { return f.name }

// Version returns the serialization format version recorded in the archive,
// or 0 when there is none.
func (f *File) Version() int64 { return f.version }

// CodeFiles returns the TorchScript code entries (relative to the archive
// directory, sorted: "code/__torch__/torch/nn/modules/linear.py", ...). They
// are listed, never run.
func (f *File) CodeFiles() []string { return slices.Clone(f.codeFiles) }

// StateDict returns the tensors by dotted name in the order torch's
// state_dict() gives them: the root dict of a state_dict file, or the
// parameters and persistent buffers collected from a module tree (a full
// module pickle or TorchScript). Other files give ErrNoStateDict.
func (f *File) StateDict() ([]NamedTensor, error) {
	switch f.kind {
	case KindStateDict:
		d := f.root.(*Dict)
		out := make([]NamedTensor, 0, d.Len())
		for _, it := range d.Items() {
			out = append(out, NamedTensor{Name: it.Key.(string), Tensor: it.Value.(*Tensor)})
		}
		return out, nil
	case KindModule, KindTorchScript:
		m, ok := f.root.(*Module)
		if !ok {
			return nil, fmt.Errorf("%w: TorchScript root is %s, not a module", ErrNoStateDict, TypeName(f.root))
		}
		var out []NamedTensor
		w := &walker{limits: f.limits, onPath: map[*Module]bool{}}
		err := w.walk(m, "", 0, func(info *ModuleInfo, prefix string) {
			for _, p := range info.Params {
				out = append(out, NamedTensor{Name: prefix + p.Name, Tensor: p.Tensor})
			}
			nonPersistent := nonPersistentBuffers(info.Module)
			for _, b := range info.Buffers {
				if !nonPersistent[b.Name] {
					out = append(out, NamedTensor{Name: prefix + b.Name, Tensor: b.Tensor})
				}
			}
		})
		return out, err
	}
	return nil, fmt.Errorf("%w (it holds %s)", ErrNoStateDict, TypeName(f.root))
}

// Modules returns the module tree in pre-order, each module once, as
// named_modules() lists it. Files without a module tree give ErrNoStateDict.
func (f *File) Modules() ([]ModuleInfo, error) {
	m, ok := f.root.(*Module)
	if !ok {
		return nil, fmt.Errorf("%w: root is %s, not a module", ErrNoStateDict, TypeName(f.root))
	}
	var out []ModuleInfo
	w := &walker{limits: f.limits, onPath: map[*Module]bool{}, seen: map[*Module]bool{}}
	err := w.walk(m, "", 0, func(info *ModuleInfo, _ string) {
		out = append(out, *info)
	})
	return out, err
}

// walker visits a module tree in pre-order. onPath guards against cycles,
// which a hand-made pickle can build through the memo; seen, when set, skips
// modules already visited (named_modules' rule); visits bounds the work when
// modules are shared.
type walker struct {
	limits Limits
	onPath map[*Module]bool
	seen   map[*Module]bool
	visits int
}

func (w *walker) walk(m *Module, path string, depth int, visit func(*ModuleInfo, string)) error {
	if depth > w.limits.MaxDepth {
		return &LimitError{Limit: "MaxDepth", Value: int64(depth), Max: int64(w.limits.MaxDepth)}
	}
	if w.onPath[m] {
		return fmt.Errorf("%w: module %q (%s) contains itself", ErrFormat, path, m.Class)
	}
	if w.seen != nil {
		if w.seen[m] {
			return nil
		}
		w.seen[m] = true
	}
	if w.visits++; w.visits > w.limits.MaxModules {
		return &LimitError{Limit: "MaxModules", Value: int64(w.visits), Max: int64(w.limits.MaxModules)}
	}
	w.onPath[m] = true
	defer delete(w.onPath, m)
	info, children, err := describe(m, path)
	if err != nil {
		return err
	}
	prefix := ""
	if path != "" {
		prefix = path + "."
	}
	visit(&info, prefix)
	for _, c := range children {
		if err := w.walk(c.Module, prefix+c.Name, depth+1, visit); err != nil {
			return err
		}
	}
	return nil
}

type namedModule struct {
	Name   string
	Module *Module
}

// describe splits a module's attributes into parameters, buffers,
// submodules and hyperparameters, for nn.Module pickles (which keep them in
// _parameters, _buffers and _modules) and TorchScript ones (plain attributes).
func describe(m *Module, path string) (ModuleInfo, []namedModule, error) {
	info := ModuleInfo{Path: path, Class: m.Class, Module: m}
	var children []namedModule
	if mods, ok := m.Attr("_modules"); ok {
		tensors := func(field string, dst *[]NamedTensor) error {
			v, ok := m.Attr(field)
			if !ok || v == nil {
				return nil
			}
			d, ok := v.(*Dict)
			if !ok {
				return fmt.Errorf("%w: %s.%s of %q is %s", ErrFormat, m.Class, field, path, TypeName(v))
			}
			for _, it := range d.Items() {
				name, ok := it.Key.(string)
				if !ok {
					return fmt.Errorf("%w: %s key of %q is %s", ErrFormat, field, path, TypeName(it.Key))
				}
				if it.Value == nil {
					continue // e.g. Linear(bias=False) registers bias as None
				}
				t, ok := it.Value.(*Tensor)
				if !ok {
					return fmt.Errorf("%w: %s[%q] of %q is %s", ErrFormat, field, name, path, TypeName(it.Value))
				}
				*dst = append(*dst, NamedTensor{Name: name, Tensor: t})
			}
			return nil
		}
		if err := tensors("_parameters", &info.Params); err != nil {
			return info, nil, err
		}
		if err := tensors("_buffers", &info.Buffers); err != nil {
			return info, nil, err
		}
		d, ok := mods.(*Dict)
		if !ok {
			return info, nil, fmt.Errorf("%w: _modules of %q is %s", ErrFormat, path, TypeName(mods))
		}
		for _, it := range d.Items() {
			name, ok := it.Key.(string)
			if !ok {
				return info, nil, fmt.Errorf("%w: _modules key of %q is %s", ErrFormat, path, TypeName(it.Key))
			}
			if it.Value == nil {
				continue
			}
			c, ok := it.Value.(*Module)
			if !ok {
				return info, nil, fmt.Errorf("%w: _modules[%q] of %q is %s", ErrFormat, name, path, TypeName(it.Value))
			}
			children = append(children, namedModule{name, c})
		}
		for _, it := range m.Attrs.Items() {
			name, _ := it.Key.(string)
			if keepHyper(name, it.Value) {
				info.Hyper = append(info.Hyper, Attr{name, it.Value})
			}
		}
		return info, children, nil
	}
	for _, it := range m.Attrs.Items() {
		name, _ := it.Key.(string)
		switch v := it.Value.(type) {
		case *Tensor:
			info.Params = append(info.Params, NamedTensor{Name: name, Tensor: v})
		case *Module:
			children = append(children, namedModule{name, v})
		default:
			if keepHyper(name, v) {
				info.Hyper = append(info.Hyper, Attr{name, v})
			}
		}
	}
	return info, children, nil
}

func keepHyper(name string, v any) bool {
	if name == "" || name == "training" || strings.HasPrefix(name, "_") {
		return false
	}
	switch v.(type) {
	case *Tensor, *Module, *Storage:
		return false
	}
	return true
}

func nonPersistentBuffers(m *Module) map[string]bool {
	v, ok := m.Attr("_non_persistent_buffers_set")
	if !ok {
		return nil
	}
	s, ok := v.(*Set)
	if !ok {
		return nil
	}
	out := make(map[string]bool, len(s.Items))
	for _, x := range s.Items {
		if n, ok := x.(string); ok {
			out[n] = true
		}
	}
	return out
}

// ReadFloat32s opens a file torch.save wrote and returns every tensor of
// its state_dict as float32 values by name: fixtures, reference traces.
func ReadFloat32s(path string, opts *Options) (map[string][]float32, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	f, err := Open(fh, st.Size(), opts)
	if err != nil {
		return nil, err
	}
	sd, err := f.StateDict()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]float32, len(sd))
	for _, nt := range sd {
		if out[nt.Name], err = nt.Tensor.Float32s(); err != nil {
			return nil, fmt.Errorf("pytorch: %s: tensor %q: %w", path, nt.Name, err)
		}
	}
	return out, nil
}
