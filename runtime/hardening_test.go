package runtime

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuro-go/neuro/runtime/hal/haltest"
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
			if _, err := os.Stat(filepath.Join(deps, id+".json")); err != nil {
				t.Errorf("start %d: %v", start, err)
			}
			if start == 1 {
				if err := rt.Undeploy(id, "alice"); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(filepath.Join(deps, id+".json")); !errors.Is(err, os.ErrNotExist) {
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
// the n²/2 of an insertion sort, and keep their order within a step.
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
