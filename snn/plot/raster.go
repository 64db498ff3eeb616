package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"

	"github.com/neuro-go/neuro/snn"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Group is one node's spikes for RasterEvents.
type Group struct {
	Name string
	// Size is the number of neurons, the height of the group's band.
	// Zero means the largest index among Events, plus one.
	Size   int
	Events []snn.SpikeEvent
}

// RasterOptions configure a raster. The zero value draws every recorded
// node's spikes in batch slot 0.
type RasterOptions struct {
	// Title defaults to "Spike raster".
	Title string
	// Nodes are the nodes drawn, in bands from the bottom up. Nil means
	// all, in the order they were recorded (or given).
	Nodes []string
	// Slot is the batch slot drawn.
	Slot int
	// DotRadius is the radius of a spike's dot. Default 1.2 points.
	DotRadius vg.Length
}

// Raster draws the spikes a Recorder kept. The time axis spans the
// recorded steps. It fails if the recorder kept no spikes, if a node in
// opts.Nodes was not recorded, or if opts.Slot was not.
func Raster(rec *snn.Recorder, opts *RasterOptions) (*Figure, error) {
	if rec == nil {
		return nil, errors.New("plot: Raster of a nil recorder")
	}
	var o RasterOptions
	if opts != nil {
		o = *opts
	}
	if !slices.Contains(rec.Slots(), o.Slot) {
		return nil, fmt.Errorf("plot: Raster: slot %d was not recorded (recorded: %v)", o.Slot, rec.Slots())
	}
	names := rec.SpikeNodes()
	if len(names) == 0 {
		return nil, errors.New("plot: Raster: the recorder kept no spikes")
	}
	sim := rec.Simulator()
	groups := make([]Group, len(names))
	for i, name := range names {
		groups[i] = Group{Name: name, Size: len(sim.NodeOutput(name)) / sim.Batch(), Events: rec.Spikes(name)}
	}
	var span [2]float64
	if steps := rec.Steps(); len(steps) > 0 {
		// A step's spikes are drawn at its end: the first recorded step
		// began one dt before.
		span = [2]float64{float64(max(steps[0]-1, 0)), float64(steps[len(steps)-1])}
	}
	return raster(groups, rec.Dt(), &o, span)
}

// RasterEvents draws spike events gathered by hand, one group per node,
// with a time step of dt seconds. The time axis starts at 0 and ends at
// the last spike. Events of slots other than opts.Slot are left out.
func RasterEvents(groups []Group, dt float64, opts *RasterOptions) (*Figure, error) {
	if !(dt > 0) || math.IsInf(dt, 0) {
		return nil, fmt.Errorf("plot: RasterEvents: dt is %v, must be a positive number of seconds", dt)
	}
	if len(groups) == 0 {
		return nil, errors.New("plot: RasterEvents: no groups")
	}
	var o RasterOptions
	if opts != nil {
		o = *opts
	}
	var last int64
	for _, g := range groups {
		for _, e := range g.Events {
			last = max(last, e.Step)
		}
	}
	return raster(groups, dt, &o, [2]float64{0, float64(last)})
}

