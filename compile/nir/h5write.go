package nir

import (
	"encoding/binary"
	"math"
)

// h5writer writes the subset of HDF5 that NIR files need, in the format of
// HDF5 1.8 and later (what h5py writes with libver="latest"): a version 2
// superblock, version 2 object headers, groups whose links live in their
// headers, contiguous datasets of float32, float64 and int64, and
// variable-length UTF-8 strings in global heap collections. It exists
// because github.com/scigolib/hdf5 cannot write scalar datasets (NIR's
// stride, groups, start_dim are scalars) and writes only to named files.
//
// Objects are appended bottom-up: data before the header that points to
// it, children before their parent, so every address is known when it is
// written; the superblock at offset 0 is filled in last.
type h5writer struct {
	buf []byte
}

const superblockSize = 48

func newH5Writer() *h5writer {
	return &h5writer{buf: make([]byte, superblockSize)}
}

var le = binary.LittleEndian

func (w *h5writer) here() uint64 { return uint64(len(w.buf)) }

func (w *h5writer) align8() {
	for len(w.buf)%8 != 0 {
		w.buf = append(w.buf, 0)
	}
}

// h5type is an encoded datatype message and its element size.
type h5type struct {
	msg  []byte
	size int
}

var (
	typeFloat32 = h5type{floatType(4, 31, 23, 8, 23, 127), 4}
	typeFloat64 = h5type{floatType(8, 63, 52, 11, 52, 1023), 8}
	typeInt64   = h5type{[]byte{0x10, 0x08, 0, 0, 8, 0, 0, 0, 0, 0, 64, 0}, 8}
	// Variable-length string (class 9, type 1), null-terminated, UTF-8,
	// whose base type is an unsigned byte; each element is a 4-byte length,
	// an 8-byte global heap collection address and a 4-byte object index.
	typeVLenString = h5type{[]byte{0x19, 0x01, 0x01, 0x00, 16, 0, 0, 0,
		0x10, 0x00, 0x00, 0x00, 1, 0, 0, 0, 0, 0, 8, 0}, 16}
)

// floatType encodes an IEEE little-endian floating-point datatype.
func floatType(size int, signLoc, expLoc, expSize, mantSize byte, bias uint32) []byte {
	b := []byte{0x11, 0x20, signLoc, 0}
	b = le.AppendUint32(b, uint32(size))
	b = le.AppendUint16(b, 0)              // bit offset
	b = le.AppendUint16(b, uint16(size*8)) // precision
	b = append(b, expLoc, expSize, 0, mantSize)
	return le.AppendUint32(b, bias)
}

type h5msg struct {
	typ   byte
	flags byte
	data  []byte
}

// header appends a version 2 object header holding msgs and returns its
// address.
func (w *h5writer) header(msgs []h5msg) uint64 {
	w.align8()
	addr := w.here()
	var body []byte
	for _, m := range msgs {
		body = append(body, m.typ)
		body = le.AppendUint16(body, uint16(len(m.data)))
		body = append(body, m.flags)
		body = append(body, m.data...)
	}
	h := []byte("OHDR")
	h = append(h, 2, 0x02) // version 2; chunk size in 4 bytes
	h = le.AppendUint32(h, uint32(len(body)))
	h = append(h, body...)
	h = le.AppendUint32(h, lookup3(h))
	w.buf = append(w.buf, h...)
	return addr
}

func dataspace(dims []int) []byte {
	if dims == nil {
		return []byte{2, 0, 0, 0} // version 2, scalar
	}
	b := []byte{2, byte(len(dims)), 0, 1}
	for _, d := range dims {
		b = le.AppendUint64(b, uint64(d))
	}
	return b
}

// dataset appends raw data (already encoded) and the header describing it.
func (w *h5writer) dataset(t h5type, dims []int, raw []byte) uint64 {
	dataAddr := undefAddr
	if len(raw) > 0 {
		w.align8()
		dataAddr = w.here()
		w.buf = append(w.buf, raw...)
	}
	layout := []byte{3, 1} // version 3, contiguous
	layout = le.AppendUint64(layout, dataAddr)
	layout = le.AppendUint64(layout, uint64(len(raw)))
	return w.header([]h5msg{
		{0x01, 0, dataspace(dims)},
		{0x03, 1, t.msg},
		{0x05, 1, []byte{3, 0x0a}}, // fill value v3: late allocation, write if set, none defined
		{0x08, 0, layout},
	})
}

func (w *h5writer) float32s(dims []int, xs []float32) uint64 {
	raw := make([]byte, 0, 4*len(xs))
	for _, x := range xs {
		raw = le.AppendUint32(raw, math.Float32bits(x))
	}
	return w.dataset(typeFloat32, dims, raw)
}

func (w *h5writer) float64s(dims []int, xs []float64) uint64 {
	raw := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		raw = le.AppendUint64(raw, math.Float64bits(x))
	}
	return w.dataset(typeFloat64, dims, raw)
}

