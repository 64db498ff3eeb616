package snn_test

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/neuro-go/neuro/snn"
)

func newBernoulli(t *testing.T, o *snn.BernoulliOptions) *snn.Bernoulli {
	t.Helper()
	b, err := snn.NewBernoulli(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBernoulliSeeded(t *testing.T) {
	x := make([]float32, 200)
	for i := range x {
		x[i] = 0.5
	}
	draw := func(b *snn.Bernoulli, steps int) []float32 {
		var all []float32
		dst := make([]float32, len(x))
		for range steps {
			if err := b.Encode(dst, x); err != nil {
				t.Fatal(err)
			}
			all = append(all, dst...)
		}
		return all
	}
	a := draw(newBernoulli(t, &snn.BernoulliOptions{Seed: 7}), 5)
	b := draw(newBernoulli(t, &snn.BernoulliOptions{Seed: 7}), 5)
	c := draw(newBernoulli(t, &snn.BernoulliOptions{Seed: 8}), 5)
	if !slices.Equal(a, b) {
		t.Error("same seed gave different spikes")
	}
	if slices.Equal(a, c) {
		t.Error("seeds 7 and 8 gave the same spikes")
	}
	// Successive steps draw afresh.
	if slices.Equal(a[:len(x)], a[len(x):2*len(x)]) {
		t.Error("two steps drew the same spikes")
	}
	// Seed restarts the stream.
	r := newBernoulli(t, &snn.BernoulliOptions{Seed: 99})
	draw(r, 3)
	r.Seed(7)
	if got := draw(r, 5); !slices.Equal(got, a) {
		t.Error("Seed(7) did not restart the stream of seed 7")
	}
	// The zero options are seed 0.
	if !slices.Equal(draw(newBernoulli(t, nil), 2), draw(newBernoulli(t, &snn.BernoulliOptions{}), 2)) {
		t.Error("nil options differ from zero options")
	}
}

func TestBernoulliRates(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name string
		opts snn.BernoulliOptions
		x    float32
		want float64 // fraction of elements that fire
	}{
		{"p=0.3", snn.BernoulliOptions{Seed: 1}, 0.3, 0.3},
		{"p=0.02", snn.BernoulliOptions{Seed: 2}, 0.02, 0.02},
		{"p=0", snn.BernoulliOptions{Seed: 3}, 0, 0},
		{"p=1", snn.BernoulliOptions{Seed: 4}, 1, 1},
		{"negative clamps to 0", snn.BernoulliOptions{Seed: 5}, -2, 0},
		{"above 1 clamps to 1", snn.BernoulliOptions{Seed: 6}, 3, 1},
		{"NaN never fires", snn.BernoulliOptions{Seed: 7}, nan, 0},
		{"200 Hz at 1 ms", snn.BernoulliOptions{Seed: 8, Dt: 1e-3}, 200, 0.2},
		{"50 Hz at 0.1 ms", snn.BernoulliOptions{Seed: 9, Dt: 1e-4}, 50, 0.005},
		{"2 kHz at 1 ms clamps", snn.BernoulliOptions{Seed: 10, Dt: 1e-3}, 2000, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBernoulli(t, &tc.opts)
			const n, steps = 1000, 200
			x := make([]float32, n)
			for i := range x {
				x[i] = tc.x
			}
			dst := make([]float32, n)
			fired := 0
			for range steps {
				if err := b.Encode(dst, x); err != nil {
					t.Fatal(err)
				}
				for _, v := range dst {
					switch v {
					case 1:
						fired++
					case 0:
					default:
						t.Fatalf("value %v, want 0 or 1", v)
					}
				}
			}
			got := float64(fired) / (n * steps)
			// Five standard deviations of the binomial fraction.
			tol := 5 * math.Sqrt(tc.want*(1-tc.want)/(n*steps))
			if math.Abs(got-tc.want) > tol {
				t.Errorf("fired fraction %.5f, want %.5f ± %.5f", got, tc.want, tol)
			}
		})
	}
}

func TestBernoulliBroadcastAndAmplitude(t *testing.T) {
	b := newBernoulli(t, &snn.BernoulliOptions{Seed: 3, Amplitude: 2.5})
	const batch, size = 4, 256
	x := make([]float32, size)
	for i := range x {
		x[i] = 0.5
	}
	dst := make([]float32, batch*size)
	if err := b.Encode(dst, x); err != nil {
		t.Fatal(err)
	}
	for _, v := range dst {
		if v != 0 && v != 2.5 {
			t.Fatalf("value %v, want 0 or the amplitude 2.5", v)
		}
	}
	// Each slot draws its own spikes from the shared probabilities.
	for k := 1; k < batch; k++ {
		if slices.Equal(dst[:size], dst[k*size:(k+1)*size]) {
			t.Errorf("slot %d drew the same spikes as slot 0", k)
		}
	}
	// Per-slot probabilities: slot k fires everywhere iff k is odd.
	full := make([]float32, batch*size)
	for k := 0; k < batch; k++ {
		for i := 0; i < size; i++ {
			full[k*size+i] = float32(k % 2)
		}
	}
	if err := b.Encode(dst, full); err != nil {
		t.Fatal(err)
	}
	for i, v := range dst {
		if want := 2.5 * float32(i/size%2); v != want {
			t.Fatalf("dst[%d] = %v, want %v", i, v, want)
		}
	}
}

