package compile

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/snn"
)

func randANN(rng *rand.Rand, sizes ...int) *ANN {
	a := &ANN{Nodes: []*ANNNode{{Name: "x", Op: OpInput, Shape: []int{sizes[0]}}}}
	prev := "x"
	for l := 1; l < len(sizes); l++ {
		w := snn.NewTensor(sizes[l], sizes[l-1])
		for i := range w.Data {
			w.Data[i] = float32(rng.NormFloat64() / math.Sqrt(float64(sizes[l-1])))
		}
		b := make([]float32, sizes[l])
		for i := range b {
			b[i] = float32(rng.NormFloat64() * 0.05)
		}
		name := "fc" + string(rune('0'+l))
		a.Nodes = append(a.Nodes, &ANNNode{Name: name, Op: OpDense, Inputs: []string{prev}, Weight: w, Bias: b})
		prev = name
		if l < len(sizes)-1 {
			a.Nodes = append(a.Nodes, &ANNNode{Name: name + ".relu", Op: OpReLU, Inputs: []string{prev}})
			prev = name + ".relu"
		}
	}
	return a
}

func argmax64(xs []float64) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

func argmax32(xs []float32) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

// The converted network's readout after T steps approaches T times the
// ANN's logits, so their arg-max agree on nearly every input.
func TestConvertANNMatchesANN(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := randANN(rng, 20, 40, 30, 5)
	sample := func() []float32 {
		x := make([]float32, 20)
		for i := range x {
			x[i] = float32(rng.Float64())
		}
		return x
	}
	var calib [][]float32
	for i := 0; i < 100; i++ {
		calib = append(calib, sample())
	}
	g, rep, err := ConvertANN(a, &ConversionOptions{Calibration: calib})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Layers) != 2 || rep.Layers[0].Lambda <= 0 || rep.Layers[0].Lambda > rep.Layers[0].Max {
		t.Fatalf("report %+v", rep)
	}
	sim, err := snn.NewSimulator(g, &snn.Options{Dt: ConvertedDt})
	if err != nil {
		t.Fatal(err)
	}
	const T, n = 200, 200
	agree := 0
	var worst float64
	for k := 0; k < n; k++ {
		x := sample()
		vals, err := a.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		logits := vals[a.outputName()]
		sim.ResetAll()
		for s := 0; s < T; s++ {
			sim.Step(x)
		}
		out := sim.Output(0)
		if argmax32(out) == argmax64(logits) {
			agree++
		}
		for i := range out {
			worst = math.Max(worst, math.Abs(float64(out[i])/T-logits[i]))
		}
	}
	t.Logf("arg-max agreement %d/%d, largest |readout/T − logit| %.3g", agree, n, worst)
	if agree < 0.95*n {
		t.Fatalf("converted network agrees with the ANN on %d of %d inputs", agree, n)
	}
}

func TestConvertBatchNormFoldAndErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := randANN(rng, 6, 8, 3)
	// Insert a batch norm after fc1: folding must leave the ANN's function
	// unchanged.
	bn := &ANNNode{Name: "bn", Op: OpBatchNorm, Inputs: []string{"fc1"}}
	bn.Scale, bn.Shift = BatchNormAffine(
		[]float32{1, 2, 0.5, 1, 1, 1, 3, 1}, []float32{0, 0.1, 0, 0, -0.2, 0, 0, 0},
		[]float32{0.1, 0, 0, 0.3, 0, 0, 0, 0}, []float32{1, 4, 1, 1, 0.25, 1, 1, 1}, 1e-5)
	a.Nodes = append(a.Nodes[:2], append([]*ANNNode{bn}, a.Nodes[2:]...)...)
	a.Nodes[3].Inputs = []string{"bn"}
	folded, _, err := foldBatchNorm(a)
	if err != nil {
		t.Fatal(err)
	}
	x := []float32{0.1, 0.9, 0.3, 0.5, 0.7, 0.2}
	v1, _ := a.Forward(x)
	v2, _ := folded.Forward(x)
	for i, v := range v1[a.outputName()] {
		if math.Abs(v-v2[folded.outputName()][i]) > 1e-5 {
			t.Fatalf("folding changed output %d: %v vs %v", i, v, v2[folded.outputName()][i])
		}
	}
	// A batch norm on the input cannot fold.
	bad := &ANN{Nodes: []*ANNNode{
		{Name: "x", Op: OpInput, Shape: []int{2, 2, 2}},
		{Name: "bn", Op: OpBatchNorm, Inputs: []string{"x"}, Scale: []float32{1, 1}, Shift: []float32{0, 0}},
	}}
	_, _, err = ConvertANN(bad, nil)
	var ue *UnsupportedError
	if !errors.As(err, &ue) || ue.Node != "bn" || !errors.Is(err, ErrUnsupported) {
		t.Fatalf("%v, want an UnsupportedError naming bn", err)
	}
	// An unknown operation is named.
	bad = &ANN{Nodes: []*ANNNode{{Name: "x", Op: OpInput, Shape: []int{2}}, {Name: "sm", Op: "softmax", Inputs: []string{"x"}}}}
	if _, _, err = ConvertANN(bad, nil); err == nil || !strings.Contains(err.Error(), `"sm"`) {
		t.Fatalf("%v", err)
	}
}

