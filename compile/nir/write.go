package nir

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/neuro-go/neuro/snn"
)

// FormatVersion is the version string Write stores in the file's version
// dataset: the release of the Python nir package whose reader the exports
// are checked against (testdata/check_exports.py).
const FormatVersion = "1.0.7"

// WriteOptions control Write. The zero value writes snn's parameters as
// they are and refuses graphs that use snn's extensions.
type WriteOptions struct {
	// DropExtensions writes graphs that use snn's extensions of NIR
	// (ResetSubtract, Refractory), leaving them out with a warning to
	// Logger; the file then describes a different network. By default
	// such graphs are refused with an error wrapping ErrUnsupported.
	DropExtensions bool
	// Euler converts time constants so that a forward-Euler importer with
	// step Dt reproduces snn's exact dynamics: the inverse of
	// Options.Euler. Default off.
	Euler bool
	// Dt is the step Euler converts for; required (> 0) with Euler.
	Dt float64
	// Logger receives warnings. Default: silent.
	Logger *slog.Logger
}

// Validate reports options that cannot work.
func (o *WriteOptions) Validate() error {
	if o != nil && o.Euler && !(o.Dt > 0 && !math.IsInf(o.Dt, 0)) {
		return fmt.Errorf("nir: WriteOptions.Euler needs a positive Dt, have %v", o.Dt)
	}
	return nil
}

// WriteFile writes g to the named file.
func WriteFile(path string, g *snn.Graph, opts *WriteOptions) error {
	b, err := encode(g, opts)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("nir: %w", err)
	}
	return nil
}

// Write encodes g as a NIR file. The graph is written flat: nodes that
// came from nested NIRGraphs keep their qualified names ("lif1.lif") and
// recurrent edges stay as they are, which NIR allows.
func Write(w io.Writer, g *snn.Graph, opts *WriteOptions) error {
	b, err := encode(g, opts)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("nir: %w", err)
	}
	return nil
}

func encode(g *snn.Graph, opts *WriteOptions) ([]byte, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var o WriteOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if g == nil {
		return nil, fmt.Errorf("nir: nil graph")
	}
	shapes, err := g.Shapes()
	if err != nil {
		return nil, fmt.Errorf("nir: cannot write an invalid graph: %w", err)
	}
	w := newH5Writer()
	var nodeLinks []h5link
	for _, name := range g.Names() {
		if strings.Contains(name, "/") || name == "." || name == ".." {
			return nil, unsupportedf(name, "", "an HDF5 link name cannot contain '/' or be '.' or '..'")
		}
		n := g.Nodes[name]
		if err := checkExtensions(name, n, o); err != nil {
			return nil, err
		}
		if o.Euler {
			n = toEuler(n, o.Dt)
		}
		links, err := writeNode(w, name, n, shapes[name])
		if err != nil {
			return nil, err
		}
		links = append(links, h5link{"type", w.strings(nil, []string{string(n.Kind())})})
		sort.Slice(links, func(i, j int) bool { return links[i].name < links[j].name })
		nodeLinks = append(nodeLinks, h5link{name, w.group(links)})
	}
	strs := make([]string, 0, 2*len(g.Edges))
	for _, e := range g.Edges {
		strs = append(strs, e.From, e.To)
	}
	top := []h5link{
		{"edges", w.strings([]int{len(g.Edges), 2}, strs)},
		{"nodes", w.group(nodeLinks)},
		{"type", w.strings(nil, []string{"NIRGraph"})},
	}
	root := w.group([]h5link{
		{"node", w.group(top)},
		{"version", w.strings(nil, []string{FormatVersion})},
	})
	return w.finish(root), nil
}

func checkExtensions(name string, n snn.Node, o WriteOptions) error {
	var ext []string
	switch n := n.(type) {
	case *snn.IF:
		if n.Reset == snn.ResetSubtract {
			ext = append(ext, "reset")
		}
	case *snn.LIF:
		if n.Reset == snn.ResetSubtract {
			ext = append(ext, "reset")
		}
		if n.Refractory != nil {
			ext = append(ext, "refractory")
		}
	case *snn.CubaLIF:
		if n.Reset == snn.ResetSubtract {
			ext = append(ext, "reset")
		}
		if n.Refractory != nil {
			ext = append(ext, "refractory")
		}
	}
	for _, f := range ext {
		if !o.DropExtensions {
			return unsupportedf(name, f, "snn extension with no NIR field (set WriteOptions.DropExtensions to write the node without it)")
		}
		o.Logger.Warn("nir: dropping an snn extension that NIR cannot express", "node", name, "field", f)
	}
	return nil
}

