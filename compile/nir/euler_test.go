package nir

import (
	"math"
	"math/rand"
	"testing"

	"github.com/neuro-go/neuro/snn"
)

// TestEulerCubaLIF checks the Euler conversion of CubaLIF against a direct
// forward-Euler integration of NIR's equations, the order Norse's NIR
// importer uses (norse/torch/utils/import_nir.py, _map_cuba_lif: synaptic
// current first, then the membrane from the new current).
func TestEulerCubaLIF(t *testing.T) {
	const dt = 1e-3
	g, err := ReadFile("testdata/cubalif.nir", &Options{Euler: true, Dt: dt})
	if err != nil {
		t.Fatal(err)
	}
	exact := g.Nodes["node"].(*snn.CubaLIF)
	ref, err := ReadFile("testdata/cubalif.nir", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := ref.Nodes["node"].(*snn.CubaLIF)
	// Large thresholds: compare the sub-threshold dynamics exactly.
	for i := range exact.VThreshold {
		exact.VThreshold[i] = 1e9
	}
	sim, err := snn.NewSimulator(g, &snn.Options{Dt: dt})
	if err != nil {
		t.Fatal(err)
	}
	n := len(p.TauSyn)
	I := make([]float64, n)
	v := append([]float64(nil), p.VLeak...)
	rng := rand.New(rand.NewSource(3))
	x := make([]float32, n)
	var got []float32
	worst := 0.0
	for step := 0; step < 200; step++ {
		for i := range x {
			x[i] = float32(rng.Intn(2))
		}
		if err := sim.Step(x); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			I[i] += dt / p.TauSyn[i] * (-I[i] + p.WIn[i]*float64(x[i]))
			v[i] += dt / p.TauMem[i] * (p.VLeak[i] - v[i] + p.R[i]*I[i])
		}
		if got, err = sim.State(got, "node", snn.VarV); err != nil {
			t.Fatal(err)
		}
		for i := range v {
			worst = math.Max(worst, math.Abs(float64(got[i])-v[i])/(1+math.Abs(v[i])))
		}
	}
	if worst > 1e-5 {
		t.Errorf("membrane differs from forward Euler by up to %g (relative)", worst)
	}
}

// TestSnnTorchConvention: snnTorch's export_to_nir writes Leaky as a LIF
// with tau = dt/(1−β), r = tau/dt, v_leak = 0 at dt = 1e-4, and its
// importer reads it back as β = 1 − dt/tau. Read with Euler at that dt,
// the recurrent fixture (built the way snnTorch exports RLeaky) gives the
// nodes snn.SnnTorchLeaky maps β to, with a reset to zero (NIR has no
// subtractive reset), and the two networks spike identically.
func TestSnnTorchConvention(t *testing.T) {
	const dt = 1e-4
	g, err := ReadFile("testdata/recurrent.nir", &Options{Euler: true, Dt: dt})
	if err != nil {
		t.Fatal(err)
	}
	mapped := g.Clone()
	for name, beta := range map[string]float64{"lif1.lif": 0.9, "lif2": 0.8} {
		lif := g.Nodes[name].(*snn.LIF)
		n := len(lif.Tau)
		want, err := snn.SnnTorchLeaky(snn.SnnTorchParams{Beta: []float64{beta}, Threshold: []float64{1},
			ResetMechanism: "zero"}, n, dt)
		if err != nil {
			t.Fatal(err)
		}
		w := want.(*snn.LIF)
		for i := 0; i < n; i++ {
			if d := math.Abs(lif.Tau[i]/w.Tau[i] - 1); d > 1e-6 {
				t.Errorf("%s tau[%d] = %v, snnTorch mapping gives %v", name, i, lif.Tau[i], w.Tau[i])
			}
			if d := math.Abs(lif.R[i]/w.R[i] - 1); d > 1e-6 {
				t.Errorf("%s r[%d] = %v, snnTorch mapping gives %v", name, i, lif.R[i], w.R[i])
			}
		}
		mapped.Nodes[name] = w
	}
	a, err := snn.NewSimulator(g, &snn.Options{Dt: dt})
	if err != nil {
		t.Fatal(err)
	}
	b, err := snn.NewSimulator(mapped, &snn.Options{Dt: dt})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(5))
	x := make([]float32, 3)
	spikes, diff := 0, 0
	for step := 0; step < 500; step++ {
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 2)
		}
		if err := a.Step(x); err != nil {
			t.Fatal(err)
		}
		if err := b.Step(x); err != nil {
			t.Fatal(err)
		}
		for i, s := range a.Output(0) {
			spikes += int(s)
			if s != b.Output(0)[i] {
				diff++
			}
		}
	}
	if spikes == 0 || diff != 0 {
		t.Errorf("%d output spikes, %d differences between the NIR graph and the snnTorch mapping", spikes, diff)
	}
	t.Logf("%d output spikes over 500 steps, identical", spikes)
}

// TestEulerRoundTrip: the writer's Euler conversion inverts the reader's.
func TestEulerRoundTrip(t *testing.T) {
	const dt = 1e-3
	for _, name := range []string{"lif", "li", "cubali", "cubalif"} {
		ref, err := ReadFile("testdata/"+name+".nir", nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := ReadFile("testdata/"+name+".nir", &Options{Euler: true, Dt: dt})
		if err != nil {
			t.Fatal(err)
		}
		want, got := paramsOf(ref.Nodes["node"]), paramsOf(toEuler(g.Nodes["node"], dt))
		for field, w := range want {
			for i := range w {
				if d := math.Abs(got[field][i]-w[i]) / (1e-12 + math.Abs(w[i])); d > 1e-9 {
					t.Errorf("%s %s[%d]: %v after the round trip, was %v", name, field, i, got[field][i], w[i])
				}
			}
		}
	}
}

func paramsOf(n snn.Node) map[string][]float64 {
	switch n := n.(type) {
	case *snn.LI:
		return map[string][]float64{"tau": n.Tau, "r": n.R, "v_leak": n.VLeak}
	case *snn.LIF:
		return map[string][]float64{"tau": n.Tau, "r": n.R, "v_leak": n.VLeak}
	case *snn.CubaLI:
		return map[string][]float64{"tau_syn": n.TauSyn, "tau_mem": n.TauMem, "r": n.R, "w_in": n.WIn}
	case *snn.CubaLIF:
		return map[string][]float64{"tau_syn": n.TauSyn, "tau_mem": n.TauMem, "r": n.R, "w_in": n.WIn}
	}
	return nil
}
