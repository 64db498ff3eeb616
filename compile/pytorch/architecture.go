package pytorch

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// An Architecture imports the state_dicts of one network design whose
// tensor names say what it is, so that such files import with no
// ImportOptions.Layers: the neuro-1 language models (models/lima) are one,
// and a user's own design can be another. Import asks every registered
// Architecture whether a state_dict is its own before it tries snnTorch's
// layer inference.
type Architecture interface {
	// Match reports whether sd is this architecture's. It should decide
	// from sd's keys and shapes alone: Match must not read tensor data, and
	// it is asked about every state_dict imported.
	Match(sd *StateDict) bool
	// Build returns the spiking graph of a state_dict that Match accepted.
	// opts has its defaults filled in. The report's Kind names what was
	// read ("neuro lima state_dict"), its Warnings what was inferred;
	// Import sets its Format. A state_dict that matches but cannot be
	// built gets a *compile.UnsupportedError naming the key at fault.
	Build(sd *StateDict, opts *compile.ImportOptions) (*snn.Graph, *compile.ImportReport, error)
}

var (
	archMu sync.RWMutex
	archs  = map[string]Architecture{}
)

// RegisterArchitecture makes a available to Import under name, in the
// manner of compile.RegisterFormat: it is meant for the init function of
// the package that defines the architecture, which programs then choose by
// blank import:
//
//	import _ "github.com/neuro-go/neuro/models/lima"
//
// Registering a name twice, or a nil Architecture, panics: that is a
// programming error.
func RegisterArchitecture(name string, a Architecture) {
	archMu.Lock()
	defer archMu.Unlock()
	if _, dup := archs[name]; dup || a == nil || name == "" {
		panic("pytorch: RegisterArchitecture called twice for " + name + ", with an empty name or with a nil Architecture")
	}
	archs[name] = a
}

