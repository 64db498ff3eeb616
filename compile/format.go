package compile

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/neuro-go/neuro/snn"
)

// An Importer reads a network file into a spiking graph. Spiking networks
// (snnTorch, Norse, NIR) come back as they are; artificial networks (ReLU
// MLPs and CNNs) are converted to spiking ones with ConvertANN, using the
// calibration data in opts.
type Importer func(r io.ReaderAt, size int64, opts *ImportOptions) (*snn.Graph, *ImportReport, error)

// ImportOptions are passed to every importer. The zero value works.
type ImportOptions struct {
	// Dt is the simulation time step the graph is built for, in seconds.
	// Importers of discrete-time frameworks map their per-step dynamics onto
	// it. Default 1e-3.
	Dt float64
	// MaxBytes bounds what an importer may read and allocate for tensors.
	// Default 1 GiB.
	MaxBytes int64
	// MaxValues bounds the values one sample of the network holds, summed
	// over its layers (each layer's output: a neuron's state, a
	// convolution's outputs), checked from the shapes before anything of
	// that size is built. A file's weights are bounded by MaxBytes, but a
	// small convolution declared on a large input holds a value per
	// output pixel. Default DefaultMaxValues.
	MaxValues int
	// Layers describes the layers of a state_dict whose tensors do not say
	// what they are (Norse, SpikingJelly, plain PyTorch). Nil when the file
	// describes itself.
	Layers []LayerSpec
	// Conversion controls ANN-to-SNN conversion of artificial networks.
	Conversion ConversionOptions
}

func (o *ImportOptions) withDefaults() ImportOptions {
	var c ImportOptions
	if o != nil {
		c = *o
	}
	if c.Dt == 0 {
		c.Dt = 1e-3
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = 1 << 30
	}
	if c.MaxValues == 0 {
		c.MaxValues = DefaultMaxValues
	}
	return c
}

// DefaultMaxValues is ImportOptions.MaxValues' default: 1,048,576 values
// a sample, about 0.5 GB of working memory at compile time and 60 MB of
// state per batch slot.
const DefaultMaxValues = 1 << 20

// BoundedSize is the number of elements of a shape, or limit+1 when it
// is larger (checked before the product can overflow). A shape with a
// dimension below 1 is 0: the layers refuse it, naming it.
func BoundedSize(shape []int, limit int) int {
	n := 1
	for _, d := range shape {
		if d < 1 {
			return 0
		}
		if n > limit/d {
			return limit + 1
		}
		n *= d
	}
	return n
}

// CheckValues refuses a graph whose nodes' outputs (its Output nodes'
// copies aside) hold more than limit
// values per sample, naming the largest node: what a file declares (a
// NIR graph's input shape, say) must not make the simulator allocate
// without bound. Every importer's graph passes it in Import, whatever
// the importer checked on its own.
func CheckValues(g *snn.Graph, limit int) error {
	shapes, err := g.Shapes()
	if err != nil {
		return err
	}
	total, largest, at := 0, 0, ""
	for _, name := range g.Topology().Order {
		if g.Nodes[name].Kind() == snn.KindOutput {
			continue // a copy of its source, counted there
		}
		n := BoundedSize(shapes[name].Out, limit)
		total = min(total+n, limit+1)
		if n > largest || at == "" {
			largest, at = n, name
		}
	}
	if total > limit {
		return &UnsupportedError{Node: at, Reason: fmt.Sprintf(
			"the network would hold more than %d values per sample (ImportOptions.MaxValues): its nodes' outputs add up to more, this one alone %d",
			limit, largest)}
	}
	return nil
}

// WithDefaults returns the options with every zero field set to its
// default, for importers to read.
func (o *ImportOptions) WithDefaults() ImportOptions { return o.withDefaults() }

// LayerSpec describes one layer of a network for importers that need it:
// its name prefix in the state_dict and what it is.
type LayerSpec struct {
	Name string `json:"name"` // key prefix in the state_dict, e.g. "0" or "fc1"
	// Kind is "linear", "conv2d", "relu", "flatten", "avgpool2d",
	// "maxpool2d", "batchnorm", "embedding" (a language model's first
	// layer), or a neuron: "lif", "li", "if", "cubalif",
	// "snntorch.leaky", "snntorch.synaptic", "norse.lif", "norse.li", ...
	Kind   string             `json:"kind"`
	Params map[string]float64 `json:"params,omitempty"`
	// Shape is the input shape per sample of the first layer, when needed.
	Shape []int `json:"shape,omitempty"`
}

