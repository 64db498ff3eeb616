package pytorch

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"testing"
)

// The importer's tests write their own state_dicts. The writer spells the
// pickle opcodes itself rather than borrowing the reader's constants
// (internal/torchfile), so that a shared mistake cannot hide.
const (
	pkMark        = '('
	pkStop        = '.'
	pkBinInt      = 'J'
	pkBinInt1     = 'K'
	pkBinPersID   = 'Q'
	pkReduce      = 'R'
	pkBinUnicode  = 'X'
	pkGlobal      = 'c'
	pkTuple       = 't'
	pkEmptyTuple  = ')'
	pkSetItems    = 'u'
	pkProto       = 0x80
	pkNewFalse    = 0x89
	pkFloat32Size = 4
)

// zentry is one entry of a test archive.
type zentry struct {
	name string
	data []byte
}

// buildZip writes entries as torch does: uncompressed, in order.
func buildZip(t testing.TB, entries ...zentry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sdTensor is one tensor of a state_dict built by the tests.
type sdTensor struct {
	name  string
	shape []int64
	data  []float32
}

// buildStateDict writes a torch.save-format state_dict archive: an
// OrderedDict of contiguous float32 tensors, one storage each.
func buildStateDict(tb testing.TB, ts ...sdTensor) []byte {
	tb.Helper()
	p := []byte{pkProto, 2}
	str := func(s string) {
		p = append(p, pkBinUnicode)
		p = binary.LittleEndian.AppendUint32(p, uint32(len(s)))
		p = append(p, s...)
	}
	integer := func(v int64) {
		if v >= 0 && v < 256 {
			p = append(p, pkBinInt1, byte(v))
			return
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			tb.Fatalf("buildStateDict: %d does not fit BININT", v)
		}
		p = append(p, pkBinInt)
		p = binary.LittleEndian.AppendUint32(p, uint32(int32(v)))
	}
	ints := func(vs []int64) {
		p = append(p, pkMark)
		for _, v := range vs {
			integer(v)
		}
		p = append(p, pkTuple)
	}
	p = append(p, pkGlobal)
	p = append(p, "collections\nOrderedDict\n"...)
	p = append(p, pkEmptyTuple, pkReduce, pkMark)
	entries := []zentry{{name: "archive/data.pkl"}}
	for i, t := range ts {
		strides := make([]int64, len(t.shape))
		s := int64(1)
		for j := len(t.shape) - 1; j >= 0; j-- {
			strides[j] = s
			s *= t.shape[j]
		}
		key := strconv.Itoa(i)
		str(t.name)
		// _rebuild_tensor_v2(storage, 0, shape, strides, False, OrderedDict())
		p = append(p, pkGlobal)
		p = append(p, "torch._utils\n_rebuild_tensor_v2\n"...)
		p = append(p, pkMark, pkMark)
		str("storage")
		p = append(p, pkGlobal)
		p = append(p, "torch\nFloatStorage\n"...)
		str(key)
		str("cpu")
		integer(int64(len(t.data)))
		p = append(p, pkTuple, pkBinPersID)
		integer(0)
		ints(t.shape)
		ints(strides)
		p = append(p, pkNewFalse, pkGlobal)
		p = append(p, "collections\nOrderedDict\n"...)
		p = append(p, pkEmptyTuple, pkReduce, pkTuple, pkReduce)
		data := make([]byte, 0, pkFloat32Size*len(t.data))
		for _, v := range t.data {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
		}
		entries = append(entries, zentry{"archive/data/" + key, data})
	}
	entries[0].data = append(p, pkSetItems, pkStop)
	entries = append(entries, zentry{"archive/version", []byte("3\n")})
	return buildZip(tb, entries...)
}
