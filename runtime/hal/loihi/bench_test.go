package loihi_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/models"
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

// BenchmarkLoadModels measures Device.Load of the built-in language
// models, as a server started with -device loihi pays for it: neuro-1-lite
// (folded from 557k weights to about 3.9M synapses, then converted) and
// neuro-1-standard and neuro-1-heavy, which do not fit and are refused.
// peak-MB is the largest heap in use during the Load (sampled), B/op and
// allocs/op what it allocated in all.
//
//	go test -run '^$' -bench LoadModels -benchtime 3x ./runtime/hal/loihi
func BenchmarkLoadModels(b *testing.B) {
	for _, id := range []string{models.Lite, models.Standard, models.Heavy} {
		b.Run(id, func(b *testing.B) {
			m, err := models.Load(id)
			if err != nil {
				b.Fatal(err)
			}
			dev, _ := loihi.New(nil)
			peak := newPeakHeap()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				peak.start()
				inst, err := dev.Load(context.Background(), m.Program, 1)
				peak.stop()
				if id == models.Heavy && !errors.Is(err, compile.ErrUnsupported) || id == models.Lite && err != nil {
					b.Fatalf("%s: Load: %v", id, err)
				}
				if inst != nil {
					inst.Close()
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(peak.max)/(1<<20), "peak-MB")
		})
	}
}

// peakHeap samples runtime.MemStats.HeapAlloc every millisecond while
// running, above what was in use when it started.
type peakHeap struct {
	base, max uint64
	done      chan struct{}
	wg        sync.WaitGroup
}

func newPeakHeap() *peakHeap { return &peakHeap{} }

func (p *peakHeap) start() {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	p.base = ms.HeapAlloc
	p.done = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			var ms goruntime.MemStats
			goruntime.ReadMemStats(&ms)
			if ms.HeapAlloc > p.base {
				p.max = max(p.max, ms.HeapAlloc-p.base)
			}
			select {
			case <-p.done:
				return
			case <-t.C:
			}
		}
	}()
}

func (p *peakHeap) stop() {
	close(p.done)
	p.wg.Wait()
}
