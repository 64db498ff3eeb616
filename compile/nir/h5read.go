package nir

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/scigolib/hdf5"
)

// h5file is an HDF5 file opened with github.com/scigolib/hdf5. That library
// opens files only by name, so Read copies its input to a temporary file,
// which is removed as soon as the library has it open.
type h5file struct {
	f        *hdf5.File
	size     int64
	maxBytes int64
}

func openH5(r io.ReaderAt, size, maxBytes int64) (h *h5file, err error) {
	if size < 0 {
		return nil, invalidf("", "", "negative size %d", size)
	}
	if size > maxBytes {
		return nil, invalidf("", "", "file of %d bytes exceeds Options.MaxBytes (%d)", size, maxBytes)
	}
	if err := scanStructure(r, size); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp("", "neuro-nir-*.h5")
	if err != nil {
		return nil, fmt.Errorf("nir: temporary file: %w", err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	if _, err := io.Copy(tmp, io.NewSectionReader(r, 0, size)); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("nir: copying input: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("nir: temporary file: %w", err)
	}
	f, err := hdf5.Open(name)
	if err != nil {
		return nil, invalidf("", "", "hdf5: %v", err)
	}
	return &h5file{f: f, size: size, maxBytes: maxBytes}, nil
}

func (h *h5file) Close() error { return h.f.Close() }

// children indexes a group's members by name.
func children(g *hdf5.Group) map[string]hdf5.Object {
	m := make(map[string]hdf5.Object, len(g.Children()))
	for _, c := range g.Children() {
		m[c.Name()] = c
	}
	return m
}

// dsInfo is what the HDF5 library tells about a dataset before reading it.
type dsInfo struct {
	class  string // "integer", "float", "string", "class_9" (variable length), ...
	size   int    // bytes per element
	dims   []int  // nil for a scalar
	layout string
}

func (d dsInfo) elements() int {
	n := 1
	for _, x := range d.dims {
		n *= x
	}
	return n
}

// info parses Dataset.Info, the library's only public account of a
// dataset's type and shape: "Dataset: float (size=4 bytes), 2D array
// [3 x 4], chunked (chunks=[3 4 4])".
func info(d *hdf5.Dataset) (dsInfo, error) {
	s, err := d.Info()
	if err != nil {
		return dsInfo{}, err
	}
	bad := func() (dsInfo, error) { return dsInfo{}, fmt.Errorf("unrecognised dataset description %q", s) }
	rest, ok := strings.CutPrefix(s, "Dataset: ")
	if !ok {
		return bad()
	}
	var di dsInfo
	di.class, rest, ok = strings.Cut(rest, " (size=")
	if !ok {
		return bad()
	}
	var sz string
	sz, rest, ok = strings.Cut(rest, " bytes), ")
	if !ok {
		return bad()
	}
	if di.size, err = strconv.Atoi(sz); err != nil || di.size <= 0 {
		return bad()
	}
	switch {
	case strings.HasPrefix(rest, "scalar, "):
		di.layout = strings.TrimPrefix(rest, "scalar, ")
		return di, nil
	case strings.HasPrefix(rest, "null, "):
		di.dims = []int{0}
		di.layout = strings.TrimPrefix(rest, "null, ")
		return di, nil
	}
	rank, rest, ok := strings.Cut(rest, "D array [")
	if !ok {
		return bad()
	}
	r, err := strconv.Atoi(rank)
	if err != nil || r < 1 || r > 32 {
		return bad()
	}
	list, rest, ok := strings.Cut(rest, "], ")
	if !ok {
		return bad()
	}
	fields := strings.Fields(strings.ReplaceAll(list, " x ", " "))
	if len(fields) != r {
		return bad()
	}
	n := uint64(1)
	for _, f := range fields {
		x, err := strconv.ParseUint(f, 10, 63)
		if err != nil {
			return bad()
		}
		if x != 0 && n > (1<<62)/x {
			return dsInfo{}, fmt.Errorf("dataset shape %v overflows", fields)
		}
		n *= x
		di.dims = append(di.dims, int(x))
	}
	di.layout = rest
	return di, nil
}

// checkSize refuses datasets whose decoded size could not come from a file
// of this size (deflate expands at most about 1032 to 1) or exceeds the
// caller's bound, before the library allocates for them.
func (h *h5file) checkSize(node, field string, di dsInfo) error {
	n := uint64(di.elements()) * uint64(di.size)
	limit := uint64(h.maxBytes)
	if byFile := uint64(h.size)*1100 + 1<<16; byFile < limit {
		limit = byFile
	}
	if n > limit {
		return invalidf(node, field, "dataset of shape %v needs %d bytes; a file of %d bytes cannot hold it (limit %d)", di.dims, n, h.size, limit)
	}
	return nil
}

// value is a decoded dataset: numbers (as float64, which holds every
// float32 and every integer NIR uses exactly) or strings.
type value struct {
	dims    []int // nil for a scalar
	nums    []float64
	strs    []string
	isFloat bool
}

func (h *h5file) read(node, field string, d *hdf5.Dataset) (v value, err error) {
	di, err := info(d)
	if err != nil {
		return value{}, invalidf(node, field, "hdf5: %v", err)
	}
	if err := h.checkSize(node, field, di); err != nil {
		return value{}, err
	}
	v.dims = di.dims
	if di.elements() == 0 {
		return v, nil
	}
	switch di.class {
	case "integer", "float":
		v.isFloat = di.class == "float"
		v.nums, err = d.Read()
		if err == nil && len(v.nums) != di.elements() {
			err = fmt.Errorf("read %d values, shape %v has %d", len(v.nums), di.dims, di.elements())
		}
	case "string":
		v.strs, err = d.ReadStrings()
	case "class_9": // variable length: h5py's strings
		var bs [][]byte
		bs, err = d.ReadVLenBytes()
		for _, b := range bs {
			v.strs = append(v.strs, strings.TrimRight(string(b), "\x00"))
		}
	default:
		return value{}, unsupportedf(node, field, "hdf5 datatype %s", di.class)
	}
	if err != nil {
		return value{}, invalidf(node, field, "hdf5: %v", err)
	}
	if v.strs != nil && len(v.strs) != di.elements() {
		return value{}, invalidf(node, field, "read %d strings, shape %v has %d", len(v.strs), di.dims, di.elements())
	}
	return v, nil
}

// guard turns a panic inside the HDF5 library into an error: the library
// may index out of range on hostile files.
func guard(err *error) {
	if r := recover(); r != nil {
		*err = &FieldError{Msg: fmt.Sprintf("hdf5 library failed on this file: %v", r), Err: ErrInvalid}
	}
}
