package plot

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/snn"
)

// recorded simulates two LIF neurons under different currents for 100
// steps, recording spikes and membranes.
func recorded(t *testing.T) *snn.Recorder {
	t.Helper()
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{2}}).
		Add("lif", &snn.LIF{Tau: []float64{20e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}).
		Add("out", &snn.Output{}).
		Connect("in", "lif", "out")
	sim, err := snn.NewSimulator(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := snn.NewRecorder(sim, &snn.RecorderOptions{
		Spikes: []string{"lif"},
		Probes: []snn.Probe{{Node: "lif", Var: snn.VarV, Neurons: []int{0, 1}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 100; s++ {
		if err := rec.Step([]float32{1.5, 3}); err != nil {
			t.Fatal(err)
		}
	}
	return rec
}

func TestRasterAndTracesWriteEveryFormat(t *testing.T) {
	rec := recorded(t)
	raster, err := Raster(rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := Traces(rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []struct {
		fig  *Figure
		name string
	}{{raster, "raster.png"}, {raster, "raster.svg"}, {traces, "traces.png"}, {traces, "traces.svg"}} {
		path := filepath.Join(dir, f.name)
		if err := f.fig.Save(path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v, %d bytes", f.name, err, len(b))
		}
		switch filepath.Ext(f.name) {
		case ".png":
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: not a PNG: %v", f.name, err)
			}
			if r := img.Bounds(); r.Dx() < 500 || r.Dy() < 300 {
				t.Fatalf("%s: %v pixels", f.name, r)
			}
		case ".svg":
			s := strings.TrimSpace(string(b))
			if !strings.HasPrefix(s, "<?xml") && !strings.HasPrefix(s, "<svg") {
				t.Fatalf("%s does not start like an SVG: %.40q", f.name, s)
			}
		}
	}
	var buf bytes.Buffer
	if err := raster.Encode(&buf, "gif"); !errors.Is(err, ErrFormat) {
		t.Fatalf("unknown format: %v, want ErrFormat", err)
	}
	if err := raster.Save(filepath.Join(dir, "x.bmp")); !errors.Is(err, ErrFormat) {
		t.Fatalf("unknown extension: %v, want ErrFormat", err)
	}
}
