package onnx

import (
	"encoding/binary"

	"github.com/neuro-go/neuro/compile"
)

// Importing this package (a blank import is enough) makes the format "onnx"
// available to compile.Import, which also recognises ONNX files by their
// first bytes when it is given no format name (see sniff).
func init() {
	compile.RegisterFormat("onnx", Import)
	compile.RegisterSniffer("onnx", sniff)
}

// modelFields are ModelProto's fields (onnx.proto) with their wire types:
// 0 varint, 2 length-delimited.
var modelFields = map[uint64]uint64{
	1:  0, // ir_version
	2:  2, // producer_name
	3:  2, // producer_version
	4:  2, // domain
	5:  0, // model_version
	6:  2, // doc_string
	7:  2, // graph
	8:  2, // opset_import
	14: 2, // metadata_props
	20: 2, // training_info
	25: 2, // functions
}

// sniff reports whether head reads as the start of a serialised
// ModelProto. ONNX has no magic number, so it walks the protobuf fields in
// head: the first must be ir_version with a plausible value (protobuf
// writers emit fields in number order, and the ONNX checker requires
// ir_version), and every later one a ModelProto field of the right wire
// type; the last may run past head. Zip, HDF5 and pickle files fail at the
// first byte: 'P' would be field 10, and 0x89 and 0x80 start multi-byte
// tags.
func sniff(head []byte) bool {
	if len(head) < 2 || head[0] != 1<<3 || head[1] == 0 || head[1] >= 0x80 {
		return false // not ir_version in 1..127 (ONNX is at 11)
	}
	head = head[2:]
	for len(head) > 0 {
		tag, n := binary.Uvarint(head)
		if n <= 0 {
			return n == 0 // a tag cut off by the end of head
		}
		head = head[n:]
		wt, ok := modelFields[tag>>3]
		if !ok || tag&7 != wt {
			return false
		}
		v, n := binary.Uvarint(head) // the value, or the length
		if n < 0 {
			return false
		}
		if n == 0 || wt == 2 && v > uint64(len(head)-n) {
			return true // the field runs past head
		}
		head = head[n:]
		if wt == 2 {
			head = head[v:]
		}
	}
	return true
}
