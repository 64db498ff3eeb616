package plot

import (
	"errors"
	"fmt"
	"image/color"
	"slices"

	"github.com/neuro-go/neuro/snn"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TracesOptions configure a trace plot. The zero value draws the membrane
// potential of every probed neuron in batch slot 0, up to 10 lines.
type TracesOptions struct {
	// Title defaults to a name for the variable.
	Title string
	// Var is the variable drawn: snn.VarV (the default), snn.VarI or
	// snn.VarOut. It must have been probed.
	Var string
	// Nodes are the probed nodes drawn. Nil means all that probed Var.
	Nodes []string
	// Slot is the batch slot drawn.
	Slot int
	// MaxLines caps the number of lines, taken in probe order. Default
	// 10; a legend names them when there are at most 12.
	MaxLines int
	// Threshold draws a dashed line at the firing threshold of the
	// neurons drawn (IF, LIF and CubaLIF nodes, variable v), one per
	// distinct value.
	Threshold bool
	// MarkSpikes draws a stroke above the threshold where a drawn neuron
	// fired, since the trace itself shows only the reset. The node's
	// spikes must have been recorded.
	MarkSpikes bool
}

// Traces draws recorded traces against time in milliseconds, one line per
// neuron. It fails if nothing was recorded, or if the variable, the nodes
// or the slot asked for were not.
func Traces(rec *snn.Recorder, opts *TracesOptions) (*Figure, error) {
	if rec == nil {
		return nil, errors.New("plot: Traces of a nil recorder")
	}
	var o TracesOptions
	if opts != nil {
		o = *opts
	}
	if o.Var == "" {
		o.Var = snn.VarV
	}
	if o.MaxLines == 0 {
		o.MaxLines = 10
	}
	if o.MaxLines < 0 {
		return nil, fmt.Errorf("plot: Traces: MaxLines is %d, must be positive", o.MaxLines)
	}
	if !slices.Contains(rec.Slots(), o.Slot) {
		return nil, fmt.Errorf("plot: Traces: slot %d was not recorded (recorded: %v)", o.Slot, rec.Slots())
	}
	if rec.Len() == 0 {
		return nil, errors.New("plot: Traces: nothing recorded yet")
	}
	var probes []snn.Probe
	for _, p := range rec.Probes() {
		if p.Var == o.Var && (o.Nodes == nil || slices.Contains(o.Nodes, p.Node)) {
			probes = append(probes, p)
		}
	}
	for _, name := range o.Nodes {
		if !slices.ContainsFunc(probes, func(p snn.Probe) bool { return p.Node == name }) {
			return nil, fmt.Errorf("plot: Traces: variable %q of node %q was not probed", o.Var, name)
		}
	}
	if len(probes) == 0 {
		return nil, fmt.Errorf("plot: Traces: no probe of variable %q", o.Var)
	}

	title, ylabel := o.Title, ""
	switch o.Var {
	case snn.VarV:
		title, ylabel = orDefault(title, "Membrane potential"), "membrane potential v"
	case snn.VarI:
		title, ylabel = orDefault(title, "Synaptic current"), "synaptic current i"
	default:
		title, ylabel = orDefault(title, "Node output"), "output"
	}
	fig := newFigure(title, "time (ms)", ylabel)
	p := fig.Plot
	ms := rec.Dt() * 1e3
	times := rec.Times()
	g := rec.Simulator().Graph()

	type line struct {
		node   string
		neuron int
	}
	var lines []line
	for _, pr := range probes {
		for _, j := range pr.Neurons {
			if len(lines) < o.MaxLines {
				lines = append(lines, line{pr.Node, j})
			}
		}
	}
	var thresholds []float64
	var marks plotter.XYs
	var markColors []color.Color
	for li, l := range lines {
		tr := rec.Trace(l.node, o.Var, o.Slot, l.neuron)
		xys := make(plotter.XYs, len(tr))
		for k, v := range tr {
			xys[k] = plotter.XY{X: times[k] * 1e3, Y: float64(v)}
		}
		pl, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plot: Traces: %s[%d]: %w", l.node, l.neuron, err)
		}
		pl.LineStyle = draw.LineStyle{Color: Color(li), Width: vg.Points(1)}
		p.Add(pl)
		if len(lines) <= 12 {
			p.Legend.Add(fmt.Sprintf("%s[%d]", l.node, l.neuron), pl)
		}
		th, hasTh := threshold(g.Nodes[l.node], l.neuron)
		if o.Threshold && o.Var == snn.VarV && hasTh && !slices.Contains(thresholds, th) {
			thresholds = append(thresholds, th)
		}
		if o.MarkSpikes {
			if !hasTh {
				return nil, fmt.Errorf("plot: Traces: MarkSpikes: node %q has no firing threshold", l.node)
			}
			events := rec.Spikes(l.node)
			if events == nil {
				return nil, fmt.Errorf("plot: Traces: MarkSpikes: spikes of node %q were not recorded", l.node)
			}
			for _, e := range events {
				if int(e.Slot) == o.Slot && int(e.Index) == l.neuron {
					marks = append(marks, plotter.XY{X: float64(e.Step) * ms, Y: th})
					markColors = append(markColors, Color(li))
				}
			}
		}
	}
	// As in Raster, the axis starts where the first recorded step began.
	lo, hi := max(times[0]*1e3-ms, 0), times[len(times)-1]*1e3
	if hi <= lo {
		hi = lo + ms
	}
	for _, th := range thresholds {
		l := hline(th, lo, hi, color.Gray{Y: 90}, true)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("threshold %g", th), l)
	}
	if len(marks) > 0 {
		s := &plotter.Scatter{
			XYs:        marks,
			GlyphStyle: draw.GlyphStyle{Radius: vg.Points(2), Shape: spikeGlyph{}},
			GlyphStyleFunc: func(i int) draw.GlyphStyle {
				return draw.GlyphStyle{Color: markColors[i], Radius: vg.Points(2), Shape: spikeGlyph{}}
			},
		}
		p.Add(s)
	}
	p.X.Min, p.X.Max = lo, hi
	rows := len(thresholds)
	if len(lines) <= 12 {
		rows += len(lines)
	}
	if p.Y.Max <= p.Y.Min {
		p.Y.Min, p.Y.Max = p.Y.Min-0.5, p.Y.Max+0.5
	}
	// Room for the spike strokes, then for the legend.
	if len(marks) > 0 {
		p.Y.Max += 0.08 * (p.Y.Max - p.Y.Min)
	}
	p.Y.Max += legendRoom(rows, p.Y.Max-p.Y.Min)
	p.Legend.Top = true
	return fig, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// threshold returns v_threshold of neuron i of a spiking neuron node.
func threshold(n snn.Node, i int) (float64, bool) {
	var th []float64
	switch n := n.(type) {
	case *snn.IF:
		th = n.VThreshold
	case *snn.LIF:
		th = n.VThreshold
	case *snn.CubaLIF:
		th = n.VThreshold
	default:
		return 0, false
	}
	switch {
	case len(th) == 1:
		return th[0], true
	case i < len(th):
		return th[i], true
	}
	return 0, false
}

// spikeGlyph is a spike drawn as a vertical stroke rising from its point.
type spikeGlyph struct{}

func (spikeGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	ls := draw.LineStyle{Color: sty.Color, Width: vg.Points(1.2)}
	c.StrokeLine2(ls, pt.X, pt.Y, pt.X, pt.Y+6*sty.Radius)
}