// ImportReport says what an importer did.
type ImportReport struct {
	Format      string   `json:"format"`
	Kind        string   `json:"kind"` // e.g. "snntorch state_dict", "onnx ann"
	Converted   bool     `json:"converted"`
	Warnings    []string `json:"warnings,omitempty"`
	Approximate []string `json:"approximated,omitempty"`
	// Conversion holds the ANN-to-SNN conversion's figures when one ran.
	Conversion *ConversionReport `json:"conversion,omitempty"`
}

// ErrUnknownFormat is returned for a format nobody registered.
var ErrUnknownFormat = errors.New("compile: unknown format")

// ErrUnsupported is wrapped by importers and passes when a file parses but
// holds something the compiler cannot represent (an operator, a layer, a
// neuron model) or a network does not fit a target. Servers map it to 422.
var ErrUnsupported = errors.New("compile: unsupported")

// ErrForbidden is matched by importers' errors for a file that asks for
// something refused for safety, such as a pickle that names a function
// off the allowlist: nothing it names was run. Servers answer it as a
// hostile file (400), not as an unsupported network.
var ErrForbidden = errors.New("compile: forbidden content")

// ErrLimit is matched by importers' errors for a file that declares more
// than ImportOptions allow (bytes, elements, depth).
var ErrLimit = errors.New("compile: limit exceeded")

// Sentinel returns an importer's own sentinel error: its text is msg, and
// errors.Is matches it to kind as well as to itself. Kind is one of
// ErrUnsupported, ErrForbidden and ErrLimit, so that a program linking
// several importers branches on this package's sentinels alone.
func Sentinel(msg string, kind error) error { return &sentinel{msg, kind} }

type sentinel struct {
	msg  string
	kind error
}

func (s *sentinel) Error() string        { return s.msg }
func (s *sentinel) Is(target error) bool { return target == s.kind }

// UnsupportedError names the node and reason; it wraps ErrUnsupported.
type UnsupportedError struct {
	Node   string
	Reason string
}

func (e *UnsupportedError) Error() string {
	if e.Node == "" {
		return "compile: unsupported: " + e.Reason
	}
	return fmt.Sprintf("compile: unsupported: node %q: %s", e.Node, e.Reason)
}

func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

var (
	formatsMu sync.RWMutex
	formats   = map[string]Importer{}
	aliases   = map[string]string{}
	sniffers  = map[string]Sniffer{}
)

// RegisterFormat makes an importer available under name (lower case). It is
// meant for init functions of importer packages, chosen by blank import:
//
//	import _ "github.com/neuro-go/neuro/compile/onnx"
//
// Registering a name twice panics: that is a programming error.
func RegisterFormat(name string, imp Importer, alias ...string) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	name = strings.ToLower(name)
	if _, dup := formats[name]; dup || imp == nil {
		panic("compile: RegisterFormat called twice for " + name + " or with a nil importer")
	}
	formats[name] = imp
	for _, a := range alias {
		aliases[strings.ToLower(a)] = name
	}
}

// Formats lists the registered format names, sorted.
func Formats() []string {
	formatsMu.RLock()
	defer formatsMu.RUnlock()
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// A Sniffer reports whether a file is in its format from the file's first
// bytes: head holds SniffLen of them, or the whole file when it is
// shorter. It must not keep head, and should be cheap and strict: it is
// asked about every file imported without a format name, and two formats
// that both claim a file make Import refuse it.
type Sniffer func(head []byte) bool

// SniffLen is how many of a file's first bytes a Sniffer sees.
const SniffLen = 512

// Magic returns a Sniffer that accepts files beginning with magic, where
// '?' matches any byte, as image.RegisterFormat's magic strings do.
func Magic(magic string) Sniffer {
	return func(head []byte) bool {
		if len(head) < len(magic) {
			return false
		}
		for i := 0; i < len(magic); i++ {
			if magic[i] != '?' && magic[i] != head[i] {
				return false
			}
		}
		return true
	}
}

// RegisterSniffer lets Import recognise the registered format name from a
// file's first bytes when it is given no format. An importer package calls
// it in its init function after RegisterFormat, once per signature:
//
//	compile.RegisterFormat("nir", importNIR)
//	compile.RegisterSniffer("nir", compile.Magic("\x89HDF\r\n\x1a\n"))
//
// A name that no RegisterFormat registered, or a nil sniffer, panics: that
// is a programming error.
func RegisterSniffer(name string, sniff Sniffer) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	name = strings.ToLower(name)
	if _, ok := formats[name]; !ok || sniff == nil {
		panic("compile: RegisterSniffer for " + name + ", which is not a registered format, or with a nil sniffer")
	}
	if prev := sniffers[name]; prev != nil {
		sniff = anyOf(prev, sniff)
	}
	sniffers[name] = sniff
}

