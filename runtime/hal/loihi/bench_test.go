package loihi_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal/loihi"
	"github.com/neuro-go/neuro/snn"
)

// benchProgram is Input(in) → Linear → LIF(hidden) → Linear → LIF(out),
// with weights on the 8-bit grid and the given density.
func benchProgram(in, hidden, out int, density float64) *compile.Program {
	rng := rand.New(rand.NewPCG(1, 2))
	w := func(r, c int) *snn.Tensor {
		t := snn.NewTensor(r, c)
		for i := range t.Data {
			if rng.Float64() < density {
				t.Data[i] = float32(rng.IntN(160)-60) / 256
			}
		}
		return t
	}
	lif := func() *snn.LIF {
		return &snn.LIF{Tau: []float64{20e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}
	}
	g := snn.NewGraph().Add("in", &snn.Input{Shape: []int{in}}).Add("fc1", &snn.Linear{Weight: w(hidden, in)}).
		Add("h", lif()).Add("fc2", &snn.Linear{Weight: w(out, hidden)}).Add("o", lif()).Add("out", &snn.Output{}).
		Connect("in", "fc1", "h", "fc2", "o", "out")
	return &compile.Program{Graph: g, Dt: 1e-3, Timesteps: 64}
}

func BenchmarkStep(b *testing.B) {
	for _, sz := range []struct{ in, hidden, out, batch int }{{64, 256, 10, 1}, {256, 1024, 32, 1}, {256, 1024, 32, 16}} {
		for _, density := range []float64{0.1, 1} {
			b.Run(fmt.Sprintf("in%d_h%d_b%d_d%.1f", sz.in, sz.hidden, sz.batch, density), func(b *testing.B) {
				dev, _ := loihi.New(nil)
				inst, err := dev.Load(context.Background(), benchProgram(sz.in, sz.hidden, sz.out, density), sz.batch)
				if err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(3, 4))
				x := make([]float32, sz.batch*sz.in)
				for i := range x {
					if rng.Float64() < 0.3 {
						x[i] = float32(rng.IntN(64)) / 64
					}
				}
				ctx := context.Background()
				args := [][]float32{x} // a variadic call through the interface would allocate its slice
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := inst.Step(ctx, args...); err != nil {
						b.Fatal(err)
					}
				}
				c := inst.Counters()
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(c.Steps)/sec, "timesteps/s")
				b.ReportMetric(float64(c.SynapticOps)/sec, "synops/s")
				b.ReportMetric(float64(c.Spikes)/float64(c.Steps), "spikes/step")
			})
		}
	}
}
