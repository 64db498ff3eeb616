package compile

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/neuro-go/neuro/snn"
)

// TestUnknownFormatSaysWhatToImport: a format whose importer is not
// linked is an error wrapping ErrUnknownFormat that names the package to
// import, or lists this module's importers for a name that is none of
// them.
func TestUnknownFormatSaysWhatToImport(t *testing.T) {
	const pkg = "github.com/neuro-go/neuro/compile/"
	file := []byte("PK\x03\x04 not really a zip")
	check := func(format, want string) {
		t.Helper()
		_, _, err := Import(format, bytes.NewReader(file), int64(len(file)), nil)
		if !errors.Is(err, ErrUnknownFormat) {
			t.Fatalf("Import(%q): %v, want an error wrapping ErrUnknownFormat", format, err)
		}
		if err.Error() != want {
			t.Errorf("Import(%q):\n got %s\nwant %s", format, err, want)
		}
	}
	withFormats(t)
	check("pytorch", `compile: unknown format "pytorch": no format is registered; import _ "`+pkg+`pytorch"`)
	check("TorchScript", `compile: unknown format "TorchScript": no format is registered; import _ "`+pkg+`pytorch"`)
	check("nir-hdf5", `compile: unknown format "nir-hdf5": no format is registered; import _ "`+pkg+`nir"`)
	check("", `compile: unknown format: no format is registered to recognise a file that begins 50 4b 03 04 20 6e 6f 74; import _ "`+pkg+`pytorch", "`+pkg+`onnx" or "`+pkg+`nir", or name the format`)

	withFormats(t, "test.x")
	check("onnx", `compile: unknown format "onnx" (registered: test.x); import _ "`+pkg+`onnx"`)
	check("keras", `compile: unknown format "keras" (registered: test.x); this module's importers are pytorch (also torchscript), onnx and nir (also nir-hdf5), each linked by import _ "`+pkg+`<name>"`)
}

// withFormats replaces the registry, for the rest of the test, by one that
// holds only the named formats, whose importers import nothing: the test
// binary links the importers that the package's external tests use.
func withFormats(t *testing.T, names ...string) {
	formatsMu.Lock()
	defer formatsMu.Unlock()
	f, a, s := formats, aliases, sniffers
	formats, aliases, sniffers = map[string]Importer{}, map[string]string{}, map[string]Sniffer{}
	for _, n := range names {
		formats[n] = func(io.ReaderAt, int64, *ImportOptions) (*snn.Graph, *ImportReport, error) {
			return nil, nil, errors.New("imports nothing")
		}
	}
	t.Cleanup(func() {
		formatsMu.Lock()
		defer formatsMu.Unlock()
		formats, aliases, sniffers = f, a, s
	})
}

// The importers the errors name are the ones this module registers: the
// test binary links them all, for the package's external tests.
func TestImportersAreTheRegisteredOnes(t *testing.T) {
	registered := Formats()
	for _, imp := range importers {
		if !slices.Contains(registered, imp.name) {
			t.Errorf("%s is not registered (registered: %v)", imp.name, registered)
		}
		for _, a := range imp.aliases {
			if aliases[a] != imp.name {
				t.Errorf("alias %s is of %q, not %s", a, aliases[a], imp.name)
			}
		}
	}
	if len(registered) != len(importers) {
		t.Errorf("registered %v, the errors name %d importers", registered, len(importers))
	}
}
