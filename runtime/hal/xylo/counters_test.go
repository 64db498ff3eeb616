package xylo_test

import (
	"context"
	"testing"

	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/xylo"
	"github.com/neuro-go/neuro/snn"
)

// Every neuron of the chip counts as a spiking update except a readout of
// membranes, which stands for a leaky integrator that never fires.
func TestSpikingUpdates(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  snn.Node
		want int64 // per step: 4 hidden neurons and the one output
	}{
		{"spiking output", lif(16e-3), 5},
		{"membrane readout", &snn.LI{Tau: []float64{16e-3}, R: []float64{1}, VLeak: []float64{0}}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := (&xylo.Device{}).Load(context.Background(), chain(2, 4, lif(16e-3), tc.out), 3)
			if err != nil {
				t.Fatal(err)
			}
			if err := in.(hal.SlotMasker).SetActive([]bool{true, false, true}); err != nil {
				t.Fatal(err)
			}
			for range 5 {
				if err := in.Step(context.Background(), []float32{1, 2, 0, 0, 3, 1}); err != nil {
					t.Fatal(err)
				}
			}
			c := in.Counters()
			if c.NeuronUpdates != 5*5*2 || c.SpikingUpdates != 5*2*tc.want {
				t.Errorf("counters %+v after 5 steps of 2 active slots, want %d neuron and %d spiking updates", c, 5*5*2, 5*2*tc.want)
			}
		})
	}
}
