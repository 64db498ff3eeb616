// Command cuba runs the CUBA benchmark network of Brette et al. (2007), as
// in Brian2's examples/CUBA.py: 4000 leaky integrate-and-fire neurons (3200
// excitatory, 800 inhibitory) with exponential current synapses, connection
// probability 0.02, simulated at dt = 0.1 ms. It prints one JSON line:
//
//	{"neurons","synapses","spikes","rate_hz","sim_seconds","wall_seconds",
//	 "per_step":{...},"limits":{...},"fraction_of_peak_flops",
//	 "fraction_of_triad_bandwidth"}
//
// per_step is the roofline's numerator, what one 0.1 ms step must touch:
// synaptic_ops (weight accumulations), weight_bytes (2 per accumulation:
// the uint16 row of the compressed columns, whose every column holds one
// weight, kept once),
// propagated_fraction (synaptic ops over the 4000×4000 all-to-all product
// a dense step would do) and flops (2 per accumulation, 3 per state
// update: a·u + b·x). limits is this machine's measured roofs on one
// thread (bench/roofline: a Go STREAM triad, and the dense kernel in L1);
// the fractions are the rates the run reached over those roofs. -roofline
// false skips the measurement.
//
// wall_seconds times the simulation only, not the build. bench/cuba/compare.sh
// runs Brian2 on the same network and prints the ratios.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/neuro-go/neuro/bench/roofline"
	"github.com/neuro-go/neuro/snn"
)

func main() {
	seconds := flag.Float64("seconds", 1, "simulated time in seconds")
	seed := flag.Uint64("seed", 1, "seed of the connectivity and initial state")
	roof := flag.Bool("roofline", true, "measure this machine's bandwidth and FLOP rate and print the fractions reached")
	flag.Parse()
	res, err := run(*seconds, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cuba:", err)
		os.Exit(1)
	}
	if *roof {
		l := roofline.Measure(1)
		res.Limits = &l
		res.FracFLOPS = res.PerStep.FLOPs * res.StepsPerS / l.PeakFLOPS
		res.FracTriad = res.PerStep.WeightBytes * res.StepsPerS / l.TriadBytesPerS
	}
	json.NewEncoder(os.Stdout).Encode(res)
}

type result struct {
	Neurons     int     `json:"neurons"`
	Synapses    int     `json:"synapses"`
	Spikes      int64   `json:"spikes"`
	RateHz      float64 `json:"rate_hz"`
	SimSeconds  float64 `json:"sim_seconds"`
	WallSeconds float64 `json:"wall_seconds"`
	StepsPerS   float64 `json:"steps_per_second"`
	Kernels     string  `json:"kernels"`
	PerStep     struct {
		SynapticOps float64 `json:"synaptic_ops"`
		WeightBytes float64 `json:"weight_bytes"`
		Propagated  float64 `json:"propagated_fraction"`
		FLOPs       float64 `json:"flops"`
	} `json:"per_step"`
	Limits    *roofline.Limits `json:"limits,omitempty"`
	FracFLOPS float64          `json:"fraction_of_peak_flops,omitempty"`
	FracTriad float64          `json:"fraction_of_triad_bandwidth,omitempty"`
}

func run(seconds float64, seed uint64) (*result, error) {
	if !(seconds > 0) {
		return nil, fmt.Errorf("-seconds must be positive, got %v", seconds)
	}
	net := NewCUBA(seed)
	sim, err := snn.NewSimulator(net.Graph, &snn.Options{Dt: net.Dt})
	if err != nil {
		return nil, err
	}
	if err := sim.SetState("P", snn.VarV, net.V0); err != nil {
		return nil, err
	}
	steps := int(seconds/net.Dt + 0.5)
	start := time.Now()
	for i := 0; i < steps; i++ {
		if err := sim.Step(); err != nil {
			return nil, err
		}
	}
	wall := time.Since(start).Seconds()
	c := sim.Counters()
	r := &result{
		Neurons:     net.Neurons,
		Synapses:    net.Synapses,
		Spikes:      c.Spikes,
		RateHz:      float64(c.Spikes) / float64(net.Neurons) / seconds,
		SimSeconds:  seconds,
		WallSeconds: wall,
		StepsPerS:   float64(steps) / wall,
		Kernels:     snn.KernelISA(),
	}
	ps := &r.PerStep
	ps.SynapticOps = float64(c.SynapticOps) / float64(steps)
	ps.WeightBytes = 2 * ps.SynapticOps
	ps.Propagated = ps.SynapticOps / float64(net.Neurons*net.Neurons)
	ps.FLOPs = 2*ps.SynapticOps + 3*float64(c.NeuronUpdates)/float64(steps)
	return r, nil
}
