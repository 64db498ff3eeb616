package compile_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
	_ "github.com/neuro-go/neuro/compile/nir"
	_ "github.com/neuro-go/neuro/compile/onnx"
	_ "github.com/neuro-go/neuro/compile/pytorch"
)

// sniffFixtures are files of every registered format, by the format that
// should claim them.
var sniffFixtures = map[string]string{
	"pytorch/internal/torchfile/testdata/mlp_state_dict.pt": "pytorch",
	"pytorch/internal/torchfile/testdata/mlp_script.pt":     "pytorch", // TorchScript
	"testdata/digits/mlp_module.pt":                         "pytorch",
	"pytorch/testdata/snn/snntorch_leaky.pt":                "pytorch",
	"onnx/testdata/cnn_opset13_fold0.onnx":                  "onnx",
	"onnx/testdata/bad_cycle.onnx":                          "onnx", // broken inside, still ONNX
	"testdata/digits/mlp.onnx":                              "onnx",
	"nir/testdata/lif.nir":                                  "nir",
	"nir/testdata/convnet.nir":                              "nir",
	"nir/testdata/hostile_cycle.h5":                         "nir",
}

func TestSniff(t *testing.T) {
	for path, want := range sniffFixtures {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := compile.Sniff(bytes.NewReader(b), int64(len(b))); got != want || err != nil {
			t.Errorf("%s: %q, %v; want %q", path, got, err, want)
		}
	}
	for name, c := range map[string]struct {
		data string
		want string // a format, or "" for ErrUnknownFormat
		says string
	}{
		"legacy torch.save": {"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.", "pytorch", ""},
		"pickle protocol 5": {"\x80\x05\x95", "pytorch", ""},
		"pickle protocol 1": {"\x80\x01", "", "80 01"},
		"bare zip header":   {"PK\x03\x04", "pytorch", ""},
		"HDF5 signature":    {"\x89HDF\r\n\x1a\n", "nir", ""},
		"ir_version only":   {"\x08\x07", "onnx", ""},
		"ir_version 0":      {"\x08\x00\x12\x01x", "", "08 00"},
		"onnx then junk":    {"\x08\x07\x50\x01", "", "08 07 50 01"},
		"json":              {`{"nodes": []}`, "", "7b 22 6e 6f"},
		"text":              {"hello, world", "", "68 65 6c 6c"},
		"empty":             {"", "", "empty"},
	} {
		got, err := compile.Sniff(strings.NewReader(c.data), int64(len(c.data)))
		if c.want != "" {
			if got != c.want || err != nil {
				t.Errorf("%s: %q, %v; want %q", name, got, err, c.want)
			}
			continue
		}
		if !errors.Is(err, compile.ErrUnknownFormat) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %q, %v; want ErrUnknownFormat saying %q", name, got, err, c.says)
		}
	}
}

// TestImportSniffs: Import with no format name reads each format, and
// reports the one it recognised.
func TestImportSniffs(t *testing.T) {
	for _, path := range []string{"pytorch/testdata/snn/snntorch_leaky.pt", "nir/testdata/lif.nir", "testdata/digits/mlp.onnx"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		opts := &compile.ImportOptions{Conversion: compile.ConversionOptions{Timesteps: 8}}
		g, rep, err := compile.Import("", bytes.NewReader(b), int64(len(b)), opts)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if want := sniffFixtures[path]; want != "" && rep.Format != want || g == nil {
			t.Errorf("%s: format %q", path, rep.Format)
		}
	}
	// A recognised file that its importer cannot read keeps the importer's
	// error: the legacy torch.save format is PyTorch's, and unsupported.
	legacy := []byte("\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.")
	if _, _, err := compile.Import("", bytes.NewReader(legacy), int64(len(legacy)), nil); !errors.Is(err, compile.ErrUnsupported) || !strings.Contains(err.Error(), "legacy") {
		t.Errorf("legacy pickle: %v", err)
	}
	text := []byte("not a network")
	if _, _, err := compile.Import("", bytes.NewReader(text), int64(len(text)), nil); !errors.Is(err, compile.ErrUnknownFormat) || !strings.Contains(err.Error(), "registered: ") {
		t.Errorf("text: %v", err)
	}
}