func TestQuantizeReportsItsError(t *testing.T) {
	g := testGraph(5)
	orig := g.Clone()
	info, err := Quantize(g, 8, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range info.Layers {
		var wq, w0 *snn.Tensor
		switch n := g.Nodes[q.Node].(type) {
		case *snn.Linear:
			wq, w0 = n.Weight, orig.Nodes[q.Node].(*snn.Linear).Weight
		case *snn.Affine:
			wq, w0 = n.Weight, orig.Nodes[q.Node].(*snn.Affine).Weight
		}
		per := len(wq.Data) / len(q.Scales)
		var maxErr float64
		for i, v := range wq.Data {
			s := float64(q.Scales[i/per])
			k := float64(v) / s
			if math.Abs(k-math.Round(k)) > 1e-3 || math.Abs(k) > 127.001 {
				t.Fatalf("%s[%d] = %v is not an 8-bit multiple of %v", q.Node, i, v, s)
			}
			maxErr = math.Max(maxErr, math.Abs(float64(v)-float64(w0.Data[i])))
		}
		if maxErr != q.MaxAbsError {
			t.Fatalf("%s: report says max error %v, the weights show %v", q.Node, q.MaxAbsError, maxErr)
		}
		if q.MaxAbsError > float64(q.Scales[0]) {
			t.Fatalf("%s: error %v above a step", q.Node, q.MaxAbsError)
		}
	}
	if _, err := Quantize(g, 1, false); err == nil {
		t.Fatal("1-bit quantisation accepted")
	}
}

func TestPartitionFitErrors(t *testing.T) {
	g := testGraph(6)
	// 16 LIF and 4 LI neurons on cores of 8: three cores.
	small := &Target{Name: "tiny", Cores: 3, NeuronsPerCore: 8, SynapsesPerCore: 1000}
	p, err := Partition(g, small)
	if err != nil {
		t.Fatal(err)
	}
	if p.CoresUsed != 3 || p.Cores[0].Neurons != 8 || p.Cores[2].Neurons != 4 {
		t.Fatalf("placement %+v", p)
	}
	small.Cores = 2
	_, err = Partition(g, small)
	var fe *FitError
	if !errors.As(err, &fe) || fe.Limit != "cores" || fe.Node != "li" && fe.Node != "lif" {
		t.Fatalf("%v, want a cores FitError", err)
	}
	_, err = Partition(g, &Target{Name: "narrow", MaxFanIn: 4})
	if !errors.As(err, &fe) || fe.Limit != "fan-in per neuron" || !errors.Is(err, ErrUnsupported) {
		t.Fatalf("%v, want a fan-in FitError", err)
	}
	_, err = Partition(g, &Target{Name: "lifonly", Kinds: []snn.Kind{snn.KindInput, snn.KindOutput, snn.KindLinear, snn.KindAffine, snn.KindLIF}})
	var ue *UnsupportedError
	if !errors.As(err, &ue) || ue.Node != "li" {
		t.Fatalf("%v, want the LI node refused", err)
	}
}

// Conversion names its own nodes apart from the network's.
func TestConvertNamesDoNotCollide(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	a := randANN(rng, 4, 6, 3)
	a.Nodes[1].Name, a.Nodes[2].Inputs[0] = "readout", "readout"
	a.Nodes[2].Name, a.Nodes[3].Inputs[0] = "output", "output"
	g, _, err := ConvertANN(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Nodes["readout"].(*snn.Affine); !ok {
		t.Fatalf("the network's layer \"readout\" was replaced by %T", g.Nodes["readout"])
	}
	if _, ok := g.Nodes["output"].(*snn.IF); !ok {
		t.Fatalf("the network's layer \"output\" was replaced by %T", g.Nodes["output"])
	}
}

// Synapse counts follow the connections: padding taps read nothing and a
// pooled value stands for its whole window.
func TestPartitionCountsRealSynapses(t *testing.T) {
	w := snn.NewTensor(1, 1, 3, 3)
	for i := range w.Data {
		w.Data[i] = 1
	}
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{1, 4, 4}}).
		Add("lif0", &snn.LIF{Tau: []float64{1}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}).
		Add("pool", &snn.SumPool2d{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}}).
		Add("conv", &snn.Conv2d{Weight: w, Stride: [2]int{1, 1}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1, InputShape: []int{1, 2, 2}}).
		Add("lif1", &snn.LIF{Tau: []float64{1}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}).
		Connect("in", "lif0", "pool", "conv", "lif1")
	p, err := Partition(g, &Target{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	// lif0: 16 neurons, one input each. lif1: 4 neurons on a 2×2 map;
	// each sees all 4 pooled cells (padding taps drop out), and each cell
	// pools 4 neurons of lif0: 16 synapses per neuron, 64 in all.
	if got := p.Cores[0].Synapses; got != 16+64 {
		t.Fatalf("%d synapses, want 80", got)
	}
}

// A small convolution on a large declared input is refused from the
// shapes, naming the limit, before calibration allocates per pixel.
func TestConvertBoundsValues(t *testing.T) {
	w := snn.NewTensor(4, 1, 3, 3)
	ann := func(h int) *ANN {
		return &ANN{Nodes: []*ANNNode{
			{Name: "x", Op: OpInput, Shape: []int{1, h, h}},
			{Name: "conv", Op: OpConv2d, Inputs: []string{"x"}, Weight: w, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1},
			{Name: "relu", Op: OpReLU, Inputs: []string{"conv"}},
		}}
	}
	if _, _, err := ConvertANN(ann(32), nil); err != nil {
		t.Fatalf("32×32: %v", err)
	}
	_, _, err := ConvertANN(ann(2048), &ConversionOptions{Calibration: [][]float32{make([]float32, 2048*2048)}})
	var ue *UnsupportedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "MaxValues") {
		t.Fatalf("2048×2048: %v, want an UnsupportedError naming MaxValues", err)
	}
	if _, _, err := ConvertANN(ann(32), &ConversionOptions{MaxValues: 1000}); err == nil {
		t.Fatal("32×32 (1,024 + 2 × 3,600 values) under a limit of 1,000")
	}
}
