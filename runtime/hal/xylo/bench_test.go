package xylo_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/neuro-go/neuro/runtime/hal/xylo"
)

// fullChip is a configuration using the whole core: 16 inputs onto all
// 1000 hidden neurons, 64 recurrent synapses per hidden neuron (the
// fan-out limit), 8 outputs; weights from a fixed seed.
func fullChip() *xylo.Network {
	rng := rand.New(rand.NewPCG(1, 2))
	n := xylo.NewNetwork(xylo.MaxInputs, xylo.MaxHidden, xylo.MaxOutputs)
	for i := range n.WIn[0] {
		n.WIn[0][i] = int8(rng.IntN(32) - 8)
	}
	for pre := range n.Hidden {
		for range xylo.MaxFanOut {
			n.WRec[0][pre*n.Hidden+rng.IntN(n.Hidden)] = int8(rng.IntN(16) - 8)
		}
	}
	for i := range n.WOut {
		n.WOut[i] = int8(rng.IntN(64) - 32)
	}
	n.ShiftIn, n.ShiftRec, n.ShiftOut = 4, 4, 4
	for i := range n.Hidden {
		n.DashMem[i], n.DashSyn[i], n.Threshold[i] = 4, 2, 8192
	}
	for i := range n.Outputs {
		n.DashMemOut[i], n.ThresholdOut[i] = 4, 4096
	}
	return n
}

func BenchmarkCoreStep(b *testing.B) {
	for _, batch := range []int{1, 8} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			c, err := xylo.NewCore(fullChip(), batch)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			inputs := make([][]uint8, 64)
			for k := range inputs {
				inputs[k] = make([]uint8, batch*xylo.MaxInputs)
				for i := range inputs[k] {
					if rng.Float64() < 0.2 {
						inputs[k][i] = uint8(1 + rng.IntN(3))
					}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if err := c.Step(inputs[i%len(inputs)]); err != nil {
					b.Fatal(err)
				}
			}
			cnt := c.Counters()
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(cnt.Steps)/sec, "timesteps/s")
			b.ReportMetric(float64(cnt.SynapticOps)/sec, "synops/s")
			b.ReportMetric(float64(cnt.Spikes)/float64(cnt.Steps)/float64(batch), "spikes/step")
		})
	}
}

// BenchmarkInstanceStep includes the float-to-event conversion of hal.
func BenchmarkInstanceStep(b *testing.B) {
	inst, err := (&xylo.Device{}).Load(context.Background(), haltestProgram(6, 3), 1)
	if err != nil {
		b.Fatal(err)
	}
	// The variadic argument is built once: a call through the interface
	// would otherwise allocate its one-element slice on every call.
	args := [][]float32{{1, 0, 2, 1, 0, 3}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := inst.Step(ctx, args...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(inst.Counters().Steps)/b.Elapsed().Seconds(), "timesteps/s")
}