// broadcast expands a length-1 parameter to the node's size.
func broadcast(xs []float64, n int) []float64 {
	if len(xs) == n {
		return xs
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = xs[0]
	}
	return out
}

func writeNode(w *h5writer, name string, n snn.Node, sh snn.Shape) ([]h5link, error) {
	size := snn.Size(sh.Out)
	param := func(field string, xs []float64) h5link {
		return h5link{field, w.float64s(sh.Out, broadcast(xs, size))}
	}
	scalar := func(field string, x int) h5link { return h5link{field, w.int64s(nil, []int{x})} }
	vec := func(field string, xs ...int) h5link { return h5link{field, w.int64s([]int{len(xs)}, xs)} }
	tensor := func(field string, t *snn.Tensor) h5link { return h5link{field, w.float32s(t.Shape, t.Data)} }
	bias := func(b []float32, n int) h5link {
		if b == nil {
			b = make([]float32, n) // NIR requires a bias; snn's nil means zeros
		}
		return h5link{"bias", w.float32s([]int{len(b)}, b)}
	}
	switch n := n.(type) {
	case *snn.Input:
		return []h5link{vec("shape", n.Shape...)}, nil
	case *snn.Output:
		return []h5link{vec("shape", sh.In...)}, nil
	case *snn.Affine:
		return []h5link{tensor("weight", n.Weight), h5link{"bias", w.float32s([]int{len(n.Bias)}, n.Bias)}}, nil
	case *snn.Linear:
		return []h5link{tensor("weight", n.Weight)}, nil
	case *snn.Scale:
		s := n.Scale
		if len(s) == 1 && size > 1 {
			s = make([]float32, size)
			for i := range s {
				s[i] = n.Scale[0]
			}
		}
		return []h5link{{"scale", w.float32s(sh.Out, s)}}, nil
	case *snn.Conv1d:
		return []h5link{tensor("weight", n.Weight), bias(n.Bias, n.Weight.Shape[0]),
			scalar("stride", n.Stride), scalar("padding", n.Padding), scalar("dilation", n.Dilation),
			scalar("groups", n.Groups), scalar("input_shape", n.InputShape[1])}, nil
	case *snn.Conv2d:
		return []h5link{tensor("weight", n.Weight), bias(n.Bias, n.Weight.Shape[0]),
			vec("stride", n.Stride[:]...), vec("padding", n.Padding[:]...), vec("dilation", n.Dilation[:]...),
			scalar("groups", n.Groups), vec("input_shape", n.InputShape[1:]...)}, nil
	case *snn.Flatten:
		return []h5link{scalar("start_dim", n.StartDim), scalar("end_dim", n.EndDim), vec("input_type", sh.In...)}, nil
	case *snn.SumPool2d:
		return []h5link{vec("kernel_size", n.Kernel[:]...), vec("stride", n.Stride[:]...), vec("padding", n.Padding[:]...)}, nil
	case *snn.AvgPool2d:
		return []h5link{vec("kernel_size", n.Kernel[:]...), vec("stride", n.Stride[:]...), vec("padding", n.Padding[:]...)}, nil
	case *snn.Delay:
		return []h5link{param("delay", n.Delay)}, nil
	case *snn.Threshold:
		return []h5link{param("threshold", n.Threshold)}, nil
	case *snn.I:
		return []h5link{param("r", n.R)}, nil
	case *snn.IF:
		return []h5link{param("r", n.R), param("v_threshold", n.VThreshold), param("v_reset", n.VReset)}, nil
	case *snn.LI:
		return []h5link{param("tau", n.Tau), param("r", n.R), param("v_leak", n.VLeak)}, nil
	case *snn.LIF:
		return []h5link{param("tau", n.Tau), param("r", n.R), param("v_leak", n.VLeak),
			param("v_threshold", n.VThreshold), param("v_reset", n.VReset)}, nil
	case *snn.CubaLI:
		return []h5link{param("tau_syn", n.TauSyn), param("tau_mem", n.TauMem), param("r", n.R),
			param("v_leak", n.VLeak), param("w_in", n.WIn)}, nil
	case *snn.CubaLIF:
		return []h5link{param("tau_syn", n.TauSyn), param("tau_mem", n.TauMem), param("r", n.R),
			param("v_leak", n.VLeak), param("v_threshold", n.VThreshold), param("v_reset", n.VReset),
			param("w_in", n.WIn)}, nil
	}
	return nil, unsupportedf(name, "type", "node kind %s", n.Kind())
}
