package torchfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"math"
	"testing"
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

// pk builds pickles by opcode, for tests.
type pk struct{ b []byte }

func newPK() *pk { return &pk{b: []byte{opProto, 2}} }

func (p *pk) op(ops ...byte) *pk { p.b = append(p.b, ops...); return p }

func (p *pk) str(s string) *pk {
	p.b = append(p.b, opBinUnicode)
	p.b = binary.LittleEndian.AppendUint32(p.b, uint32(len(s)))
	p.b = append(p.b, s...)
	return p
}

func (p *pk) int(v int64) *pk {
	if v >= 0 && v < 256 {
		return p.op(opBinInt1, byte(v))
	}
	if v >= math.MinInt32 && v <= math.MaxInt32 {
		p.b = append(p.b, opBinInt)
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(int32(v)))
		return p
	}
	p.b = append(p.b, opLong1, 8)
	p.b = binary.LittleEndian.AppendUint64(p.b, uint64(v))
	return p
}

func (p *pk) global(mod, name string) *pk {
	p.b = append(p.b, opGlobal)
	p.b = append(p.b, mod+"\n"+name+"\n"...)
	return p
}

func (p *pk) ints(vs ...int64) *pk {
	p.op(opMark)
	for _, v := range vs {
		p.int(v)
	}
	return p.op(opTuple)
}

// tensor pushes _rebuild_tensor_v2 of a FloatStorage with the given key and
// element count.
func (p *pk) tensor(key string, numel, offset int64, shape, strides []int64) *pk {
	p.global("torch._utils", "_rebuild_tensor_v2").op(opMark)
	p.op(opMark).str("storage").global("torch", "FloatStorage").str(key).str("cpu").int(numel).op(opTuple, opBinPersID)
	p.int(offset).ints(shape...).ints(strides...).op(opNewFalse)
	p.global("collections", "OrderedDict").op(opEmptyTuple, opReduce)
	return p.op(opTuple, opReduce)
}

func (p *pk) stop() []byte { return append(p.b, opStop) }

func f32bytes(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// stateDictZip is a one-tensor state_dict archive {"w": tensor}.
func stateDictZip(t testing.TB, numel, offset int64, shape, strides []int64, data []byte) []byte {
	pkl := newPK().op(opEmptyDict).str("w").tensor("0", numel, offset, shape, strides).op(opSetItem).stop()
	return buildZip(t, zentry{"archive/data.pkl", pkl}, zentry{"archive/data/0", data}, zentry{"archive/version", []byte("3\n")})
}