func anyOf(a, b Sniffer) Sniffer {
	return func(head []byte) bool { return a(head) || b(head) }
}

// Sniff returns the name of the registered format whose Sniffer accepts
// the file's first SniffLen bytes. A file that no format claims, or that
// more than one does, gives an error wrapping ErrUnknownFormat that shows
// the bytes; a failed read gives the read's error.
func Sniff(r io.ReaderAt, size int64) (string, error) {
	head := make([]byte, min(max(size, 0), SniffLen))
	if n, err := r.ReadAt(head, 0); err != nil && !(err == io.EOF && n == len(head)) {
		return "", fmt.Errorf("compile: reading the file's first bytes: %w", err)
	}
	return sniff(head)
}

func sniff(head []byte) (string, error) {
	formatsMu.RLock()
	var hits []string
	for name, s := range sniffers {
		if s(head) {
			hits = append(hits, name)
		}
	}
	formatsMu.RUnlock()
	sort.Strings(hits)
	shown := head[:min(len(head), 8)]
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		if len(head) == 0 {
			return "", fmt.Errorf("%w: the file is empty", ErrUnknownFormat)
		}
		registered := Formats()
		if len(registered) == 0 {
			pkgs := make([]string, len(importers))
			for i, imp := range importers {
				pkgs[i] = strconv.Quote(importerPath + imp.name)
			}
			last := len(pkgs) - 1
			return "", fmt.Errorf("%w: no format is registered to recognise a file that begins % x; import _ %s or %s, or name the format",
				ErrUnknownFormat, shown, strings.Join(pkgs[:last], ", "), pkgs[last])
		}
		return "", fmt.Errorf("%w: no registered format recognises a file that begins % x (registered: %s); name the format", ErrUnknownFormat, shown, strings.Join(registered, ", "))
	}
	return "", fmt.Errorf("%w: a file that begins % x could be any of %s; name the format", ErrUnknownFormat, shown, strings.Join(hits, ", "))
}

// Import reads a network in the named format. An empty format is
// recognised from the file's first bytes by the registered Sniffers (see
// Sniff), so that a caller holding only a file need not know what wrote it.
// A format that no linked package registered is an error wrapping
// ErrUnknownFormat that names the package to import.
func Import(format string, r io.ReaderAt, size int64, opts *ImportOptions) (*snn.Graph, *ImportReport, error) {
	if format == "" {
		var err error
		if format, err = Sniff(r, size); err != nil {
			return nil, nil, err
		}
	}
	formatsMu.RLock()
	name := strings.ToLower(format)
	if a, ok := aliases[name]; ok {
		name = a
	}
	imp := formats[name]
	formatsMu.RUnlock()
	if imp == nil {
		return nil, nil, unknownFormat(format, Formats())
	}
	o := opts.withDefaults()
	g, rep, err := imp(r, size, &o)
	if err != nil {
		return nil, nil, err
	}
	if err := g.Validate(); err != nil {
		return nil, nil, fmt.Errorf("compile: %s importer produced an invalid graph: %w", name, err)
	}
	if err := CheckValues(g, o.MaxValues); err != nil {
		return nil, nil, err
	}
	if rep == nil {
		rep = &ImportReport{}
	}
	rep.Format = name
	return g, rep, nil
}

// importerPath is where this module's importers live: a format that is not
// registered is most often one whose package the program forgot to
// import, so the error names it.
const importerPath = "github.com/neuro-go/neuro/compile/"

// importers are this module's importer packages, importerPath+name, with
// the format names each registers.
var importers = []struct {
	name    string
	aliases []string
}{
	{"pytorch", []string{"torchscript"}},
	{"onnx", nil},
	{"nir", []string{"nir-hdf5"}},
}

// unknownFormat says why format is not registered and what to import.
func unknownFormat(format string, registered []string) error {
	what := fmt.Sprintf("%q: no format is registered", format)
	if len(registered) > 0 {
		what = fmt.Sprintf("%q (registered: %s)", format, strings.Join(registered, ", "))
	}
	name := strings.ToLower(format)
	known := make([]string, len(importers))
	for i, imp := range importers {
		if name == imp.name || slices.Contains(imp.aliases, name) {
			return fmt.Errorf("%w %s; import _ %q", ErrUnknownFormat, what, importerPath+imp.name)
		}
		known[i] = imp.name
		if len(imp.aliases) > 0 {
			known[i] += " (also " + strings.Join(imp.aliases, ", ") + ")"
		}
	}
	last := len(known) - 1
	return fmt.Errorf("%w %s; this module's importers are %s and %s, each linked by import _ %q",
		ErrUnknownFormat, what, strings.Join(known[:last], ", "), known[last], importerPath+"<name>")
}