// TestSniffReadError: a reader that fails is reported as such, not as an
// unknown format.
func TestSniffReadError(t *testing.T) {
	_, err := compile.Sniff(failingReader{}, 100)
	if err == nil || errors.Is(err, compile.ErrUnknownFormat) || !errors.Is(err, errDisk) {
		t.Fatalf("err = %v", err)
	}
}

var errDisk = errors.New("disk on fire")

type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errDisk }

func TestMagic(t *testing.T) {
	m := compile.Magic("a?c")
	for head, want := range map[string]bool{"abc": true, "axcd": true, "ab": false, "xbc": false, "": false} {
		if m([]byte(head)) != want {
			t.Errorf("Magic(%q)(%q) = %v", "a?c", head, !want)
		}
	}
}

func TestRegisterSnifferPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"unregistered format": func() { compile.RegisterSniffer("no-such-format", compile.Magic("x")) },
		"nil sniffer":         func() { compile.RegisterSniffer("onnx", nil) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}

// FuzzSniff: Sniff never panics, names a registered format or gives
// ErrUnknownFormat, looks at no more than SniffLen bytes, and gives the
// formats with a magic number the files that carry it.
func FuzzSniff(f *testing.F) {
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range sniffFixtures {
			if !yield(p) {
				return
			}
		}
	})
	more, _ := filepath.Glob("onnx/testdata/*.onnx")
	for _, p := range append(paths, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 2*compile.SniffLen)])
	}
	for _, s := range []string{"", "\x80\x02", "PK\x03\x04", "\x89HDF\r\n\x1a\n", "\x08\x07\x12\x07pytorch", "{}"} {
		f.Add([]byte(s))
	}
	formats := compile.Formats()
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := compile.Sniff(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, compile.ErrUnknownFormat) {
				t.Fatalf("error not wrapping ErrUnknownFormat: %v", err)
			}
		} else if !slices.Contains(formats, got) {
			t.Fatalf("sniffed %q, not a registered format", got)
		}
		if len(data) >= compile.SniffLen {
			head := data[:compile.SniffLen]
			again, err2 := compile.Sniff(bytes.NewReader(head), int64(len(head)))
			if again != got || (err == nil) != (err2 == nil) {
				t.Fatalf("Sniff of the whole file gave %q, %v; of its first SniffLen bytes %q, %v", got, err, again, err2)
			}
		}
		switch {
		case bytes.HasPrefix(data, []byte("PK\x03\x04")):
			if got != "pytorch" {
				t.Fatalf("a zip archive sniffed as %q, %v", got, err)
			}
		case bytes.HasPrefix(data, []byte("\x89HDF\r\n\x1a\n")):
			if got != "nir" {
				t.Fatalf("an HDF5 file sniffed as %q, %v", got, err)
			}
		}
	})
}

func ExampleSniff() {
	b, err := os.ReadFile("nir/testdata/lif.nir")
	if err != nil {
		panic(err)
	}
	format, err := compile.Sniff(bytes.NewReader(b), int64(len(b)))
	fmt.Println(format, err)
	_, err = compile.Sniff(strings.NewReader("hello"), 5)
	fmt.Println(errors.Is(err, compile.ErrUnknownFormat))
	// Output:
	// nir <nil>
	// true
}

func ExampleMagic() {
	// A format whose files start "NRN" and a version byte would register
	//	compile.RegisterSniffer("neuron", compile.Magic("NRN?"))
	sniff := compile.Magic("NRN?")
	fmt.Println(sniff([]byte("NRN\x02...")), sniff([]byte("NR")))
	// Output: true false
}
