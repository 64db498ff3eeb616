package nir

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuro-go/neuro/snn"
)

var writeDir = flag.String("write", "", "TestWriteFixtures: directory to write the re-exported fixtures to, for check_exports.py")

func encodeJSON(t *testing.T, g *snn.Graph) []byte {
	t.Helper()
	b, err := snn.EncodeJSON(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRoundTrip reads every fixture, writes it with our HDF5 writer, reads
// that back, and wants the same graph: snn's JSON form, weights included,
// byte for byte.
func TestRoundTrip(t *testing.T) {
	for _, path := range fixtures(t) {
		t.Run(fixtureName(path), func(t *testing.T) {
			g, err := ReadFile(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := Write(&buf, g, nil); err != nil {
				t.Fatal(err)
			}
			back, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := encodeJSON(t, g), encodeJSON(t, back); !bytes.Equal(a, b) {
				t.Errorf("round trip changed the graph:\n got %s\nwant %s", b, a)
			}
		})
	}
}

// TestWriteFixtures writes every fixture back as NIR into the -write
// directory, for testdata/check_exports.py to load with the Python nir
// package:
//
//	go test -run TestWriteFixtures -args -write /tmp/nir-exports
func TestWriteFixtures(t *testing.T) {
	if *writeDir == "" {
		t.Skip("no -write directory")
	}
	if err := os.MkdirAll(*writeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, path := range fixtures(t) {
		g, err := ReadFile(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(filepath.Join(*writeDir, filepath.Base(path)), g, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWriteExtensions(t *testing.T) {
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{2}}).
		Add("lif", &snn.LIF{Tau: []float64{0.01}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1},
			VReset: []float64{0}, Reset: snn.ResetSubtract, Refractory: []float64{0.002}}).
		Add("out", &snn.Output{}).
		Connect("in", "lif", "out")
	var buf bytes.Buffer
	err := Write(&buf, g, nil)
	var fe *FieldError
	if !errors.Is(err, ErrUnsupported) || !errors.As(err, &fe) || fe.Node != "lif" || fe.Field != "reset" {
		t.Fatalf("Write with ResetSubtract: got %v, want an ErrUnsupported FieldError on lif.reset", err)
	}
	if err := Write(&buf, g, &WriteOptions{DropExtensions: true}); err != nil {
		t.Fatal(err)
	}
	back, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
	if err != nil {
		t.Fatal(err)
	}
	lif := back.Nodes["lif"].(*snn.LIF)
	if lif.Reset != snn.ResetToValue || lif.Refractory != nil {
		t.Errorf("extensions survived DropExtensions: %+v", lif)
	}
}
