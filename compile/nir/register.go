package nir

import (
	"errors"
	"fmt"
	"io"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// init registers the format "nir" (alias "nir-hdf5") and claims, for
// compile.Import with no format name, files with the HDF5 signature at
// offset 0 (where h5py and our writer put the superblock).
func init() {
	compile.RegisterFormat("nir", importNIR, "nir-hdf5")
	compile.RegisterSniffer("nir", compile.Magic("\x89HDF\r\n\x1a\n"))
}

// importNIR is the "nir" format of compile.Import. It reads NIR's
// continuous-time parameters as they are (no Euler conversion: NIR
// defines the equations, not a step); callers who want a reference
// importer's Euler dynamics use Read with Options.Euler.
func importNIR(r io.ReaderAt, size int64, opts *compile.ImportOptions) (*snn.Graph, *compile.ImportReport, error) {
	o := opts.WithDefaults()
	g, warns, err := read(r, size, &Options{MaxBytes: o.MaxBytes})
	if err != nil {
		if errors.Is(err, ErrUnsupported) {
			err = fmt.Errorf("%w (%w)", err, compile.ErrUnsupported)
		}
		return nil, nil, err
	}
	return g, &compile.ImportReport{Format: "nir", Kind: "nir graph", Warnings: warns}, nil
}
