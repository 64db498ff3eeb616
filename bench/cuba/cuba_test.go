package main

import (
	"testing"

	"github.com/neuro-go/neuro/snn"
)

func BenchmarkCUBAStep(b *testing.B) {
	net := NewCUBA(1)
	sim, err := snn.NewSimulator(net.Graph, &snn.Options{Dt: net.Dt})
	if err != nil {
		b.Fatal(err)
	}
	if err := sim.SetState("P", snn.VarV, net.V0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := sim.Step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(sim.Counters().NeuronUpdates)/b.Elapsed().Seconds(), "updates/s")
}
