// Command raster simulates a small spiking network and draws what it did:
// a spike raster of its inputs and its LIF layer, and the membrane traces
// of a few LIF neurons.
//
// The network: 100 inputs firing as Bernoulli processes (20 Hz, and 60 Hz
// for the first half of them between 100 and 200 ms) drive, through random
// excitatory weights, a layer of 50 LIF neurons (tau 20 ms, threshold 1)
// that inhibit a few of each other. It runs for 300 ms at dt = 1 ms.
//
//	go run ./examples/raster -out /tmp
//
// writes raster.png, raster.svg and traces.png into the -out directory.
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/neuro-go/neuro/snn"
	"github.com/neuro-go/neuro/snn/plot"
)

const (
	nIn, nLIF = 100, 50
	dt        = 1e-3
	steps     = 300
)

func main() {
	out := flag.String("out", ".", "directory the pictures are written to")
	seed := flag.Uint64("seed", 1, "seed of the weights and the input spikes")
	flag.Parse()
	if err := run(*out, *seed); err != nil {
		log.Fatal(err)
	}
}

func network(seed uint64) *snn.Graph {
	rng := rand.New(rand.NewPCG(seed, 1))
	w := snn.NewTensor(nLIF, nIn)
	for i := range w.Data {
		w.Data[i] = float32(max(0, 0.45+0.3*rng.NormFloat64()))
	}
	// Each LIF neuron inhibits four others.
	inh := snn.NewTensor(nLIF, nLIF)
	for j := 0; j < nLIF; j++ {
		for range 4 {
			if i := rng.IntN(nLIF); i != j {
				inh.Set(-1.5, i, j)
			}
		}
	}
	return snn.NewGraph().
		Add("input", &snn.Input{Shape: []int{nIn}}).
		Add("fc", &snn.Linear{Weight: w}).
		Add("lif", &snn.LIF{
			Tau: []float64{20e-3}, R: []float64{1}, VLeak: []float64{0},
			VThreshold: []float64{1}, VReset: []float64{0}, Shape: []int{nLIF},
		}).
		Add("inhibition", &snn.Linear{Weight: inh}).
		Add("output", &snn.Output{}).
		Connect("input", "fc", "lif", "output").
		Connect("lif", "inhibition", "lif")
}

func run(dir string, seed uint64) error {
	sim, err := snn.NewSimulator(network(seed), &snn.Options{Dt: dt})
	if err != nil {
		return err
	}
	rec, err := snn.NewRecorder(sim, &snn.RecorderOptions{
		Spikes: []string{"input", "lif"},
		Probes: []snn.Probe{{Node: "lif", Var: snn.VarV, Neurons: []int{0, 1, 2, 3}}},
		Steps:  steps,
	})
	if err != nil {
		return err
	}
	enc, err := snn.NewBernoulli(&snn.BernoulliOptions{Seed: seed, Dt: dt})
	if err != nil {
		return err
	}
	rates := make([]float32, nIn) // Hz
	for t := 0; t < steps; t++ {
		for i := range rates {
			rates[i] = 20
			if i < nIn/2 && t >= 100 && t < 200 {
				rates[i] = 60
			}
		}
		if err := enc.Encode(sim.InputBuffer(0), rates); err != nil {
			return err
		}
		if err := rec.Step(); err != nil {
			return err
		}
	}
	c := sim.Counters()
	fmt.Printf("%d steps: %d input spikes, %d LIF spikes (%.1f Hz per neuron), %d synaptic operations\n",
		c.Steps, len(rec.Spikes("input")), len(rec.Spikes("lif")),
		float64(len(rec.Spikes("lif")))/nLIF/(steps*dt), c.SynapticOps)

	raster, err := plot.Raster(rec, &plot.RasterOptions{Title: "100 Bernoulli inputs → 50 LIF neurons with recurrent inhibition"})
	if err != nil {
		return err
	}
	traces, err := plot.Traces(rec, &plot.TracesOptions{Threshold: true, MarkSpikes: true})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		fig  *plot.Figure
		name string
	}{{raster, "raster.png"}, {raster, "raster.svg"}, {traces, "traces.png"}} {
		path := filepath.Join(dir, f.name)
		if err := f.fig.Save(path); err != nil {
			return err
		}
		fmt.Println("wrote", path)
	}
	return nil
}
