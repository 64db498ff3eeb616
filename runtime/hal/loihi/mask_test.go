package loihi_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neuro-go/neuro/runtime/hal/haltest"
	"github.com/neuro-go/neuro/runtime/hal/loihi"
	"github.com/neuro-go/neuro/snn"
)

// TestIdleSlotsCostNothing steps a batch of two in which slot 1 is idle
// for a while, with out-of-range values on its input that must not be
// read, beside two instances that step each slot's inputs alone: the
// outputs agree at every step, the idle slot resumes where it stopped,
// and the batch's counters and saturations are the two instances' sums.
func TestIdleSlotsCostNothing(t *testing.T) {
	ctx := context.Background()
	d := &loihi.Device{}
	p := haltest.Program(6, 3)
	load := func(batch int) *loihi.Instance {
		in, err := d.Load(ctx, p, batch)
		if err != nil {
			t.Fatal(err)
		}
		return in.(*loihi.Instance)
	}
	batched, alone := load(2), []*loihi.Instance{load(1), load(1)}
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
				x[i] = 1e6
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
	if s := alone[0].Saturations() + alone[1].Saturations(); batched.Saturations() != s {
		t.Errorf("batch saturations %d, the slots' alone %d", batched.Saturations(), s)
	}
	if err := batched.SetActive([]bool{true}); !errors.Is(err, snn.ErrInputSize) {
		t.Errorf("one flag for a batch of two: %v", err)
	}
}
