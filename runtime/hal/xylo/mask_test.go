package xylo_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/xylo"
	"github.com/neuro-go/neuro/snn"
)

// TestIdleSlotsCostNothing steps a batch of two in which slot 1 is idle
// for a while, with values on its input that the chip cannot take and
// that must not be read, beside two instances that step each slot's
// inputs alone: the outputs agree at every step, the idle slot resumes
// where it stopped, and the batch's counters are the two instances' sums.
func TestIdleSlotsCostNothing(t *testing.T) {
	ctx := context.Background()
	d, err := xylo.New(&xylo.Config{InputQuantum: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	p := haltestProgram(6, 3)
	load := func(batch int) *xylo.Instance {
		in, err := d.Load(ctx, p, batch)
		if err != nil {
			t.Fatal(err)
		}
		return in.(*xylo.Instance)
	}
	batched, alone := load(2), []*xylo.Instance{load(1), load(1)}
	rng := rand.New(rand.NewPCG(7, 1))
	x := make([]float32, 2*6)
	for step := 0; step < 60; step++ {
		idle := step >= 15 && step < 40
		on := []bool{true, !idle}
		if err := batched.SetActive(on); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			x[i] = float32(rng.IntN(12)) / 4
			if idle && i >= 6 {
				x[i] = -1
			}
		}
		before := slices.Clone(batched.Output(0)[3:])
		if err := batched.Step(ctx, x); err != nil {
			t.Fatal(err)
		}
		for slot, a := range alone {
			if !on[slot] {
				if got := batched.Output(0)[3:]; !slices.Equal(got, before) {
					t.Fatalf("step %d: idle slot's output moved from %v to %v", step, before, got)
				}
				continue
			}
			if err := a.Step(ctx, x[slot*6:(slot+1)*6]); err != nil {
				t.Fatal(err)
			}
			if got, want := batched.Output(0)[slot*3:(slot+1)*3], a.Output(0); !slices.Equal(got, want) {
				t.Fatalf("step %d slot %d: batched %v, alone %v", step, slot, got, want)
			}
		}
	}
	got, sum := batched.Counters(), alone[0].Counters().Add(alone[1].Counters())
	got.Steps, sum.Steps = 0, 0
	if got != sum || got.Spikes == 0 || got.SpikingUpdates == 0 {
		t.Errorf("batch counters %+v, the slots' alone %+v", got, sum)
	}
	if err := batched.SetActive([]bool{true}); !errors.Is(err, snn.ErrInputSize) {
		t.Errorf("one flag for a batch of two: %v", err)
	}
}

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
