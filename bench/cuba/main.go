// Command cuba runs the CUBA benchmark network of Brette et al. (2007), as
// in Brian2's examples/CUBA.py: 4000 leaky integrate-and-fire neurons (3200
// excitatory, 800 inhibitory) with exponential current synapses, connection
// probability 0.02, simulated at dt = 0.1 ms. It prints one JSON line:
//
//	{"neurons","synapses","spikes","rate_hz","sim_seconds","wall_seconds"}
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

	"github.com/neuro-go/neuro/snn"
)

func main() {
	seconds := flag.Float64("seconds", 1, "simulated time in seconds")
	seed := flag.Uint64("seed", 1, "seed of the connectivity and initial state")
	flag.Parse()
	res, err := run(*seconds, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cuba:", err)
		os.Exit(1)
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
	return &result{
		Neurons:     net.Neurons,
		Synapses:    net.Synapses,
		Spikes:      c.Spikes,
		RateHz:      float64(c.Spikes) / float64(net.Neurons) / seconds,
		SimSeconds:  seconds,
		WallSeconds: wall,
	}, nil
}
