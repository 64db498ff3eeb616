package torchfile

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
)

// Storage is the flat buffer behind one or more tensors: a zip entry
// <archive>/data/<Key> holding Len elements of DType.
type Storage struct {
	Key      string // the persistent id key, e.g. "0"
	DType    DType
	Location string // device it was saved from, e.g. "cpu" or "cuda:0"
	Len      int64  // elements
	Entry    string // the zip entry holding the bytes; empty when unknown

	src   io.ReaderAt // nil when the storage has no data (Unpickle)
	order binary.ByteOrder
}

// Tensor is a strided view of a Storage, as torch describes it. It holds no
// element data; Float32s reads them from the file.
type Tensor struct {
	DType        DType
	Shape        []int64
	Strides      []int64 // in elements
	Offset       int64   // in elements, into Storage
	Storage      *Storage
	RequiresGrad bool
	Parameter    bool // saved as torch.nn.Parameter
}

// NumElements returns the product of the shape (1 for a scalar).
func (t *Tensor) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d // bounded when the tensor was read
	}
	return n
}

// IsContiguous reports whether the tensor is laid out in row-major order
// without gaps, so that its elements are one run of its storage.
func (t *Tensor) IsContiguous() bool {
	want := int64(1)
	for i := len(t.Shape) - 1; i >= 0; i-- {
		if t.Shape[i] == 1 {
			continue
		}
		if t.Strides[i] != want {
			return false
		}
		want *= t.Shape[i]
	}
	return true
}

