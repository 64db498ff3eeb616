package runtime

import (
	"context"
	"errors"
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