func (w *h5writer) int64s(dims []int, xs []int) uint64 {
	raw := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		raw = le.AppendUint64(raw, uint64(int64(x)))
	}
	return w.dataset(typeInt64, dims, raw)
}

// strings appends a global heap collection holding strs and a dataset of
// variable-length strings referring to it.
func (w *h5writer) strings(dims []int, strs []string) uint64 {
	if len(strs) == 0 {
		return w.dataset(typeVLenString, dims, nil)
	}
	const objHdr = 16
	var objs []byte
	for i, s := range strs {
		objs = le.AppendUint16(objs, uint16(i+1)) // object index (0 is free space)
		objs = le.AppendUint16(objs, 1)           // reference count
		objs = le.AppendUint32(objs, 0)
		objs = le.AppendUint64(objs, uint64(len(s)))
		objs = append(objs, s...)
		for len(objs)%8 != 0 {
			objs = append(objs, 0)
		}
	}
	// The HDF5 library reads at least 4096 bytes of a collection, so the
	// collection is never smaller; the rest is one free-space object.
	size := 16 + len(objs) + objHdr
	if size < 4096 {
		size = 4096
	}
	w.align8()
	heap := w.here()
	w.buf = append(w.buf, "GCOL"...)
	w.buf = append(w.buf, 1, 0, 0, 0)
	w.buf = le.AppendUint64(w.buf, uint64(size))
	w.buf = append(w.buf, objs...)
	free := size - 16 - len(objs)
	w.buf = le.AppendUint16(w.buf, 0)
	w.buf = le.AppendUint16(w.buf, 0)
	w.buf = le.AppendUint32(w.buf, 0)
	w.buf = le.AppendUint64(w.buf, uint64(free))
	w.buf = append(w.buf, make([]byte, free-objHdr)...)

	raw := make([]byte, 0, 16*len(strs))
	for i, s := range strs {
		raw = le.AppendUint32(raw, uint32(len(s)))
		raw = le.AppendUint64(raw, heap)
		raw = le.AppendUint32(raw, uint32(i+1))
	}
	return w.dataset(typeVLenString, dims, raw)
}

type h5link struct {
	name string
	addr uint64
}

// group appends a group whose hard links are stored in its header.
func (w *h5writer) group(links []h5link) uint64 {
	linfo := []byte{0, 0}
	linfo = le.AppendUint64(linfo, undefAddr) // no fractal heap: links are compact
	linfo = le.AppendUint64(linfo, undefAddr)
	msgs := []h5msg{{0x02, 0, linfo}, {0x0a, 0, []byte{0, 0}}}
	for _, l := range links {
		b := []byte{1, 0x10 | 0x01, 1} // version 1; charset present, 2-byte name length; UTF-8
		b = le.AppendUint16(b, uint16(len(l.name)))
		b = append(b, l.name...)
		b = le.AppendUint64(b, l.addr)
		msgs = append(msgs, h5msg{0x06, 0, b})
	}
	return w.header(msgs)
}

// finish writes the superblock and returns the file.
func (w *h5writer) finish(root uint64) []byte {
	sb := []byte("\x89HDF\r\n\x1a\n")
	sb = append(sb, 2, 8, 8, 0)
	sb = le.AppendUint64(sb, 0)         // base address
	sb = le.AppendUint64(sb, undefAddr) // no superblock extension
	sb = le.AppendUint64(sb, uint64(len(w.buf)))
	sb = le.AppendUint64(sb, root)
	sb = le.AppendUint32(sb, lookup3(sb))
	copy(w.buf, sb)
	return w.buf
}

// lookup3 is Bob Jenkins' hashlittle with initial value 0, the checksum
// of HDF5's version 2 metadata.
func lookup3(k []byte) uint32 {
	rot := func(x uint32, k uint) uint32 { return x<<k | x>>(32-k) }
	a := 0xdeadbeef + uint32(len(k))
	b, c := a, a
	for len(k) > 12 {
		a += le.Uint32(k)
		b += le.Uint32(k[4:])
		c += le.Uint32(k[8:])
		a -= c
		a ^= rot(c, 4)
		c += b
		b -= a
		b ^= rot(a, 6)
		a += c
		c -= b
		c ^= rot(b, 8)
		b += a
		a -= c
		a ^= rot(c, 16)
		c += b
		b -= a
		b ^= rot(a, 19)
		a += c
		c -= b
		c ^= rot(b, 4)
		b += a
		k = k[12:]
	}
	if len(k) == 0 {
		return c
	}
	var tail [12]byte
	copy(tail[:], k)
	a += le.Uint32(tail[:])
	b += le.Uint32(tail[4:])
	c += le.Uint32(tail[8:])
	c ^= b
	c -= rot(b, 14)
	a ^= c
	a -= rot(c, 11)
	b ^= a
	b -= rot(a, 25)
	c ^= b
	c -= rot(b, 16)
	a ^= c
	a -= rot(c, 4)
	b ^= a
	b -= rot(a, 14)
	c ^= b
	c -= rot(b, 24)
	return c
}
