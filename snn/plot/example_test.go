package plot_test

import (
	"bytes"
	"fmt"
	"image/png"

	"github.com/neuro-go/neuro/snn"
	"github.com/neuro-go/neuro/snn/plot"
)

// exampleRecording runs ten LIF neurons on Bernoulli input for 50 ms and
// records their spikes and the v of two of them.
func exampleRecording() *snn.Recorder {
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{10}}).
		Add("lif", &snn.LIF{Tau: []float64{5e-3}, R: []float64{4}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}, Shape: []int{10}}).
		Connect("in", "lif")
	sim, err := snn.NewSimulator(g, nil)
	if err != nil {
		panic(err)
	}
	rec, err := snn.NewRecorder(sim, &snn.RecorderOptions{
		Spikes: []string{"in", "lif"},
		Probes: []snn.Probe{{Node: "lif", Neurons: []int{0, 1}}},
	})
	if err != nil {
		panic(err)
	}
	enc, err := snn.NewBernoulli(&snn.BernoulliOptions{Seed: 1})
	if err != nil {
		panic(err)
	}
	p := []float32{0.5, 0.5, 0.5, 0.5, 0.5, 0.2, 0.2, 0.2, 0.2, 0.2}
	for range 50 {
		if err := enc.Encode(sim.InputBuffer(0), p); err != nil {
			panic(err)
		}
		if err := rec.Step(); err != nil {
			panic(err)
		}
	}
	return rec
}

func ExampleRaster() {
	rec := exampleRecording()
	fig, err := plot.Raster(rec, nil)
	if err != nil {
		panic(err)
	}
	// fig.Save("raster.png") picks the format from the extension.
	var buf bytes.Buffer
	if err := fig.Encode(&buf, "png"); err != nil {
		panic(err)
	}
	cfg, err := png.DecodeConfig(&buf)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d × %d PNG, time %g to %g ms\n", cfg.Width, cfg.Height, fig.Plot.X.Min, fig.Plot.X.Max)
	// Output:
	// 1080 × 600 PNG, time 0 to 50 ms
}

func ExampleRasterEvents() {
	spikes := []snn.SpikeEvent{{Step: 3, Index: 0}, {Step: 5, Index: 2}, {Step: 9, Index: 1}}
	fig, err := plot.RasterEvents([]plot.Group{{Name: "layer", Events: spikes}}, 1e-3, nil)
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if err := fig.Encode(&buf, "svg"); err != nil {
		panic(err)
	}
	fmt.Println(bytes.HasPrefix(buf.Bytes(), []byte("<?xml")), fig.Plot.X.Max)
	// Output:
	// true 9
}

func ExampleTraces() {
	rec := exampleRecording()
	fig, err := plot.Traces(rec, &plot.TracesOptions{Threshold: true, MarkSpikes: true})
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if err := fig.Encode(&buf, "png"); err != nil {
		panic(err)
	}
	fmt.Println(fig.Plot.Title.Text, "/", fig.Plot.Y.Label.Text)
	// Output:
	// Membrane potential / membrane potential v
}