// Float32s returns the elements in row-major order, converted to float32
// (float64 values are rounded, integers and bools converted).
func (t *Tensor) Float32s() ([]float32, error) {
	dst := make([]float32, t.NumElements())
	if err := t.ReadFloat32s(dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// ReadFloat32s is Float32s into a caller's buffer of exactly NumElements.
// It is safe to call concurrently if the io.ReaderAt given to Open is.
func (t *Tensor) ReadFloat32s(dst []float32) error {
	n := t.NumElements()
	if int64(len(dst)) != n {
		return t.err(fmt.Errorf("%w: buffer of %d for %d elements", ErrFormat, len(dst), n))
	}
	st := t.Storage
	if st == nil || st.src == nil {
		return t.err(fmt.Errorf("%w: storage has no data (read with Unpickle, not Open)", ErrFormat))
	}
	if n == 0 {
		return nil
	}
	es := int64(t.DType.Size())
	if t.IsContiguous() {
		return t.readRun(dst, t.Offset*es)
	}
	// A strided view: read the span of storage it covers when that is not
	// much larger than the tensor, else element by element.
	lo, hi := t.Offset, t.Offset
	for i, d := range t.Shape {
		hi += (d - 1) * t.Strides[i]
	}
	span := hi - lo + 1
	var buf []byte
	if span <= 4*n || span <= 1<<16 {
		buf = make([]byte, span*es)
		if _, err := st.src.ReadAt(buf, lo*es); err != nil {
			return t.err(fmt.Errorf("%w: reading storage: %w", ErrTruncated, err))
		}
	}
	one := make([]byte, es)
	idx := make([]int64, len(t.Shape))
	for k := range dst {
		off := int64(0)
		for i := range idx {
			off += idx[i] * t.Strides[i]
		}
		var src []byte
		if buf != nil {
			src = buf[off*es : (off+1)*es]
		} else {
			if _, err := st.src.ReadAt(one, (lo+off)*es); err != nil {
				return t.err(fmt.Errorf("%w: reading storage: %w", ErrTruncated, err))
			}
			src = one
		}
		decodeFloat32(t.DType, st.order, dst[k:k+1], src)
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < t.Shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return nil
}

// readRun decodes len(dst) consecutive elements starting at byte off, through
// a bounded buffer so that allocation stays at the size of the result.
func (t *Tensor) readRun(dst []float32, off int64) error {
	es := t.DType.Size()
	const chunk = 64 << 10
	buf := make([]byte, min(chunk, len(dst)*es))
	per := len(buf) / es
	for i := 0; i < len(dst); i += per {
		m := min(per, len(dst)-i)
		b := buf[:m*es]
		if _, err := t.Storage.src.ReadAt(b, off+int64(i*es)); err != nil {
			return t.err(fmt.Errorf("%w: reading storage: %w", ErrTruncated, err))
		}
		decodeFloat32(t.DType, t.Storage.order, dst[i:i+m], b)
	}
	return nil
}

func (t *Tensor) err(e error) error {
	key := ""
	if t.Storage != nil {
		key = t.Storage.Key
	}
	return &TensorError{Storage: key, Err: e}
}

// persistentLoad turns torch's persistent id
// ('storage', storage_type, key, location, numel) into a *Storage, shared
// between all tensors that name the same key.
func (u *unpickler) persistentLoad(pid any) (any, error) {
	t, ok := pid.(Tuple)
	if !ok || len(t) != 5 {
		return nil, u.errf("persistent id is %s, not a 5-tuple", TypeName(pid))
	}
	if tag, _ := t[0].(string); tag != "storage" {
		return nil, fmt.Errorf("%w: persistent id of kind %v", ErrUnsupported, t[0])
	}
	g, ok := t[1].(*Global)
	if !ok || g.info.kind != ckStorageType {
		return nil, u.errf("persistent id storage type is %s", TypeName(t[1]))
	}
	key, ok1 := t[2].(string)
	loc, ok2 := t[3].(string)
	numel, ok3 := t[4].(int64)
	if !ok1 || !ok2 || !ok3 {
		return nil, u.errf("persistent id fields are (%s, %s, %s), want (str, str, int)", TypeName(t[2]), TypeName(t[3]), TypeName(t[4]))
	}
	if !validKey(key) {
		return nil, u.errf("storage key %q is not a plain name", truncate([]byte(key)))
	}
	if numel < 0 {
		return nil, u.errf("storage %q has %d elements", key, numel)
	}
	if st, ok := u.storages[key]; ok {
		if st.DType != g.info.dtype || st.Len != numel {
			return nil, u.fail(&TensorError{Storage: key, Err: fmt.Errorf("%w: storage named twice as %s[%d] and %s[%d]", ErrFormat, st.DType, st.Len, g.info.dtype, numel)})
		}
		return st, nil
	}
	if hi, lo := bits.Mul64(uint64(numel), uint64(g.info.dtype.Size())); hi != 0 || lo > 1<<63-1 {
		return nil, u.fail(&TensorError{Storage: key, Err: fmt.Errorf("%w: storage byte size overflows", ErrLimit)})
	}
	st := &Storage{Key: key, DType: g.info.dtype, Location: loc, Len: numel, order: binary.LittleEndian}
	if u.resolve != nil {
		if err := u.resolve(st); err != nil {
			return nil, u.fail(&TensorError{Storage: key, Err: err})
		}
	}
	u.storages[key] = st
	return st, nil
}

func validKey(k string) bool {
	if k == "" || k == "." || k == ".." || len(k) > 256 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// rebuildTensor is torch._utils._rebuild_tensor_v2(storage, storage_offset,
// size, stride, requires_grad, backward_hooks[, metadata]) and the older
// _rebuild_tensor(storage, storage_offset, size, stride), checked so that
// every element the view can reach lies inside its storage.
func (u *unpickler) rebuildTensor(g *Global, args Tuple) (any, error) {
	if g.info.kind == ckRebuildTensor && len(args) != 4 || g.info.kind == ckRebuildTensorV2 && (len(args) < 6 || len(args) > 7) {
		return nil, u.errf("%s: %d arguments", g, len(args))
	}
	st, ok := args[0].(*Storage)
	if !ok {
		return nil, u.errf("%s: storage is %s", g, TypeName(args[0]))
	}
	off, ok := args[1].(int64)
	if !ok {
		return nil, u.errf("%s: storage_offset is %s", g, TypeName(args[1]))
	}
	shape, err := u.intTuple(args[2], "size")
	if err != nil {
		return nil, err
	}
	strides, err := u.intTuple(args[3], "stride")
	if err != nil {
		return nil, err
	}
	t := &Tensor{DType: st.DType, Shape: shape, Strides: strides, Offset: off, Storage: st}
	if len(args) > 4 {
		rg, ok := args[4].(bool)
		if !ok {
			return nil, u.errf("%s: requires_grad is %s", g, TypeName(args[4]))
		}
		t.RequiresGrad = rg
	}
	if err := checkTensor(t, u.limits); err != nil {
		return nil, u.fail(t.err(err))
	}
	return t, nil
}

func (u *unpickler) intTuple(v any, what string) ([]int64, error) {
	items, err := iterItems(v)
	if err != nil {
		return nil, u.errf("tensor %s: %v", what, err)
	}
	if len(items) > u.limits.MaxDims {
		return nil, &LimitError{Limit: "MaxDims", Value: int64(len(items)), Max: int64(u.limits.MaxDims)}
	}
	out := make([]int64, len(items))
	for i, x := range items {
		n, ok := x.(int64)
		if !ok {
			return nil, u.errf("tensor %s[%d] is %s", what, i, TypeName(x))
		}
		out[i] = n
	}
	return out, nil
}

// checkTensor validates a view against its storage and the limits.
func checkTensor(t *Tensor, l Limits) error {
	if len(t.Shape) != len(t.Strides) {
		return fmt.Errorf("%w: %d sizes but %d strides", ErrFormat, len(t.Shape), len(t.Strides))
	}
	if t.Offset < 0 {
		return fmt.Errorf("%w: negative storage offset %d", ErrFormat, t.Offset)
	}
	n := uint64(1)
	for i, d := range t.Shape {
		if d < 0 || t.Strides[i] < 0 {
			return fmt.Errorf("%w: negative size or stride in shape %v strides %v", ErrFormat, t.Shape, t.Strides)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > 1<<63-1 {
			return fmt.Errorf("%w: element count of shape %v overflows int64", ErrLimit, t.Shape)
		}
		n = lo
	}
	if int64(n) > l.MaxTensorElements {
		return &LimitError{Limit: "MaxTensorElements", Value: int64(n), Max: l.MaxTensorElements}
	}
	if n == 0 {
		return nil
	}
	// The last element the view reaches: offset + sum((size-1)*stride).
	last := uint64(t.Offset)
	for i, d := range t.Shape {
		hi, lo := bits.Mul64(uint64(d-1), uint64(t.Strides[i]))
		var carry uint64
		last, carry = bits.Add64(last, lo, 0)
		if hi != 0 || carry != 0 || last > 1<<63-1 {
			return fmt.Errorf("%w: strides %v reach past int64", ErrFormat, t.Strides)
		}
	}
	if int64(last) >= t.Storage.Len {
		return fmt.Errorf("%w: shape %v strides %v offset %d reach element %d of a storage of %d",
			ErrFormat, t.Shape, t.Strides, t.Offset, last, t.Storage.Len)
	}
	return nil
}
