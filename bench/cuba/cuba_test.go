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

// The network has Brian2's size and, over a short run, a rate in the
// range its dynamics give (Brian2: about 5.8 Hz over 10 s).
func TestCUBA(t *testing.T) {
	res, err := run(0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Neurons != 4000 || res.Synapses < 300_000 || res.Synapses > 340_000 {
		t.Fatalf("network %+v", res)
	}
	if res.RateHz < 3 || res.RateHz > 10 {
		t.Fatalf("rate %.2f Hz, outside 3-10 Hz", res.RateHz)
	}
	if _, err := run(-1, 1); err == nil {
		t.Fatal("negative duration accepted")
	}
}
