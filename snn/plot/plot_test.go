package plot_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/snn"
	"github.com/neuro-go/neuro/snn/plot"
	"gonum.org/v1/plot/vg"
)

// recorded runs a Bernoulli input into 20 LIF neurons for 100 steps,
// batch 2, recording both nodes' spikes and the v of four neurons.
func recorded(t testing.TB, opts *snn.RecorderOptions) *snn.Recorder {
	t.Helper()
	w := snn.NewTensor(20, 30)
	for i := range w.Data {
		w.Data[i] = float32(i%7) * 0.1
	}
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{30}}).
		Add("fc", &snn.Linear{Weight: w}).
		Add("lif", &snn.LIF{Tau: []float64{10e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}, Shape: []int{20}}).
		Connect("in", "fc", "lif")
	sim, err := snn.NewSimulator(g, &snn.Options{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		opts = &snn.RecorderOptions{
			Spikes: []string{"in", "lif"},
			Probes: []snn.Probe{{Node: "lif", Neurons: []int{0, 5, 10, 15}}, {Node: "fc", Var: snn.VarOut, Neurons: []int{1}}},
		}
	}
	rec, err := snn.NewRecorder(sim, opts)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := snn.NewBernoulli(&snn.BernoulliOptions{Seed: 1, Dt: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	rates := make([]float32, 30)
	for i := range rates {
		rates[i] = 100
	}
	for range 100 {
		if err := enc.Encode(sim.InputBuffer(0), rates); err != nil {
			t.Fatal(err)
		}
		if err := rec.Step(); err != nil {
			t.Fatal(err)
		}
	}
	if sim.Counters().Spikes == 0 {
		t.Fatal("the test network is silent")
	}
	return rec
}

func checkFile(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 {
		t.Fatalf("%s is empty", path)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if b := img.Bounds(); b.Dx() != 1080 || b.Dy() != 600 {
			t.Errorf("%s is %v, want 1080 × 600", path, b.Size())
		}
	case ".svg":
		if !bytes.HasPrefix(data, []byte("<?xml")) && !bytes.HasPrefix(data, []byte("<svg")) {
			t.Errorf("%s does not start as SVG: %q", path, data[:min(len(data), 40)])
		}
		if !bytes.Contains(data, []byte("</svg>")) {
			t.Errorf("%s has no closing </svg>", path)
		}
	case ".pdf":
		if !bytes.HasPrefix(data, []byte("%PDF-")) {
			t.Errorf("%s does not start as PDF: %q", path, data[:min(len(data), 40)])
		}
	}
}

func TestSaveFormats(t *testing.T) {
	rec := recorded(t, nil)
	dir := t.TempDir()
	raster, err := plot.Raster(rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := plot.Traces(rec, &plot.TracesOptions{Threshold: true, MarkSpikes: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"raster.png", "raster.svg", "raster.pdf", "RASTER.PNG"} {
		path := filepath.Join(dir, name)
		if err := raster.Save(path); err != nil {
			t.Fatal(err)
		}
		checkFile(t, path)
	}
	for _, name := range []string{"traces.png", "traces.svg"} {
		path := filepath.Join(dir, name)
		if err := traces.Save(path); err != nil {
			t.Fatal(err)
		}
		checkFile(t, path)
	}
	for _, name := range []string{"raster.gif", "raster"} {
		path := filepath.Join(dir, name)
		if err := raster.Save(path); !errors.Is(err, plot.ErrFormat) {
			t.Errorf("Save(%q): %v, want ErrFormat", name, err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("Save(%q) created a file", name)
		}
	}
	var buf bytes.Buffer
	if err := raster.Encode(&buf, "bmp"); !errors.Is(err, plot.ErrFormat) || buf.Len() != 0 {
		t.Errorf("Encode bmp: %v, %d bytes written; want ErrFormat and nothing", err, buf.Len())
	}
	if err := raster.Save(filepath.Join(dir, "no", "such", "dir.png")); err == nil || !strings.HasPrefix(err.Error(), "plot: ") {
		t.Errorf("Save into a missing directory: %v", err)
	}
}

func TestFigureSize(t *testing.T) {
	rec := recorded(t, nil)
	fig, err := plot.Raster(rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	fig.Width, fig.Height, fig.DPI = 4*vg.Inch, 3*vg.Inch, 50
	var buf bytes.Buffer
	if err := fig.Encode(&buf, "PNG"); err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != 200 || cfg.Height != 150 {
		t.Errorf("4 × 3 in at 50 dpi: %d × %d pixels, want 200 × 150", cfg.Width, cfg.Height)
	}
	for _, bad := range []plot.Figure{
		{Plot: fig.Plot, Width: -vg.Inch},
		{Plot: fig.Plot, DPI: -1},
		{Plot: fig.Plot, Width: 1000 * vg.Inch, Height: 1000 * vg.Inch},
		{},
	} {
		if err := bad.Encode(&buf, "png"); err == nil || !strings.HasPrefix(err.Error(), "plot: ") {
			t.Errorf("Encode of %+v: %v, want a plot: error", bad, err)
		}
	}
}

// countNear counts the pixels within a small distance of colour c.
func countNear(img image.Image, c color.Color) int {
	r0, g0, b0, _ := c.RGBA()
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bb, _ := img.At(x, y).RGBA()
			d := absDiff(r, r0) + absDiff(g, g0) + absDiff(bb, b0)
			if d < 3*0x1000 {
				n++
			}
		}
	}
	return n
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// TestRasterDots checks that spikes become dots in their node's colour,
// and only those of the slot asked for.
func TestRasterDots(t *testing.T) {
	var a, b []snn.SpikeEvent
	for s := int64(1); s <= 200; s++ {
		a = append(a, snn.SpikeEvent{Step: s, Slot: 0, Index: int32(s % 10)})
		b = append(b, snn.SpikeEvent{Step: s, Slot: 1, Index: int32(s % 5)})
	}
	render := func(groups []plot.Group, slot int) image.Image {
		fig, err := plot.RasterEvents(groups, 1e-3, &plot.RasterOptions{Slot: slot})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := fig.Encode(&buf, "png"); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	groups := []plot.Group{{Name: "a", Size: 10, Events: a}, {Name: "b", Events: b}}
	img := render(groups, 0)
	ca, cb := countNear(img, plot.Color(0)), countNear(img, plot.Color(1))
	// Slot 0 has 200 dots of a and none of b: b's colour is only its
	// legend entry.
	if ca < 200*3 || cb == 0 || ca < 20*cb {
		t.Errorf("slot 0: %d pixels of a's colour, %d of b's; want many of a's, few of b's", ca, cb)
	}
	img = render(groups, 1)
	if ca1, cb1 := countNear(img, plot.Color(0)), countNear(img, plot.Color(1)); cb1 < 200*3 || cb1 < 20*ca1 {
		t.Errorf("slot 1: %d pixels of a's colour, %d of b's; want few of a's, many of b's", ca1, cb1)
	}
}

func TestRasterAxes(t *testing.T) {
	rec := recorded(t, nil)
	fig, err := plot.Raster(rec, &plot.RasterOptions{Nodes: []string{"lif"}, Slot: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := fig.Plot
	if p.X.Min != 0 || p.X.Max != 100 {
		t.Errorf("time axis %v .. %v ms, want 0 .. 100", p.X.Min, p.X.Max)
	}
	if p.Y.Min != -0.5 || p.Y.Max < 19.5 {
		t.Errorf("neuron axis %v .. %v, want -0.5 .. at least 19.5", p.Y.Min, p.Y.Max)
	}
	if p.X.Label.Text != "time (ms)" || p.Y.Label.Text != "neuron" || p.Title.Text != "Spike raster" {
		t.Errorf("labels %q, %q, title %q", p.X.Label.Text, p.Y.Label.Text, p.Title.Text)
	}
	ticks := p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max)
	if len(ticks) == 0 || ticks[0].Value != 0 || ticks[0].Label != "0" {
		t.Errorf("neuron ticks %v, want a labelled 0 first", ticks)
	}
	// Two bands: the second's ticks restart at 0, shifted by the first's 30.
	fig, err = plot.Raster(rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tk := range fig.Plot.Y.Tick.Marker.Ticks(fig.Plot.Y.Min, fig.Plot.Y.Max) {
		if tk.Value == 30 && tk.Label == "0" {
			found = true
		}
	}
	if !found {
		t.Error("no tick labelled 0 at the start of the second band (30)")
	}
}

func TestTracesAxes(t *testing.T) {
	rec := recorded(t, nil)
	fig, err := plot.Traces(rec, &plot.TracesOptions{Threshold: true, Slot: 0})
	if err != nil {
		t.Fatal(err)
	}
	p := fig.Plot
	lo, hi := float32(0), float32(1) // the threshold is drawn
	for _, j := range []int{0, 5, 10, 15} {
		for _, v := range rec.Trace("lif", snn.VarV, 0, j) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if p.Y.Min > float64(lo) || p.Y.Max < float64(hi) {
		t.Errorf("value axis %v .. %v does not cover the data %v .. %v", p.Y.Min, p.Y.Max, lo, hi)
	}
	if p.X.Min != 0 || p.X.Max != 100 || p.Y.Label.Text != "membrane potential v" {
		t.Errorf("time axis %v .. %v, value label %q", p.X.Min, p.X.Max, p.Y.Label.Text)
	}
	fig, err = plot.Traces(rec, &plot.TracesOptions{Var: snn.VarOut, Title: "fc"})
	if err != nil {
		t.Fatal(err)
	}
	if fig.Plot.Title.Text != "fc" || fig.Plot.Y.Label.Text != "output" {
		t.Errorf("title %q, label %q", fig.Plot.Title.Text, fig.Plot.Y.Label.Text)
	}
}

func TestErrors(t *testing.T) {
	rec := recorded(t, nil)
	probesOnly := recorded(t, &snn.RecorderOptions{Probes: []snn.Probe{{Node: "lif"}}, Slots: []int{1}})
	sim, err := snn.NewSimulator(rec.Simulator().Graph(), nil)
	if err != nil {
		t.Fatal(err)
	}
	empty, err := snn.NewRecorder(sim, &snn.RecorderOptions{Probes: []snn.Probe{{Node: "lif"}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		f    func() (*plot.Figure, error)
	}{
		{"raster of nil", func() (*plot.Figure, error) { return plot.Raster(nil, nil) }},
		{"raster slot not recorded", func() (*plot.Figure, error) { return plot.Raster(rec, &plot.RasterOptions{Slot: 2}) }},
		{"raster unknown node", func() (*plot.Figure, error) { return plot.Raster(rec, &plot.RasterOptions{Nodes: []string{"fc"}}) }},
		{"raster empty nodes", func() (*plot.Figure, error) { return plot.Raster(rec, &plot.RasterOptions{Nodes: []string{}}) }},
		{"raster without spikes", func() (*plot.Figure, error) { return plot.Raster(probesOnly, &plot.RasterOptions{Slot: 1}) }},
		{"raster negative dot", func() (*plot.Figure, error) { return plot.Raster(rec, &plot.RasterOptions{DotRadius: -1}) }},
		{"events dt 0", func() (*plot.Figure, error) { return plot.RasterEvents([]plot.Group{{Name: "a"}}, 0, nil) }},
		{"events no groups", func() (*plot.Figure, error) { return plot.RasterEvents(nil, 1e-3, nil) }},
		{"events index outside size", func() (*plot.Figure, error) {
			return plot.RasterEvents([]plot.Group{{Name: "a", Size: 3, Events: []snn.SpikeEvent{{Step: 1, Index: 3}}}}, 1e-3, nil)
		}},
		{"events negative size", func() (*plot.Figure, error) { return plot.RasterEvents([]plot.Group{{Name: "a", Size: -1}}, 1e-3, nil) }},
		{"traces of nil", func() (*plot.Figure, error) { return plot.Traces(nil, nil) }},
		{"traces variable not probed", func() (*plot.Figure, error) { return plot.Traces(rec, &plot.TracesOptions{Var: snn.VarI}) }},
		{"traces node not probed", func() (*plot.Figure, error) { return plot.Traces(rec, &plot.TracesOptions{Nodes: []string{"in"}}) }},
		{"traces slot not recorded", func() (*plot.Figure, error) { return plot.Traces(probesOnly, nil) }},
		{"traces nothing recorded", func() (*plot.Figure, error) { return plot.Traces(empty, nil) }},
		{"traces negative MaxLines", func() (*plot.Figure, error) { return plot.Traces(rec, &plot.TracesOptions{MaxLines: -1}) }},
		{"mark spikes not recorded", func() (*plot.Figure, error) {
			return plot.Traces(probesOnly, &plot.TracesOptions{Slot: 1, MarkSpikes: true})
		}},
		{"mark spikes without threshold", func() (*plot.Figure, error) {
			return plot.Traces(rec, &plot.TracesOptions{Var: snn.VarOut, MarkSpikes: true})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fig, err := tc.f()
			if err == nil {
				t.Fatalf("no error, got %v", fig)
			}
			if !strings.HasPrefix(err.Error(), "plot: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}
