package snn

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// The propagation benchmarks: a layer of N presynaptic neurons, a fraction
// of which spike, projects densely onto 256 postsynaptic ones. The
// simulator's event-driven path adds only the columns of the neurons that
// fired; the reference is gonum's dense matrix-vector product over the same
// weights. Compare ns/op across rates to see the crossover.
const benchPost = 256

var benchSizes = []int{1000, 10000, 100000}
var benchRates = []float64{0.01, 0.05, 0.2, 0.5}

func benchWeights(pre int) *Tensor {
	rng := rand.New(rand.NewPCG(11, uint64(pre)))
	w := NewTensor(benchPost, pre)
	for i := range w.Data {
		w.Data[i] = float32(rng.NormFloat64())
	}
	return w
}

func benchSpikes(pre int, rate float64) []float32 {
	rng := rand.New(rand.NewPCG(12, uint64(pre)))
	x := make([]float32, pre)
	for i := range x {
		if rng.Float64() < rate {
			x[i] = 1
		}
	}
	return x
}

func BenchmarkPropagateEvents(b *testing.B) {
	for _, pre := range benchSizes {
		w := benchWeights(pre)
		for _, rate := range benchRates {
			b.Run(fmt.Sprintf("pre=%d/rate=%g", pre, rate), func(b *testing.B) {
				// EventFraction 1 forces the event path at every rate.
				g := NewGraph().Add("x", &Input{Shape: []int{pre}}).Add("w", &Linear{Weight: w}).Add("y", &Output{}).Connect("x", "w", "y")
				sim, err := NewSimulator(g, &Options{EventFraction: 1})
				if err != nil {
					b.Fatal(err)
				}
				x := benchSpikes(pre, rate)
				copy(sim.InputBuffer(0), x)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					sim.Step()
				}
				b.ReportMetric(float64(sim.Counters().SynapticOps)/b.Elapsed().Seconds(), "synops/s")
			})
		}
	}
}

func BenchmarkPropagateDenseGonum(b *testing.B) {
	for _, pre := range benchSizes {
		w := benchWeights(pre)
		for _, rate := range benchRates {
			b.Run(fmt.Sprintf("pre=%d/rate=%g", pre, rate), func(b *testing.B) {
				a := blas32.General{Rows: benchPost, Cols: pre, Stride: pre, Data: w.Data}
				x := blas32.Vector{N: pre, Inc: 1, Data: benchSpikes(pre, rate)}
				y := blas32.Vector{N: benchPost, Inc: 1, Data: make([]float32, benchPost)}
				active := 0
				for _, v := range x.Data {
					if v != 0 {
						active++
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					blas32.Gemv(blas.NoTrans, 1, a, x, 0, y)
				}
				b.ReportMetric(float64(active*benchPost)*float64(b.N)/b.Elapsed().Seconds(), "synops/s")
			})
		}
	}
}

// BenchmarkLIFLayer steps a layer of LIF neurons under a constant current:
// the neuron-update side of a step.
func BenchmarkLIFLayer(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			g := NewGraph().Add("x", &Input{Shape: []int{n}}).Add("lif", lifNode(n)).Add("y", &Output{}).Connect("x", "lif", "y")
			sim, err := NewSimulator(g, nil)
			if err != nil {
				b.Fatal(err)
			}
			fill(sim.InputBuffer(0), 1.2)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sim.Step()
			}
			b.ReportMetric(float64(sim.Counters().NeuronUpdates)/b.Elapsed().Seconds(), "updates/s")
			b.ReportMetric(float64(sim.Counters().Spikes)/float64(sim.Counters().Steps), "spikes/op")
		})
	}
}
