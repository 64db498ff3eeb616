package onnx

import (
	"fmt"
	"math"
)

// This file is the cheap look before the expensive decode (as image.DecodeConfig
// is for images): a bounds-checked walk over the protobuf wire format that
// records the structure of a ModelProto (opsets, node names, value shapes,
// tensor headers and data lengths) without copying tensor data. Decode
// validates what it records before onnx-go allocates anything, because
// onnx-go allocates whatever a file declares (a graph input declared
// [1e6, 1e6] becomes a 4 TB gorgonia tensor) and panics on tensors whose data
// does not match their dims. It also gives Decode what onnx-go v0.5.0 does not
// pass to a Backend: the opset imports, node names, and graph inputs and
// outputs by name and declared shape.
//
// Field numbers are those of onnx/onnx.proto (IR version 8).

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// ONNX TensorProto.DataType values this package knows by name.
const (
	dtFloat  = 1
	dtInt32  = 6
	dtInt64  = 7
	dtString = 8
	dtBool   = 9
	dtDouble = 11
)

var dtypeNames = map[int64]string{
	0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32",
	7: "INT64", 8: "STRING", 9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32",
	13: "UINT64", 14: "COMPLEX64", 15: "COMPLEX128", 16: "BFLOAT16",
}

func dtypeName(dt int64) string {
	if s, ok := dtypeNames[dt]; ok {
		return s
	}
	return fmt.Sprintf("data type %d", dt)
}

// ONNX AttributeProto.AttributeType values.
const (
	attrFloat   = 1
	attrInt     = 2
	attrString  = 3
	attrTensor  = 4
	attrGraph   = 5
	attrFloats  = 6
	attrInts    = 7
	attrStrings = 8
)

type wire struct {
	b    []byte
	pos  int
	base int64 // file offset of b[0]
	msg  string
}

func (w *wire) more() bool { return w.pos < len(w.b) }

func (w *wire) errf(field, format string, args ...any) error {
	return &FormatError{Offset: w.base + int64(w.pos), Field: w.msg + "." + field, Reason: fmt.Sprintf(format, args...)}
}

