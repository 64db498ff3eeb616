package nir

import (
	"os"
	"slices"
	"testing"

	"github.com/neuro-go/neuro/compile"
)

func TestRegistered(t *testing.T) {
	if !slices.Contains(compile.Formats(), "nir") {
		t.Fatalf("format nir not registered: %v", compile.Formats())
	}
	f, err := os.Open("testdata/lif.nir")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	g, rep, err := compile.Import("nir", f, st.Size(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.NamesOfKind("LIF")) != 1 || rep.Format != "nir" {
		t.Errorf("got %v nodes, report %+v", g.Names(), rep)
	}
	if len(rep.Warnings) == 0 {
		t.Errorf("lif.nir has metadata, which should be reported as ignored")
	}
}
