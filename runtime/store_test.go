package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuro-go/neuro/compile"
)

func compileDigitsFile(t *testing.T, rt *Runtime) (*Network, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(digitsDir, "mlp.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	req := &CompileRequest{Format: "onnx", Data: data, Name: "digits", Owner: "alice"}
	req.Import.Conversion.Calibration = digitsInputs(t, "calibration")
	return rt.Compile(context.Background(), req)
}

// A compiled program that a start could not load again is refused, not
// stored: what is accepted comes back.
func TestCompileRefusesWhatCannotLoadAgain(t *testing.T) {
	dir := t.TempDir()
	rt := New(&Options{DataDir: dir})
	defer rt.Close()
	reloadOptions = compile.LoadOptions{MaxHeaderBytes: 1 << 10} // the digits program's header is larger
	defer func() { reloadOptions = compile.LoadOptions{} }()
	if _, err := compileDigitsFile(t, rt); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("a program Load refuses: %v, want ErrUnsupported", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "networks", "*")); len(left) != 0 {
		t.Fatalf("files stored: %v", left)
	}
	for _, m := range rt.Models() {
		if m.Network != nil {
			t.Fatalf("a network registered: %s", m.ID)
		}
	}
}

// A stored network that no longer loads is set aside at the start, its
// files kept, and does not count against its owner.
func TestUnloadableNetworkIsSetAside(t *testing.T) {
	dir := t.TempDir()
	rt := New(&Options{DataDir: dir})
	n, err := compileDigitsFile(t, rt)
	if err != nil {
		t.Fatal(err)
	}
	rt.Close()
	prog := filepath.Join(dir, "networks", n.ID+".program")
	if err := os.WriteFile(prog, []byte("not a program at all, but long enough to be read as one"), 0o600); err != nil {
		t.Fatal(err)
	}
	rt = New(&Options{DataDir: dir})
	defer rt.Close()
	if _, err := rt.Model(n.ID); err == nil {
		t.Fatal("the damaged network was registered")
	}
	for _, name := range []string{n.ID + ".json", n.ID + ".program"} {
		if _, err := os.Stat(filepath.Join(dir, "networks", "unloadable", name)); err != nil {
			t.Errorf("%s not set aside: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "networks", name)); err == nil {
			t.Errorf("%s still among the networks", name)
		}
	}
	if _, err := compileDigitsFile(t, rt); err != nil { // the quota has room again
		t.Fatal(err)
	}
}
