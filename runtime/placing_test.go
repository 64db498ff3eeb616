package runtime_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/models/tokenizers"
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/runtime/runtimetest"
)

// TestPlacingAModelIsDocumentedOnce: the package documentation says in
// one section which of the three calls that place a model to use, and
// each call's first sentence says what it is for beside the others.
func TestPlacingAModelIsDocumentedOnce(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/neuro-go/neuro/runtime")
	if err != nil {
		t.Fatal(err)
	}
	calls := []string{"Deploy", "Start", "CreateDeployment"}
	_, section, ok := strings.Cut(p.Doc, "# Placing a model\n")
	if !ok {
		t.Fatal(`the package documentation has no "# Placing a model" section`)
	}
	section, _, _ = strings.Cut(section, "\n# ")
	section = strings.TrimSpace(section)
	for _, name := range calls {
		if !strings.Contains(section, name) {
			t.Errorf("the section does not name %s:\n%s", name, section)
		}
	}
	if !strings.HasPrefix(section, "Deploy is the way to place a model") {
		t.Errorf("the section does not begin with the call to use:\n%s", section)
	}
	var rt *doc.Type
	for _, ty := range p.Types {
		if ty.Name == "Runtime" {
			rt = ty
		}
	}
	if rt == nil {
		t.Fatal("no type Runtime")
	}
	for _, name := range calls {
		var fn *doc.Func
		for _, m := range rt.Methods {
			if m.Name == name {
				fn = m
			}
		}
		if fn == nil {
			t.Fatalf("no method Runtime.%s", name)
		}
		first := p.Synopsis(fn.Doc)
		others := 0
		for _, other := range calls {
			if other != name && strings.Contains(first, other) {
				others++
			}
		}
		if others == 0 {
			t.Errorf("the first sentence of %s does not say what it is for beside %v: %q", name, calls, first)
		}
	}
}

// newTiny returns a runtime holding a small language model, "tiny".
func newTiny() *runtime.Runtime {
	tok, err := tokenizers.Load("neuro-bpe-1k")
	if err != nil {
		panic(err)
	}
	rt := runtime.New(nil)
	if err := rt.RegisterModel(&runtime.Model{ID: "tiny", Program: runtimetest.Program("tiny", tok.VocabSize(), 32, 1, 256), Tokenizer: tok}); err != nil {
		panic(err)
	}
	return rt
}

// Deploy, the usual way to place a model, returns once it serves.
func ExampleRuntime_Deploy() {
	rt := newTiny()
	defer rt.Close()
	d, err := rt.Deploy(context.Background(), runtime.DeploymentSpec{ID: "tiny-cpu", Model: "tiny", Device: "cpu"})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.ID, d.Status(), d.MaxBatch)
	// Output: tiny-cpu ready 8
}

// Start returns while the deployments load, side by side; Wait waits for
// each.
func ExampleRuntime_Start() {
	ctx := context.Background()
	rt := newTiny()
	defer rt.Close()
	var deps []*runtime.Deployment
	for _, id := range []string{"tiny-a", "tiny-b"} {
		d, err := rt.Start(ctx, runtime.DeploymentSpec{ID: id, Model: "tiny", Device: "cpu"})
		if err != nil {
			panic(err)
		}
		deps = append(deps, d)
	}
	for _, d := range deps {
		if err := d.Wait(ctx); err != nil {
			panic(err)
		}
		fmt.Println(d.ID, d.Status())
	}
	// Output:
	// tiny-a ready
	// tiny-b ready
}

// CreateDeployment serves a request: it waits a bounded time and reports
// the deployment as it is then.
func ExampleRuntime_CreateDeployment() {
	rt := newTiny()
	defer rt.Close()
	info, err := rt.CreateDeployment(context.Background(), runtime.DeploymentSpec{ID: "tiny-cpu", Model: "tiny", Owner: "alice"}, 10*time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println(info.ID, info.Status, info.Owner)
	// Output: tiny-cpu ready alice
}