// raster draws groups; span is the range of steps on the time axis.
func raster(all []Group, dt float64, o *RasterOptions, span [2]float64) (*Figure, error) {
	groups := all
	if o.Nodes != nil {
		groups = make([]Group, 0, len(o.Nodes))
		for _, name := range o.Nodes {
			i := slices.IndexFunc(all, func(g Group) bool { return g.Name == name })
			if i < 0 {
				return nil, fmt.Errorf("plot: Raster: no spikes of node %q were recorded", name)
			}
			groups = append(groups, all[i])
		}
		if len(groups) == 0 {
			return nil, errors.New("plot: Raster: RasterOptions.Nodes is empty")
		}
	}
	radius := o.DotRadius
	if radius == 0 {
		radius = vg.Points(1.2)
	}
	if !(radius > 0) {
		return nil, fmt.Errorf("plot: Raster: DotRadius %v, must be positive", radius)
	}
	title := o.Title
	if title == "" {
		title = "Spike raster"
	}
	fig := newFigure(title, "time (ms)", "neuron")
	p := fig.Plot
	ms := dt * 1e3

	offsets := make([]int, len(groups))
	total := 0
	var seps []float64 // y of the lines between bands
	for gi, g := range groups {
		size := g.Size
		if size < 0 {
			return nil, fmt.Errorf("plot: Raster: group %q has size %d", g.Name, size)
		}
		if size == 0 {
			for _, e := range g.Events {
				size = max(size, int(e.Index)+1)
			}
			size = max(size, 1)
		}
		offsets[gi] = total
		xys := make(plotter.XYs, 0, len(g.Events))
		for _, e := range g.Events {
			if int(e.Slot) != o.Slot {
				continue
			}
			if e.Index < 0 || int(e.Index) >= size {
				return nil, fmt.Errorf("plot: Raster: group %q: spike of neuron %d outside its %d neurons", g.Name, e.Index, size)
			}
			t := float64(e.Step)
			span[0], span[1] = min(span[0], t), max(span[1], t)
			xys = append(xys, plotter.XY{X: t * ms, Y: float64(total + int(e.Index))})
		}
		s := &plotter.Scatter{XYs: xys, GlyphStyle: draw.GlyphStyle{Color: Color(gi), Radius: radius, Shape: draw.CircleGlyph{}}}
		if len(xys) > 0 {
			p.Add(s)
		}
		p.Legend.Add(fmt.Sprintf("%s (%d)", g.Name, size), s)
		if gi > 0 {
			seps = append(seps, float64(total)-0.5)
		}
		total += size
	}
	lo, hi := span[0]*ms, span[1]*ms
	if hi <= lo {
		hi = lo + ms
	}
	for _, y := range seps {
		p.Add(hline(y, lo, hi, color.Gray{Y: 160}, true))
	}
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min = -0.5
	p.Y.Max = float64(total) - 0.5 + legendRoom(len(groups), float64(total))
	p.Y.Tick.Marker = bandTicks(offsets, total)
	p.Legend.Top = true
	return fig, nil
}

// hline is a horizontal line at y from x0 to x1.
func hline(y, x0, x1 float64, c color.Color, dashed bool) *plotter.Line {
	l := &plotter.Line{XYs: plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}}}
	l.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(0.8)}
	if dashed {
		l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	return l
}

// legendRoom is how far to raise the top of a y axis that spans height
// data units so that a legend of n rows, drawn at the top, clears the
// data of a figure of the default height.
func legendRoom(n int, height float64) float64 {
	const row, pad, area = 14.0, 10.0, 300.0 // points: legend row, margin, data area
	frac := min((float64(n)*row+pad)/area, 0.6)
	return height * frac / (1 - frac)
}

// bandTicks labels each band's neurons from 0, so that a neuron's index
// within its node can be read off the axis.
func bandTicks(offsets []int, total int) gplot.Ticker {
	return gplot.TickerFunc(func(lo, hi float64) []gplot.Tick {
		var ticks []gplot.Tick
		for i, off := range offsets {
			end := total
			if i+1 < len(offsets) {
				end = offsets[i+1]
			}
			n := end - off
			for _, t := range (gplot.DefaultTicks{}).Ticks(0, float64(n-1)) {
				if t.Value < 0 || t.Value > float64(n-1) || t.Value != math.Trunc(t.Value) {
					continue
				}
				if !t.IsMinor() && n > 8 && t.Value > float64(n-1)-float64(n)/8 && i+1 < len(offsets) {
					// Too close to the next band's 0 to be read.
					t.Label = ""
				}
				ticks = append(ticks, gplot.Tick{Value: float64(off) + t.Value, Label: t.Label})
			}
		}
		return ticks
	})
}

// Color is the colour of the i-th node or line: a qualitative palette
// (Tableau 10) that stays apart in print and for the common kinds of
// colour blindness.
func Color(i int) color.Color {
	palette := [...]color.RGBA{
		{31, 119, 180, 255}, {214, 39, 40, 255}, {44, 160, 44, 255}, {255, 127, 14, 255},
		{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255},
		{188, 189, 34, 255}, {23, 190, 207, 255},
	}
	i %= len(palette)
	if i < 0 {
		i += len(palette)
	}
	return palette[i]
}