// Architectures lists the registered architecture names, sorted.
func Architectures() []string {
	archMu.RLock()
	defer archMu.RUnlock()
	names := make([]string, 0, len(archs))
	for n := range archs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// architectureList names the registered architectures for error messages.
func architectureList() string {
	if names := Architectures(); len(names) > 0 {
		return strings.Join(names, ", ")
	}
	return "none"
}

// matchArchitecture returns the one registered architecture that claims
// sd, or nil. Two that claim it are an error rather than a race decided by
// init order.
func matchArchitecture(sd *StateDict) (string, Architecture, error) {
	archMu.RLock()
	defer archMu.RUnlock()
	var names []string
	for n, a := range archs {
		if a.Match(sd) {
			names = append(names, n)
		}
	}
	switch len(names) {
	case 0:
		return "", nil, nil
	case 1:
		return names[0], archs[names[0]], nil
	}
	slices.Sort(names)
	return "", nil, &compile.UnsupportedError{Reason: "the state_dict matches more than one registered architecture: " + strings.Join(names, ", ")}
}

// buildArchitecture imports sd through the registered architecture that
// claims it; ok is false when none does.
func buildArchitecture(sd []NamedTensor, o *compile.ImportOptions) (g *snn.Graph, rep *compile.ImportReport, ok bool, err error) {
	view, err := newStateDict(sd, o.MaxBytes)
	if err != nil {
		return nil, nil, false, err
	}
	name, a, err := matchArchitecture(view)
	if a == nil || err != nil {
		return nil, nil, false, err
	}
	g, rep, err = a.Build(view, o)
	if err != nil {
		return nil, nil, true, err
	}
	if g == nil {
		return nil, nil, true, fmt.Errorf("pytorch: import: architecture %s built no graph", name)
	}
	if rep == nil {
		rep = &compile.ImportReport{Kind: name + " state_dict"}
	}
	rep.Format = "pytorch"
	return g, rep, true, nil
}

// A StateDict is the view of a state_dict that an Architecture reads: its
// keys in torch's order, each tensor's shape, and its elements as float32
// on demand. Reading is bounded: the elements read through one StateDict
// may total at most ImportOptions.MaxBytes (as float32), checked before
// anything is allocated, so an architecture written against this view
// needs no limits of its own to read hostile files safely.
//
// A StateDict is not safe for concurrent use.
type StateDict struct {
	entries []stateEntry
	index   map[string]int
	max     int64 // the byte budget; 0 means none (NewStateDict)
	used    int64
}

type stateEntry struct {
	key   string
	shape []int
	t     *Tensor   // read from a file
	mem   []float32 // or held in memory
}

// newStateDict is the view of a file's state_dict, reading at most
// maxBytes of float32 elements.
func newStateDict(sd []NamedTensor, maxBytes int64) (*StateDict, error) {
	v := &StateDict{index: make(map[string]int, len(sd)), max: maxBytes}
	for _, nt := range sd {
		shape := make([]int, len(nt.Tensor.Shape))
		for i, d := range nt.Tensor.Shape {
			if d < 0 || int64(int(d)) != d {
				return nil, &compile.UnsupportedError{Node: nt.Name, Reason: fmt.Sprintf("shape %v does not fit an int", nt.Tensor.Shape)}
			}
			shape[i] = int(d)
		}
		if err := v.add(nt.Name, shape, nt.Tensor, nil); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// NewStateDict returns a StateDict over tensors held in memory, keys[i]
// naming tensors[i], in that order: for testing an Architecture without
// writing a file, or for state_dicts read by other means. It has no byte
// budget. Float32s returns copies, so an Architecture cannot change the
// tensors given here.
func NewStateDict(keys []string, tensors []*snn.Tensor) (*StateDict, error) {
	if len(keys) != len(tensors) {
		return nil, fmt.Errorf("pytorch: NewStateDict: %d keys for %d tensors", len(keys), len(tensors))
	}
	v := &StateDict{index: make(map[string]int, len(keys))}
	for i, t := range tensors {
		if t == nil || snn.Size(t.Shape) != len(t.Data) {
			return nil, fmt.Errorf("pytorch: NewStateDict: tensor %q is nil or its shape does not match its data", keys[i])
		}
		if err := v.add(keys[i], slices.Clone(t.Shape), nil, t.Data); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (sd *StateDict) add(key string, shape []int, t *Tensor, mem []float32) error {
	if _, dup := sd.index[key]; dup {
		return fmt.Errorf("pytorch: state_dict key %q appears twice", key)
	}
	sd.index[key] = len(sd.entries)
	sd.entries = append(sd.entries, stateEntry{key: key, shape: shape, t: t, mem: mem})
	return nil
}

// Len returns the number of tensors.
func (sd *StateDict) Len() int { return len(sd.entries) }

// Keys returns the tensor names in torch's state_dict order.
func (sd *StateDict) Keys() []string {
	out := make([]string, len(sd.entries))
	for i, e := range sd.entries {
		out[i] = e.key
	}
	return out
}

// Has reports whether key names a tensor.
func (sd *StateDict) Has(key string) bool {
	_, ok := sd.index[key]
	return ok
}

// Shape returns the shape of the tensor called key ([] for a scalar), and
// false when there is none. It reads no data.
func (sd *StateDict) Shape(key string) ([]int, bool) {
	i, ok := sd.index[key]
	if !ok {
		return nil, false
	}
	return slices.Clone(sd.entries[i].shape), true
}

// Float32s returns the elements of the tensor called key in row-major
// order, converted to float32. A missing key, an element that is NaN or
// infinite (no device can run one) and a read past the byte budget are
// refused: the first two as a *compile.UnsupportedError naming the key,
// the last as a *LimitError.
func (sd *StateDict) Float32s(key string) ([]float32, error) {
	i, ok := sd.index[key]
	if !ok {
		return nil, &compile.UnsupportedError{Node: key, Reason: "missing tensor"}
	}
	e := sd.entries[i]
	var xs []float32
	if e.t != nil {
		n := e.t.NumElements()
		if n*4 > sd.max-sd.used {
			return nil, &LimitError{Limit: "ImportOptions.MaxBytes (at " + key + ")", Value: sd.used + n*4, Max: sd.max}
		}
		sd.used += n * 4
		var err error
		if xs, err = e.t.Float32s(); err != nil {
			return nil, fmt.Errorf("pytorch: import: tensor %q: %w", key, err)
		}
	} else {
		xs = slices.Clone(e.mem)
	}
	for i, x := range xs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, &compile.UnsupportedError{Node: key, Reason: fmt.Sprintf("element %d is %v", i, x)}
		}
	}
	return xs, nil
}

// Tensor reads the tensor called key as an snn.Tensor, refusing it unless
// it has rank dimensions, none of them empty. Errors are Float32s's, or a
// *compile.UnsupportedError naming the key.
func (sd *StateDict) Tensor(key string, rank int) (*snn.Tensor, error) {
	shape, ok := sd.Shape(key)
	if !ok {
		return nil, &compile.UnsupportedError{Node: key, Reason: "missing tensor"}
	}
	if len(shape) != rank {
		return nil, &compile.UnsupportedError{Node: key, Reason: fmt.Sprintf("shape %v, want %d dimensions", shape, rank)}
	}
	for _, d := range shape {
		if d <= 0 {
			return nil, &compile.UnsupportedError{Node: key, Reason: fmt.Sprintf("shape %v has an empty dimension", shape)}
		}
	}
	xs, err := sd.Float32s(key)
	if err != nil {
		return nil, err
	}
	return &snn.Tensor{Shape: shape, Data: xs}, nil
}
