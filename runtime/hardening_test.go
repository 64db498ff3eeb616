package runtime

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal/haltest"
	"github.com/neuro-go/neuro/snn"
)

// An ID that is not a safe path segment is refused before anything is
// listed or written.
func TestUnsafeDeploymentIDs(t *testing.T) {
	rt := New(&Options{DataDir: t.TempDir()})
	defer rt.Close()
	if err := rt.RegisterModel(&Model{ID: "small", Program: haltest.Program(4, 3)}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{".", "..", ".hidden", "a/b", `a\b`, "a b", string(make([]byte, MaxDeploymentID+1))} {
		_, err := rt.Deploy(context.Background(), DeploymentSpec{ID: id, Model: "small", Owner: "alice"})
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != "id" {
			t.Errorf("id %q: %v, want a ParamError naming id", id, err)
		}
	}
	if deps := rt.Deployments(); len(deps) != 0 {
		t.Errorf("listed: %v", deps)
	}
	for _, id := range []string{"a", "dep-1.2_x", "a..b"} {
		if err := CheckDeploymentID(id); err != nil {
			t.Errorf("id %q: %v", id, err)
		}
	}
}

// A stored deployment whose ID is not a safe path segment comes back
// under a fixed ID that its owner can address and delete, and its old
// file is gone.
func TestRestoreUnsafeDeploymentID(t *testing.T) {
	dir := t.TempDir()
	deps := filepath.Join(dir, "deployments")
	if err := os.MkdirAll(deps, 0o700); err != nil {
		t.Fatal(err)
	}
	unsafe := []string{".", ".."}
	for _, id := range unsafe {
		if err := os.WriteFile(filepath.Join(deps, id+".json"), []byte(`{"id":"`+id+`","model":"small","device":"cpu","max_batch_size":1,"replicas":1,"owned_by":"alice"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for start := 0; start < 2; start++ {
		rt := New(&Options{DataDir: dir})
		if err := rt.RegisterModel(&Model{ID: "small", Program: haltest.Program(4, 3)}); err != nil {
			t.Fatal(err)
		}
		if err := rt.RestoreDeployments(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, unsafeID := range unsafe {
			id := restoredID(unsafeID)
			d, err := rt.Deployment(id)
			if err != nil {
				t.Fatalf("start %d: %v", start, err)
			}
			if err := d.Wait(context.Background()); err != nil || d.Owner != "alice" {
				t.Fatalf("start %d: %v, owner %q", start, err, d.Owner)
			}
			if _, err := os.Stat(filepath.Join(deps, unsafeID+".json")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("start %d: the file of %q is still there: %v", start, unsafeID, err)
			}
			if _, err := os.Stat(filepath.Join(deps, storedName("alice", id))); err != nil {
				t.Errorf("start %d: %v", start, err)
			}
			if start == 1 {
				if err := rt.Undeploy(id, "alice"); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(filepath.Join(deps, storedName("alice", id))); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("deleted, but its file remains: %v", err)
				}
			}
		}
		if n := len(rt.Deployments()); n != 2-2*start { // the second start deletes them
			t.Errorf("start %d: %d deployments listed", start, n)
		}
		rt.Close()
	}
}

// deploySmall deploys haltest's network (4 inputs, 3 outputs) on the
// cpu simulator as "small".
func deploySmall(t *testing.T, rt *Runtime, batch int) *Deployment {
	t.Helper()
	if err := rt.RegisterModel(&Model{ID: "small", Program: haltest.Program(4, 3)}); err != nil {
		t.Fatal(err)
	}
	d, err := rt.Deploy(context.Background(), DeploymentSpec{ID: "small", Model: "small", MaxBatch: batch})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Events in descending step order sort in O(n log n) comparisons, not
// the n²/2 of an insertion sort, and within a step go by input.
func TestSortEventsIsNLogN(t *testing.T) {
	const n = 200_000
	ev := make([]SpikeEvent, n)
	for j := range ev {
		ev[j] = SpikeEvent{T: (n - 1 - j) / 2, I: j % 2}
	}
	compare := byStep
	defer func() { byStep = compare }()
	calls := 0
	byStep = func(a, b SpikeEvent) int { calls++; return compare(a, b) }
	sortEvents(ev)
	for j := range ev {
		if want := (SpikeEvent{T: j / 2, I: j % 2}); ev[j] != want {
			t.Fatalf("event %d is %v, want %v", j, ev[j], want)
		}
	}
	if limit := int(4 * n * math.Log2(n)); calls > limit {
		t.Fatalf("%d comparisons for %d events, more than %d", calls, n, limit)
	}
	t.Logf("%d descending events: %d comparisons", n, calls)
}

// A run whose caller has gone stops before preparing its samples: the
// sample after the first is not even validated, and nothing is stepped.
func TestRunStopsWhenCancelled(t *testing.T) {
	rt := New(nil)
	defer rt.Close()
	deploySmall(t, rt, 2)
	events := make([]SpikeEvent, 20_000)
	for j := range events {
		events[j] = SpikeEvent{T: len(events) - 1 - j, I: j % 4}
	}
	samples := []Sample{{Events: events, Timesteps: len(events)}, {Vector: []float32{1, 2}}} // the second is the wrong width
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := rt.Run(ctx, &RunRequest{Deployment: "small", Samples: samples})
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("got %v, %v; want context.Canceled", res, err)
	}
}

// convNetwork is a Conv2d(1, 4, 3) feeding LIF neurons over a declared
// input of 1 × h × h: a small network of a large state per slot, about
// 4 × 4 × (h-2)² floats.
func convNetwork(h int) *compile.Program {
	w := snn.NewTensor(4, 1, 3, 3)
	for i := range w.Data {
		w.Data[i] = 0.1
	}
	lif := &snn.LIF{Tau: []float64{20e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}
	g := snn.NewGraph().Add("in", &snn.Input{Shape: []int{1, h, h}}).
		Add("conv", &snn.Conv2d{Weight: w, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1, InputShape: []int{1, h, h}}).
		Add("lif", lif).Add("out", &snn.Output{}).Connect("in", "conv", "lif", "out")
	return &compile.Program{Name: "conv", Graph: g, Dt: 1e-3, Timesteps: 4}
}

// Deployments are charged the state they will hold, slots × replicas,
// before they load: against their owner's budget and all owners'
// together, refused with ErrQuota naming the limit and the figure.
func TestDeploymentMemoryBudget(t *testing.T) {
	p := convNetwork(64)
	perSlot, perReplica := stateBytes(p)
	if perSlot < 4*4*62*62*4 { // at least the conv's output, the LIF's input, state and output
		t.Fatalf("%v bytes per slot", perSlot)
	}
	if got, want := deploymentBytes(p, 256, 4), int64((256*perSlot+perReplica)*4); got != want {
		t.Fatalf("deploymentBytes %d, want %d", got, want)
	}
	one := deploymentBytes(p, 1, 1)
	rt := New(&Options{Quota: Quota{DeploymentBytes: 3 * one, ServerDeploymentBytes: 5 * one}})
	defer rt.Close()
	if err := rt.RegisterModel(&Model{ID: "conv", Program: p}); err != nil {
		t.Fatal(err)
	}
	deploy := func(id, owner string, batch, replicas int) error {
		_, err := rt.Deploy(context.Background(), DeploymentSpec{ID: id, Model: "conv", Owner: owner, MaxBatch: batch, Replicas: replicas})
		return err
	}
	for _, tc := range []struct {
		id, owner       string
		batch, replicas int
		limit           string // "" when it fits
	}{
		{"a-256", "alice", 256, 1, "Quota.DeploymentBytes"},
		{"a-4x", "alice", 1, 4, "Quota.DeploymentBytes"},
		{"a-1", "alice", 1, 1, ""},
		{"a-2", "alice", 2, 1, ""},
		{"a-more", "alice", 1, 1, "Quota.DeploymentBytes"}, // 4 slots' worth with the two above
		{"b-2", "bob", 1, 2, ""},
		{"c-1", "carol", 1, 1, "Quota.ServerDeploymentBytes"}, // 6 slots' worth in all
		{"system", "", 8, 1, ""},                              // the program's own are not charged
	} {
		err := deploy(tc.id, tc.owner, tc.batch, tc.replicas)
		switch {
		case tc.limit == "" && err != nil:
			t.Errorf("%s: %v", tc.id, err)
		case tc.limit != "" && (!errors.Is(err, ErrQuota) || !strings.Contains(err.Error(), tc.limit) || !strings.Contains(err.Error(), "per slot")):
			t.Errorf("%s: %v, want ErrQuota naming %s", tc.id, err, tc.limit)
		case tc.limit != "":
			if _, err := rt.Deployment(tc.id); err == nil {
				t.Errorf("%s: refused, yet listed", tc.id)
			}
		}
	}
	// Deleting gives the memory back.
	if err := rt.Undeploy("a-2", "alice"); err != nil {
		t.Fatal(err)
	}
	if err := deploy("a-more", "alice", 1, 1); err != nil {
		t.Error(err)
	}
}

// Deployment IDs are scoped by owner: bob creating alice's ID gets a
// deployment of his own, exactly as for a free ID, and each owner finds,
// runs and deletes only their own; both survive a restart. The
// program's IDs are everyone's.
func TestDeploymentIDsAreScopedByOwner(t *testing.T) {
	dir := t.TempDir()
	rt := New(&Options{DataDir: dir})
	if err := rt.RegisterModel(&Model{ID: "small", Program: haltest.Program(4, 3)}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Deploy(context.Background(), DeploymentSpec{ID: "system", Model: "small"}); err != nil {
		t.Fatal(err)
	}
	for _, owner := range []string{"alice", "bob"} {
		d, err := rt.Deploy(context.Background(), DeploymentSpec{ID: "x", Model: "small", Owner: owner})
		if err != nil || d.ID != "x" || d.Owner != owner {
			t.Fatalf("%s: %v", owner, err)
		}
		if _, err := rt.Deploy(context.Background(), DeploymentSpec{ID: "x", Model: "small", Owner: owner}); !errors.Is(err, ErrDuplicate) {
			t.Errorf("%s's second x: %v", owner, err)
		}
		if _, err := rt.Deploy(context.Background(), DeploymentSpec{ID: "system", Model: "small", Owner: owner}); !errors.Is(err, ErrDuplicate) {
			t.Errorf("%s taking the program's id: %v", owner, err)
		}
		if d, err := rt.DeploymentAs("x", owner); err != nil || d.Owner != owner {
			t.Errorf("%s finds %v, %v", owner, d, err)
		}
		if d, err := rt.DeploymentAs("system", owner); err != nil || d.Owner != "" {
			t.Errorf("%s finds %v, %v", owner, d, err)
		}
		res, err := rt.Run(context.Background(), &RunRequest{Deployment: "x", Principal: owner, Samples: []Sample{{Vector: []float32{1, 0, 0, 0}}}})
		if err != nil || res.Deployment != "x" {
			t.Errorf("%s's run: %v", owner, err)
		}
	}
	if _, err := rt.DeploymentAs("x", "carol"); !errors.Is(err, ErrDeploymentNotFound) {
		t.Errorf("carol finds %v", err)
	}
	rt.Close()

	rt = New(&Options{DataDir: dir})
	defer rt.Close()
	if err := rt.RegisterModel(&Model{ID: "small", Program: haltest.Program(4, 3)}); err != nil {
		t.Fatal(err)
	}
	if err := rt.RestoreDeployments(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rt.Deployments()); n != 2 {
		t.Fatalf("%d deployments restored", n)
	}
	if err := rt.Undeploy("x", "carol"); !errors.Is(err, ErrDeploymentNotFound) {
		t.Errorf("carol deleting x: %v", err)
	}
	if err := rt.Undeploy("x", "alice"); err != nil {
		t.Fatal(err)
	}
	if d, err := rt.DeploymentAs("x", "bob"); err != nil || d.Owner != "bob" {
		t.Errorf("bob's x after alice's is deleted: %v, %v", d, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "deployments", "*.json"))
	if len(files) != 1 || filepath.Base(files[0]) != storedName("bob", "x") {
		t.Errorf("stored: %v", files)
	}
}

// An entry stored as <id>.json is restored and moved to its owner's
// name.
func TestRestoreMovesEntryToOwnersName(t *testing.T) {
	dir := t.TempDir()
	deps := filepath.Join(dir, "deployments")
	if err := os.MkdirAll(deps, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deps, "x.json"), []byte(`{"id":"x","model":"small","device":"cpu","max_batch_size":1,"replicas":1,"owned_by":"alice"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rt := New(&Options{DataDir: dir})
	defer rt.Close()
	if err := rt.RegisterModel(&Model{ID: "small", Program: haltest.Program(4, 3)}); err != nil {
		t.Fatal(err)
	}
	if err := rt.RestoreDeployments(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d, err := rt.DeploymentAs("x", "alice"); err != nil || d.Owner != "alice" {
		t.Fatalf("%v, %v", d, err)
	}
	files, _ := filepath.Glob(filepath.Join(deps, "*.json"))
	if len(files) != 1 || filepath.Base(files[0]) != storedName("alice", "x") {
		t.Errorf("stored: %v", files)
	}
}

// An event sample steps through the device's event input (its spikes as
// lists) and gives what the same spikes as a matrix give, through the
// dense input, even with its events out of order and repeated within a
// step; so does a raster of them.
func TestEventSampleMatchesMatrix(t *testing.T) {
	rt := New(nil)
	defer rt.Close()
	deploySmall(t, rt, 4)
	const steps = 200
	rng := rand.New(rand.NewPCG(9, 10))
	matrix := make([][]float32, steps)
	var events []SpikeEvent
	for st := range matrix {
		matrix[st] = make([]float32, 4)
		for i := 3; i >= 0; i-- { // descending within the step
			if rng.Float64() < 0.8 {
				matrix[st][i] = 1
				events = append(events, SpikeEvent{T: st, I: i}, SpikeEvent{T: st, I: i})
			}
		}
	}
	run := func(samples ...Sample) []RunOutput {
		t.Helper()
		res, err := rt.Run(context.Background(), &RunRequest{Deployment: "small", Samples: samples})
		if err != nil {
			t.Fatal(err)
		}
		return res.Outputs
	}
	byMatrix := run(Sample{Matrix: matrix})[0]
	raster := make([]byte, steps*4/8)
	for st, row := range matrix {
		for i, v := range row {
			if v != 0 {
				raster[(st*4+i)/8] |= 1 << ((st*4 + i) % 8)
			}
		}
	}
	byEvents := run(Sample{Events: events, Timesteps: steps}, Sample{Events: events, Timesteps: steps}, Sample{Raster: raster, Timesteps: steps})
	if slices.Equal(byMatrix.FinalState, make([]float32, 3)) {
		t.Fatal("the output membrane is zero: the test shows nothing")
	}
	for k, o := range byEvents {
		if !slices.Equal(o.SpikeCounts, byMatrix.SpikeCounts) || !slices.Equal(o.FinalState, byMatrix.FinalState) {
			t.Fatalf("sample %d as events or a raster: counts %v, final state %v; as a matrix: %v, %v", k, o.SpikeCounts, o.FinalState, byMatrix.SpikeCounts, byMatrix.FinalState)
		}
	}
}

// A raster of the wrong length, with bits set past its last step, or
// beside events is refused, naming the sample and what is wrong.
func TestRasterRefusals(t *testing.T) {
	rt := New(nil)
	defer rt.Close()
	deploySmall(t, rt, 4)
	for _, c := range []struct {
		x    Sample
		want string
	}{
		{Sample{Raster: make([]byte, 3), Timesteps: 7}, "the raster holds 3 bytes; 7 timesteps of 4 inputs take 4"},
		{Sample{Raster: []byte{0, 0, 0, 0x10}, Timesteps: 7}, "the raster sets bits past its 7 timesteps of 4 inputs"},
		{Sample{Raster: make([]byte, 4), Events: []SpikeEvent{}, Timesteps: 7}, "give events or a raster, not both"},
		{Sample{Raster: make([]byte, 4)}, "timesteps of at least 1"},
		{Sample{Raster: []byte{1}, Timesteps: math.MaxInt / 2}, "too many for a raster"},
	} {
		_, err := rt.Run(context.Background(), &RunRequest{Deployment: "small", Samples: []Sample{{Vector: make([]float32, 4)}, c.x}})
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != "inputs[1]" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want inputs[1] and %q", c.x, err, c.want)
		}
	}
	res, err := rt.Run(context.Background(), &RunRequest{Deployment: "small", Samples: []Sample{{Raster: []byte{0xff, 0xff, 0xff, 0x0f}, Timesteps: 7}}})
	if err != nil || res.Outputs[0].SpikeCounts == nil {
		t.Fatalf("a full raster of 7 steps: %v", err)
	}
}

// A run large enough to prepare its samples in parts refuses with the
// first bad sample in order, and runs each sample as it runs alone.
func TestLargeRunPreparedInParts(t *testing.T) {
	rt := New(nil)
	defer rt.Close()
	deploySmall(t, rt, 8)
	const steps = 300
	samples := make([]Sample, 24)
	for k := range samples {
		ev := make([]SpikeEvent, 0, 3*steps)
		for st := range steps {
			for i := range 3 {
				if (st+i+k)%2 == 0 {
					ev = append(ev, SpikeEvent{T: st, I: i})
				}
			}
		}
		samples[k] = Sample{Events: ev, Timesteps: steps}
	}
	if n := inputValues(samples); n < parallelPrepare/8 {
		t.Fatalf("%d values", n)
	}
	saved := samples
	samples = slices.Concat(samples, samples, samples, samples, samples, samples, samples, samples)
	if inputValues(samples) < parallelPrepare {
		t.Fatal("too few values to prepare in parts")
	}
	bad := slices.Clone(samples)
	bad[150] = Sample{Events: []SpikeEvent{{T: 0, I: 9}}, Timesteps: 1}
	bad[30] = Sample{Events: []SpikeEvent{{T: 5, I: 0}}, Timesteps: 2}
	_, err := rt.Run(context.Background(), &RunRequest{Deployment: "small", Samples: bad})
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Param != "inputs[30]" {
		t.Fatalf("got %v, want the error of inputs[30]", err)
	}
	res, err := rt.Run(context.Background(), &RunRequest{Deployment: "small", Samples: samples})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 100, len(samples) - 1} {
		alone, err := rt.Run(context.Background(), &RunRequest{Deployment: "small", Samples: []Sample{saved[k%len(saved)]}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(alone.Outputs[0].FinalState, res.Outputs[k].FinalState) {
			t.Fatalf("sample %d: %v in the batch, %v alone", k, res.Outputs[k].FinalState, alone.Outputs[0].FinalState)
		}
	}
}

// FuzzUnraster: any raster is refused or read into spikes in step and
// input order, each within the raster, one for each bit set, that set
// the same bits again.
func FuzzUnraster(f *testing.F) {
	f.Add([]byte{0x15, 0x01}, 3, 3)
	f.Add([]byte{0xff, 0xff, 0xff, 0x0f}, 7, 4)
	f.Add([]byte{0xff}, 1, 9)
	f.Add([]byte{}, 0, 5)
	f.Fuzz(func(t *testing.T, r []byte, steps, n int) {
		if steps < 1 || n < 1 || n > 1<<20 {
			return
		}
		runs, is, bad := unraster(r, steps, n)
		if bad != "" {
			return
		}
		again := make([]byte, len(r))
		start := 0
		for k, run := range runs {
			if run.t < 0 || run.t >= steps || (k > 0 && run.t <= runs[k-1].t) || run.end <= start || run.end > len(is) {
				t.Fatalf("run %d: step %d ending at %d, after %d, of %d spikes in %d steps", k, run.t, run.end, start, len(is), steps)
			}
			for j := start; j < run.end; j++ {
				if is[j] < 0 || int(is[j]) >= n || (j > start && is[j] <= is[j-1]) {
					t.Fatalf("spike %d on input %d: outside %d inputs or out of order", j, is[j], n)
				}
				bit := run.t*n + int(is[j])
				again[bit/8] |= 1 << (bit % 8)
			}
			start = run.end
		}
		if start != len(is) {
			t.Fatalf("the runs end at %d of %d spikes", start, len(is))
		}
		if !slices.Equal(again, r) {
			t.Fatalf("the spikes set %x, the raster was %x", again, r)
		}
	})
}
