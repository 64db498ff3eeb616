package plot_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/neuro-go/neuro/snn"
	"github.com/neuro-go/neuro/snn/plot"
)

// A two-layer network simulated for 100 ms and its raster written to a
// PNG file. A constant current reaches twenty LIF neurons through
// weights from 1 to 2.1875, so the neurons with larger weights fire sooner
// and more often; each of five readout neurons sums four of them.
func ExampleFigure_Save() {
	const hidden, readout = 20, 5
	in := &snn.Tensor{Shape: []int{hidden, 1}, Data: make([]float32, hidden)}
	for i := range hidden {
		in.Data[i] = 1 + float32(i)/16
	}
	pool := &snn.Tensor{Shape: []int{readout, hidden}, Data: make([]float32, readout*hidden)}
	for i := range hidden {
		pool.Data[(i/4)*hidden+i] = 3
	}
	lif := func(n int) *snn.LIF {
		return &snn.LIF{Shape: []int{n}, Tau: []float64{10e-3}, R: []float64{1},
			VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}
	}
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{1}}).
		Add("w1", &snn.Linear{Weight: in}).
		Add("hidden", lif(hidden)).
		Add("w2", &snn.Linear{Weight: pool}).
		Add("readout", lif(readout)).
		Connect("in", "w1", "hidden", "w2", "readout")
	sim, err := snn.NewSimulator(g, &snn.Options{Dt: 1e-3})
	if err != nil {
		panic(err)
	}
	rec, err := snn.NewRecorder(sim, nil) // the spikes of every spiking node
	if err != nil {
		panic(err)
	}
	for range 100 {
		if err := rec.Step([]float32{1.25}); err != nil {
			panic(err)
		}
	}
	for _, node := range rec.SpikeNodes() {
		fmt.Println(node, "spikes:", len(rec.Spikes(node)))
	}

	fig, err := plot.Raster(rec, &plot.RasterOptions{Title: "Two layers, constant input"})
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "raster")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "raster.png") // .svg and .pdf work too
	if err := fig.Save(path); err != nil {
		panic(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		panic(err)
	}
	fmt.Println(filepath.Base(path), "written:", st.Size() > 0)
	// Output:
	// hidden spikes: 258
	// readout spikes: 49
	// raster.png written: true
}