func TestEncodeLengthErrors(t *testing.T) {
	b := newBernoulli(t, nil)
	encoders := map[string]snn.Encoder{"Bernoulli": b, "Direct": snn.Direct{Gain: 2}}
	for name, enc := range encoders {
		for _, c := range []struct{ dst, x int }{{10, 3}, {10, 0}, {4, 8}} {
			dst := []float32{}
			for range c.dst {
				dst = append(dst, 7)
			}
			err := enc.Encode(dst, make([]float32, c.x))
			if !errors.Is(err, snn.ErrInputSize) {
				t.Errorf("%s: dst %d, x %d: error %v, want ErrInputSize", name, c.dst, c.x, err)
			}
			for _, v := range dst {
				if v != 7 {
					t.Fatalf("%s: dst changed on error", name)
				}
			}
		}
		if err := enc.Encode(nil, nil); err != nil {
			t.Errorf("%s: empty dst and x: %v", name, err)
		}
	}
}

func TestNewBernoulliErrors(t *testing.T) {
	for _, o := range []snn.BernoulliOptions{
		{Dt: -1e-3},
		{Dt: math.NaN()},
		{Dt: math.Inf(1)},
		{Amplitude: float32(math.Inf(-1))},
		{Amplitude: float32(math.NaN())},
	} {
		if _, err := snn.NewBernoulli(&o); err == nil {
			t.Errorf("NewBernoulli(%+v): no error", o)
		}
	}
}

func TestDirect(t *testing.T) {
	x := []float32{1, -2, 0.5}
	tests := []struct {
		gain float32
		dst  int
		want []float32
	}{
		{0, 3, []float32{1, -2, 0.5}},
		{1, 3, []float32{1, -2, 0.5}},
		{3, 3, []float32{3, -6, 1.5}},
		{-1, 6, []float32{-1, 2, -0.5, -1, 2, -0.5}},
		{0, 6, []float32{1, -2, 0.5, 1, -2, 0.5}},
	}
	for _, tc := range tests {
		dst := make([]float32, tc.dst)
		if err := (snn.Direct{Gain: tc.gain}).Encode(dst, x); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(dst, tc.want) {
			t.Errorf("gain %v into %d: got %v, want %v", tc.gain, tc.dst, dst, tc.want)
		}
	}
}

func TestOneHot(t *testing.T) {
	dst := []float32{9, 9, 9, 9, 9, 9, 9, 9}
	if err := (snn.OneHot{}).Encode(dst, 2, 0); err != nil {
		t.Fatal(err)
	}
	if want := []float32{0, 0, 1, 0, 1, 0, 0, 0}; !slices.Equal(dst, want) {
		t.Errorf("got %v, want %v", dst, want)
	}
	if err := (snn.OneHot{Amplitude: 0.5}).Encode(dst, 7); err != nil {
		t.Fatal(err)
	}
	if want := []float32{0, 0, 0, 0, 0, 0, 0, 0.5}; !slices.Equal(dst, want) {
		t.Errorf("got %v, want %v", dst, want)
	}

	for _, ids := range [][]int{{4, 0}, {0, -1}, {8}} {
		before := slices.Clone(dst)
		err := (snn.OneHot{}).Encode(dst, ids...)
		if err == nil {
			t.Errorf("ids %v into 8 values: no error", ids)
		}
		if !slices.Equal(dst, before) {
			t.Errorf("ids %v: dst changed on error", ids)
		}
	}
	for _, ids := range [][]int{{}, {0, 0, 0}} {
		if err := (snn.OneHot{}).Encode(dst, ids...); !errors.Is(err, snn.ErrInputSize) {
			t.Errorf("ids %v into 8 values: error %v, want ErrInputSize", ids, err)
		}
	}
}

func TestEncodeAllocatesNothing(t *testing.T) {
	b := newBernoulli(t, &snn.BernoulliOptions{Seed: 1, Dt: 1e-3})
	x := make([]float32, 100)
	for i := range x {
		x[i] = 40
	}
	dst := make([]float32, 4*len(x))
	ids := []int{1, 2, 3, 4}
	allocs := testing.AllocsPerRun(100, func() {
		_ = b.Encode(dst, x)
		_ = snn.Direct{Gain: 2}.Encode(dst, x)
		_ = snn.OneHot{}.Encode(dst, ids...)
		_ = snn.OneHot{}.Encode(dst[:100], 42)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per call, want 0", allocs)
	}
}

// TestBernoulliIntoInputBuffer feeds a simulator through its input buffer
// with no copy: the Input node's output is what was encoded.
func TestBernoulliIntoInputBuffer(t *testing.T) {
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{16}}).
		Add("out", &snn.Output{}).
		Connect("in", "out")
	sim, err := snn.NewSimulator(g, &snn.Options{Batch: 3})
	if err != nil {
		t.Fatal(err)
	}
	b := newBernoulli(t, &snn.BernoulliOptions{Seed: 5})
	ref := newBernoulli(t, &snn.BernoulliOptions{Seed: 5})
	x := make([]float32, 16)
	for i := range x {
		x[i] = float32(i) / 16
	}
	want := make([]float32, 3*16)
	for step := 0; step < 10; step++ {
		if err := b.Encode(sim.InputBuffer(0), x); err != nil {
			t.Fatal(err)
		}
		if err := sim.Step(); err != nil {
			t.Fatal(err)
		}
		_ = ref.Encode(want, x)
		if got := sim.Output(0); !slices.Equal(got, want) {
			t.Fatalf("step %d: output %v, want %v", step, got, want)
		}
	}
}

func BenchmarkBernoulli(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			enc, err := snn.NewBernoulli(&snn.BernoulliOptions{Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			x := make([]float32, n)
			for i := range x {
				x[i] = 0.1
			}
			dst := make([]float32, n)
			b.ReportAllocs()
			for range b.N {
				_ = enc.Encode(dst, x)
			}
			b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds(), "draws/s")
		})
	}
}