func (w *wire) varint(field string) (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		if w.pos >= len(w.b) {
			return 0, w.errf(field, "truncated varint")
		}
		c := w.b[w.pos]
		w.pos++
		if i == 9 && c > 1 {
			return 0, w.errf(field, "varint overflows 64 bits")
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, w.errf(field, "varint longer than 10 bytes")
}

// key reads a field key.
func (w *wire) key() (num int, typ int, err error) {
	k, err := w.varint("key")
	if err != nil {
		return 0, 0, err
	}
	num, typ = int(k>>3), int(k&7)
	if num <= 0 || k>>3 > math.MaxInt32 {
		return 0, 0, w.errf("key", "invalid field number %d", k>>3)
	}
	return num, typ, nil
}

// sub reads a length-delimited field as a nested reader.
func (w *wire) sub(field, msg string) (*wire, error) {
	n, err := w.varint(field)
	if err != nil {
		return nil, err
	}
	if n > uint64(len(w.b)-w.pos) {
		return nil, w.errf(field, "length %d runs past the end of the data (%d bytes left)", n, len(w.b)-w.pos)
	}
	s := &wire{b: w.b[w.pos : w.pos+int(n)], base: w.base + int64(w.pos), msg: msg}
	w.pos += int(n)
	return s, nil
}

func (w *wire) bytes(field string) ([]byte, error) {
	s, err := w.sub(field, w.msg)
	if err != nil {
		return nil, err
	}
	return s.b, nil
}

func (w *wire) str(field string, typ int) (string, error) {
	if typ != wireBytes {
		return "", w.errf(field, "wire type %d, want length-delimited", typ)
	}
	b, err := w.bytes(field)
	return string(b), err
}

func (w *wire) int64v(field string, typ int) (int64, error) {
	if typ != wireVarint {
		return 0, w.errf(field, "wire type %d, want varint", typ)
	}
	v, err := w.varint(field)
	return int64(v), err
}

func (w *wire) skip(field string, typ int) error {
	switch typ {
	case wireVarint:
		_, err := w.varint(field)
		return err
	case wireFixed64:
		if len(w.b)-w.pos < 8 {
			return w.errf(field, "truncated fixed64")
		}
		w.pos += 8
	case wireFixed32:
		if len(w.b)-w.pos < 4 {
			return w.errf(field, "truncated fixed32")
		}
		w.pos += 4
	case wireBytes:
		_, err := w.sub(field, w.msg)
		return err
	default:
		return w.errf(field, "unsupported wire type %d", typ)
	}
	return nil
}

// repeatedVarints counts, and with keep appends, the values of a repeated
// varint field in packed or unpacked form. Appending stops with an error past
// max values.
func (w *wire) repeatedVarints(field string, typ int, dst []int64, count *int, keep bool, max int) ([]int64, error) {
	add := func(v uint64) error {
		*count++
		if keep {
			if len(dst) >= max {
				return &LimitError{What: "rank of a tensor at byte " + fmt.Sprint(w.base+int64(w.pos)), Value: int64(len(dst) + 1), Limit: int64(max)}
			}
			dst = append(dst, int64(v))
		}
		return nil
	}
	switch typ {
	case wireVarint:
		v, err := w.varint(field)
		if err != nil {
			return dst, err
		}
		return dst, add(v)
	case wireBytes:
		s, err := w.sub(field, w.msg)
		if err != nil {
			return dst, err
		}
		for s.more() {
			v, err := s.varint(field)
			if err != nil {
				return dst, err
			}
			if err := add(v); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	return dst, w.errf(field, "wire type %d, want varint or packed", typ)
}

// repeatedFixed counts the values of a repeated fixed-width field (size 4 or
// 8 bytes) in packed or unpacked form.
func (w *wire) repeatedFixed(field string, typ int, size int, count *int) error {
	want := wireFixed32
	if size == 8 {
		want = wireFixed64
	}
	switch typ {
	case want:
		*count++
		return w.skip(field, typ)
	case wireBytes:
		b, err := w.bytes(field)
		if err != nil {
			return err
		}
		if len(b)%size != 0 {
			return w.errf(field, "packed length %d is not a multiple of %d", len(b), size)
		}
		*count += len(b) / size
		return nil
	}
	return w.errf(field, "wire type %d, want fixed%d or packed", typ, size*8)
}

// Header records, filled by scanModel.

type hModel struct {
	irVersion       int64
	opsets          []hOpset
	producer        string
	producerVersion string
	graph           *hGraph
	graphOff        int64
}

type hOpset struct {
	domain  string
	version int64
}

type hGraph struct {
	name                      string
	nodes                     []hNode
	inits                     []hTensor
	inputs, outputs, valueInf []hValue
	sparseInits               int
}

type hNode struct {
	name, op, domain string
	inputs, outputs  []string
	attrs            []hAttr
	off              int64
}

type hAttr struct {
	name   string
	typ    int64
	tensor *hTensor // for TENSOR attributes
	graphs int      // GRAPH/GRAPHS payloads seen
}

type hTensor struct {
	name                                           string
	dtype                                          int64
	dims                                           []int64
	hasRaw                                         bool
	rawLen                                         int
	nFloat, nInt32, nInt64, nDouble, nStr, nUint64 int
	external                                       bool // data_location EXTERNAL or external_data entries
	segmented                                      bool
	off                                            int64
}

type hValue struct {
	name     string
	hasType  bool
	isTensor bool
	elemType int64
	hasShape bool
	dims     []hDim
}

type hDim struct {
	value int64
	param string
	known bool // value is set (dim_value); otherwise symbolic or absent
}

func scanModel(b []byte, lim limits) (*hModel, error) {
	w := &wire{b: b, msg: "ModelProto"}
	m := &hModel{}
	for w.more() {
		num, typ, err := w.key()
		if err != nil {
			return nil, err
		}
		switch num {
		case 1:
			if m.irVersion, err = w.int64v("ir_version", typ); err != nil {
				return nil, err
			}
		case 2:
			if m.producer, err = w.str("producer_name", typ); err != nil {
				return nil, err
			}
		case 3:
			if m.producerVersion, err = w.str("producer_version", typ); err != nil {
				return nil, err
			}
		case 7:
			if typ != wireBytes {
				return nil, w.errf("graph", "wire type %d, want length-delimited", typ)
			}
			m.graphOff = w.base + int64(w.pos)
			s, err := w.sub("graph", "GraphProto")
			if err != nil {
				return nil, err
			}
			// protobuf merges repeated occurrences of a message field; so
			// does onnx-go's decoder, so do we.
			if m.graph == nil {
				m.graph = &hGraph{}
			}
			if err := scanGraph(s, m.graph, lim); err != nil {
				return nil, err
			}
		case 8:
			if typ != wireBytes {
				return nil, w.errf("opset_import", "wire type %d, want length-delimited", typ)
			}
			s, err := w.sub("opset_import", "OperatorSetIdProto")
			if err != nil {
				return nil, err
			}
			var o hOpset
			for s.more() {
				n, t, err := s.key()
				if err != nil {
					return nil, err
				}
				switch n {
				case 1:
					o.domain, err = s.str("domain", t)
				case 2:
					o.version, err = s.int64v("version", t)
				default:
					err = s.skip("unknown", t)
				}
				if err != nil {
					return nil, err
				}
			}
			if len(m.opsets) >= 1024 {
				return nil, w.errf("opset_import", "more than 1024 opset imports")
			}
			m.opsets = append(m.opsets, o)
		default:
			if err := w.skip(fmt.Sprintf("field %d", num), typ); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func scanGraph(w *wire, g *hGraph, lim limits) error {
	for w.more() {
		num, typ, err := w.key()
		if err != nil {
			return err
		}
		if typ != wireBytes && (num == 1 || num == 5 || num == 11 || num == 12 || num == 13 || num == 15) {
			return w.errf(fmt.Sprintf("field %d", num), "wire type %d, want length-delimited", typ)
		}
		switch num {
		case 1:
			off := w.base + int64(w.pos)
			s, err := w.sub("node", "NodeProto")
			if err != nil {
				return err
			}
			if len(g.nodes) >= lim.maxNodes {
				return &LimitError{What: "number of nodes", Value: int64(len(g.nodes) + 1), Limit: int64(lim.maxNodes)}
			}
			n := hNode{off: off}
			if err := scanNode(s, &n, lim); err != nil {
				return err
			}
			g.nodes = append(g.nodes, n)
		case 2:
			if g.name, err = w.str("name", typ); err != nil {
				return err
			}
		case 5:
			off := w.base + int64(w.pos)
			s, err := w.sub("initializer", "TensorProto")
			if err != nil {
				return err
			}
			t := hTensor{off: off}
			if err := scanTensor(s, &t, lim); err != nil {
				return err
			}
			g.inits = append(g.inits, t)
		case 11, 12, 13:
			s, err := w.sub("value", "ValueInfoProto")
			if err != nil {
				return err
			}
			var v hValue
			if err := scanValue(s, &v, lim); err != nil {
				return err
			}
			switch num {
			case 11:
				g.inputs = append(g.inputs, v)
			case 12:
				g.outputs = append(g.outputs, v)
			default:
				g.valueInf = append(g.valueInf, v)
			}
		case 15:
			if err := w.skip("sparse_initializer", typ); err != nil {
				return err
			}
			g.sparseInits++
		default:
			if err := w.skip(fmt.Sprintf("field %d", num), typ); err != nil {
				return err
			}
		}
	}
	return nil
}

func scanNode(w *wire, n *hNode, lim limits) error {
	for w.more() {
		num, typ, err := w.key()
		if err != nil {
			return err
		}
		switch num {
		case 1, 2:
			s, err := w.str("input/output", typ)
			if err != nil {
				return err
			}
			if num == 1 {
				n.inputs = append(n.inputs, s)
			} else {
				n.outputs = append(n.outputs, s)
			}
		case 3:
			n.name, err = w.str("name", typ)
		case 4:
			n.op, err = w.str("op_type", typ)
		case 7:
			n.domain, err = w.str("domain", typ)
		case 5:
			if typ != wireBytes {
				return w.errf("attribute", "wire type %d, want length-delimited", typ)
			}
			s, err := w.sub("attribute", "AttributeProto")
			if err != nil {
				return err
			}
			var a hAttr
			if err := scanAttr(s, &a, lim); err != nil {
				return err
			}
			n.attrs = append(n.attrs, a)
		default:
			err = w.skip(fmt.Sprintf("field %d", num), typ)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func scanAttr(w *wire, a *hAttr, lim limits) error {
	for w.more() {
		num, typ, err := w.key()
		if err != nil {
			return err
		}
		switch num {
		case 1:
			a.name, err = w.str("name", typ)
		case 20:
			a.typ, err = w.int64v("type", typ)
		case 5:
			if typ != wireBytes {
				return w.errf("t", "wire type %d, want length-delimited", typ)
			}
			off := w.base + int64(w.pos)
			s, err := w.sub("t", "TensorProto")
			if err != nil {
				return err
			}
			t := &hTensor{off: off}
			if err := scanTensor(s, t, lim); err != nil {
				return err
			}
			a.tensor = t
		case 6, 11:
			a.graphs++
			err = w.skip("g", typ)
		default:
			err = w.skip(fmt.Sprintf("field %d", num), typ)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func scanTensor(w *wire, t *hTensor, lim limits) error {
	for w.more() {
		num, typ, err := w.key()
		if err != nil {
			return err
		}
		var ignored int
		switch num {
		case 1:
			t.dims, err = w.repeatedVarints("dims", typ, t.dims, &ignored, true, lim.maxRank)
		case 2:
			t.dtype, err = w.int64v("data_type", typ)
		case 3:
			t.segmented = true
			err = w.skip("segment", typ)
		case 4:
			err = w.repeatedFixed("float_data", typ, 4, &t.nFloat)
		case 5:
			_, err = w.repeatedVarints("int32_data", typ, nil, &t.nInt32, false, 0)
		case 6:
			t.nStr++
			err = w.skip("string_data", typ)
		case 7:
			_, err = w.repeatedVarints("int64_data", typ, nil, &t.nInt64, false, 0)
		case 8:
			t.name, err = w.str("name", typ)
		case 9:
			var b []byte
			if typ != wireBytes {
				return w.errf("raw_data", "wire type %d, want length-delimited", typ)
			}
			b, err = w.bytes("raw_data")
			t.hasRaw, t.rawLen = true, len(b)
		case 10:
			err = w.repeatedFixed("double_data", typ, 8, &t.nDouble)
		case 11:
			_, err = w.repeatedVarints("uint64_data", typ, nil, &t.nUint64, false, 0)
		case 13:
			t.external = true
			err = w.skip("external_data", typ)
		case 14:
			var loc int64
			loc, err = w.int64v("data_location", typ)
			if loc != 0 {
				t.external = true
			}
		default:
			err = w.skip(fmt.Sprintf("field %d", num), typ)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func scanValue(w *wire, v *hValue, lim limits) error {
	for w.more() {
		num, typ, err := w.key()
		if err != nil {
			return err
		}
		switch num {
		case 1:
			v.name, err = w.str("name", typ)
		case 2:
			if typ != wireBytes {
				return w.errf("type", "wire type %d, want length-delimited", typ)
			}
			s, err := w.sub("type", "TypeProto")
			if err != nil {
				return err
			}
			v.hasType = true
			if err := scanType(s, v, lim); err != nil {
				return err
			}
		default:
			err = w.skip(fmt.Sprintf("field %d", num), typ)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func scanType(w *wire, v *hValue, lim limits) error {
	for w.more() {
		num, typ, err := w.key()
		if err != nil {
			return err
		}
		if num != 1 {
			if err := w.skip(fmt.Sprintf("field %d", num), typ); err != nil {
				return err
			}
			continue
		}
		if typ != wireBytes {
			return w.errf("tensor_type", "wire type %d, want length-delimited", typ)
		}
		tt, err := w.sub("tensor_type", "TypeProto.Tensor")
		if err != nil {
			return err
		}
		v.isTensor = true
		for tt.more() {
			n, t, err := tt.key()
			if err != nil {
				return err
			}
			switch n {
			case 1:
				v.elemType, err = tt.int64v("elem_type", t)
			case 2:
				if t != wireBytes {
					return tt.errf("shape", "wire type %d, want length-delimited", t)
				}
				var sh *wire
				sh, err = tt.sub("shape", "TensorShapeProto")
				if err == nil {
					v.hasShape = true
					err = scanShape(sh, v, lim)
				}
			default:
				err = tt.skip(fmt.Sprintf("field %d", n), t)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func scanShape(w *wire, v *hValue, lim limits) error {
	for w.more() {
		num, typ, err := w.key()
		if err != nil {
			return err
		}
		if num != 1 {
			if err := w.skip(fmt.Sprintf("field %d", num), typ); err != nil {
				return err
			}
			continue
		}
		if typ != wireBytes {
			return w.errf("dim", "wire type %d, want length-delimited", typ)
		}
		ds, err := w.sub("dim", "TensorShapeProto.Dimension")
		if err != nil {
			return err
		}
		if len(v.dims) >= lim.maxRank {
			return &LimitError{What: fmt.Sprintf("rank of value %q", v.name), Value: int64(len(v.dims) + 1), Limit: int64(lim.maxRank)}
		}
		var d hDim
		for ds.more() {
			n, t, err := ds.key()
			if err != nil {
				return err
			}
			switch n {
			case 1:
				d.value, err = ds.int64v("dim_value", t)
				d.known = true
			case 2:
				d.param, err = ds.str("dim_param", t)
			default:
				err = ds.skip(fmt.Sprintf("field %d", n), t)
			}
			if err != nil {
				return err
			}
		}
		v.dims = append(v.dims, d)
	}
	return nil
}
