package torchfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
)

func openBytes(b []byte, o *Options) (*File, error) {
	return Open(bytes.NewReader(b), int64(len(b)), o)
}

func TestBuiltArchive(t *testing.T) {
	b := stateDictZip(t, 6, 0, []int64{2, 3}, []int64{3, 1}, f32bytes(1, 2, 3, 4, 5, 6))
	f, err := openBytes(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	sd, err := f.StateDict()
	if err != nil || len(sd) != 1 || sd[0].Name != "w" {
		t.Fatalf("StateDict = %v, %v", sd, err)
	}
	got, err := sd[0].Tensor.Float32s()
	if err != nil || len(got) != 6 || got[5] != 6 {
		t.Fatalf("Float32s = %v, %v", got, err)
	}
	// The same storage read as a transposed, offset view.
	b = stateDictZip(t, 6, 1, []int64{2, 2}, []int64{1, 3}, f32bytes(1, 2, 3, 4, 5, 6))
	f, err = openBytes(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	sd, _ = f.StateDict()
	got, err = sd[0].Tensor.Float32s()
	if err != nil || !equalF32(got, []float32{2, 5, 3, 6}) {
		t.Fatalf("strided view = %v, %v", got, err)
	}
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// cdOffsets returns the positions of the central directory headers.
func cdOffsets(b []byte) []int {
	var out []int
	for i := 0; i+4 <= len(b); i++ {
		if binary.LittleEndian.Uint32(b[i:]) == 0x02014b50 {
			out = append(out, i)
		}
	}
	return out
}

func TestHostileArchives(t *testing.T) {
	good := stateDictZip(t, 6, 0, []int64{2, 3}, []int64{3, 1}, f32bytes(1, 2, 3, 4, 5, 6))
	pkl := newPK().op(opEmptyDict).stop()

	hugeSize := func(which int, size uint32) []byte {
		b := bytes.Clone(good)
		cd := cdOffsets(b)[which]
		binary.LittleEndian.PutUint32(b[cd+20:], size) // compressed
		binary.LittleEndian.PutUint32(b[cd+24:], size) // uncompressed
		return b
	}
	overlap := func() []byte {
		b := buildZip(t, zentry{"archive/data.pkl", pkl}, zentry{"archive/data/0", []byte("abcd")}, zentry{"archive/data/1", []byte("abcd")})
		cd := cdOffsets(b)
		first := binary.LittleEndian.Uint32(b[cd[1]+42:])
		binary.LittleEndian.PutUint32(b[cd[2]+42:], first) // entry 2 points at entry 1's data
		return b
	}
	manyEntries := func() []byte {
		b := bytes.Clone(good)
		eocd := len(b) - 22
		binary.LittleEndian.PutUint16(b[eocd+8:], 60000)
		binary.LittleEndian.PutUint16(b[eocd+10:], 60000)
		return b
	}

	small := &Options{Limits: Limits{MaxPickleBytes: 16}}
	cases := []struct {
		name string
		data []byte
		opts *Options
		want error
		typ  any
	}{
		{"empty", nil, nil, ErrFormat, nil},
		{"not zip", []byte("hello world, this is not a zip archive at all"), nil, ErrFormat, nil},
		{"legacy format", []byte{0x80, 0x02, 0x8a, 0x0a}, nil, ErrUnsupported, nil},
		{"declared size past end", hugeSize(1, 0xfffffff0), nil, ErrTruncated, &ZipError{}},
		{"declared pickle size past end", hugeSize(0, 1<<30), &Options{Limits: Limits{MaxPickleBytes: 1 << 20, MaxEntryBytes: 1 << 31}}, ErrTruncated, &ZipError{}},
		{"entry over MaxEntryBytes", hugeSize(1, 1<<30), &Options{Limits: Limits{MaxEntryBytes: 1 << 20}}, ErrLimit, &LimitError{}},
		{"pickle over MaxPickleBytes", good, small, ErrLimit, &LimitError{}},
		{"too many entries (limit)", good, &Options{Limits: Limits{MaxEntries: 2}}, ErrLimit, &ZipError{}},
		{"entry count beyond file", manyEntries(), &Options{Limits: Limits{MaxEntries: 100}}, ErrLimit, &LimitError{}},
		{"overlapping entries", overlap(), nil, ErrFormat, &ZipError{}},
		{"entry outside prefix", buildZip(t, zentry{"archive/data.pkl", pkl}, zentry{"other/evil", nil}), nil, ErrFormat, &ZipError{}},
		{"dot-dot entry", buildZip(t, zentry{"archive/data.pkl", pkl}, zentry{"archive/../evil", nil}), nil, ErrFormat, &ZipError{}},
		{"top-level entry", buildZip(t, zentry{"data.pkl", pkl}), nil, ErrFormat, &ZipError{}},
		{"duplicate entry", buildZip(t, zentry{"archive/data.pkl", pkl}, zentry{"archive/data.pkl", pkl}), nil, ErrFormat, &ZipError{}},
		{"no data.pkl", buildZip(t, zentry{"archive/version", []byte("3")}), nil, ErrFormat, &ZipError{}},
		{"bad byteorder", buildZip(t, zentry{"archive/data.pkl", pkl}, zentry{"archive/byteorder", []byte("middle")}), nil, ErrFormat, &ZipError{}},
		{"element count overflows int64", stateDictZip(t, 6, 0, []int64{1 << 40, 1 << 40}, []int64{0, 0}, f32bytes(1, 2, 3, 4, 5, 6)), nil, ErrLimit, &TensorError{}},
		{"elements over limit", stateDictZip(t, 6, 0, []int64{2, 3}, []int64{3, 1}, f32bytes(1, 2, 3, 4, 5, 6)), &Options{Limits: Limits{MaxTensorElements: 5}}, ErrLimit, &LimitError{}},
		{"view past storage", stateDictZip(t, 6, 0, []int64{3, 3}, []int64{3, 1}, f32bytes(1, 2, 3, 4, 5, 6)), nil, ErrFormat, &TensorError{}},
		{"offset past storage", stateDictZip(t, 6, 6, []int64{1}, []int64{1}, f32bytes(1, 2, 3, 4, 5, 6)), nil, ErrFormat, &TensorError{}},
		{"strides overflow", stateDictZip(t, 6, 0, []int64{3, 2}, []int64{1 << 62, 1 << 62}, f32bytes(1, 2, 3, 4, 5, 6)), nil, ErrFormat, &TensorError{}},
		{"negative stride", stateDictZip(t, 6, 0, []int64{2}, []int64{-1}, f32bytes(1, 2, 3, 4, 5, 6)), nil, ErrFormat, &TensorError{}},
		{"storage entry shorter than numel", stateDictZip(t, 6, 0, []int64{6}, []int64{1}, f32bytes(1, 2, 3)), nil, ErrTruncated, &TensorError{}},
		{"huge numel", stateDictZip(t, 1<<62, 0, []int64{6}, []int64{1}, f32bytes(1, 2, 3)), nil, ErrLimit, &TensorError{}},
		{"missing storage", buildZip(t, zentry{"archive/data.pkl", newPK().tensor("7", 1, 0, []int64{1}, []int64{1}).stop()}), nil, ErrFormat, &PickleError{}},
		{"bad storage key", buildZip(t, zentry{"archive/data.pkl", newPK().tensor("../0", 1, 0, []int64{1}, []int64{1}).stop()}), nil, ErrFormat, &PickleError{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := openBytes(c.data, c.opts)
			if err == nil {
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v is not %v", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "pytorch: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			switch c.typ.(type) {
			case *ZipError:
				var e *ZipError
				if !errors.As(err, &e) {
					t.Errorf("%v is not a *ZipError", err)
				}
			case *TensorError:
				var e *TensorError
				if !errors.As(err, &e) {
					t.Errorf("%v is not a *TensorError", err)
				}
			case *LimitError:
				var e *LimitError
				if !errors.As(err, &e) {
					t.Errorf("%v is not a *LimitError", err)
				}
			case *PickleError:
				var e *PickleError
				if !errors.As(err, &e) {
					t.Errorf("%v is not a *PickleError", err)
				}
			}
		})
	}
}

// Every prefix of every fixture must fail cleanly (or, for a few lengths
// where only trailing bytes are cut, succeed), never panic.
func TestTruncatedFixtures(t *testing.T) {
	for _, name := range []string{"mlp_state_dict", "cnn_module", "mlp_script", "views"} {
		data, err := os.ReadFile("testdata/" + name + ".pt")
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(data); n += 7 {
			f, err := openBytes(data[:n], nil)
			if err == nil {
				t.Fatalf("%s cut to %d of %d bytes opened: %v", name, n, len(data), f.Kind())
			}
		}
	}
}

func TestTensorAfterFileShrinks(t *testing.T) {
	// A ReaderAt whose data vanish after Open: materialising must fail with
	// an error, not return garbage or panic.
	b := stateDictZip(t, 6, 0, []int64{6}, []int64{1}, f32bytes(1, 2, 3, 4, 5, 6))
	r := &shrinking{data: bytes.Clone(b)}
	f, err := Open(r, int64(len(b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	sd, _ := f.StateDict()
	r.data = r.data[:40]
	if _, err := sd[0].Tensor.Float32s(); !errors.Is(err, ErrTruncated) {
		t.Fatalf("Float32s on shrunk file: %v", err)
	}
}

type shrinking struct{ data []byte }

func (s *shrinking) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(s.data).ReadAt(p, off)
}
