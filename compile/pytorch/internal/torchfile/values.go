package torchfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The unpickler produces these Go values for Python ones:
//
//	None            nil
//	bool            bool
//	int             int64 (larger integers are refused)
//	float           float64
//	str             string
//	bytes           []byte
//	tuple           Tuple
//	list            *List
//	dict            *Dict (also collections.OrderedDict, with Class set)
//	set, frozenset  *Set
//	torch.Size      Tuple
//	torch.<dtype>   DType
//	tensor          *Tensor
//	storage         *Storage
//	nn.Module       *Module
//	other allowed   *Object (named tuples, torch.device)
//	class reference *Global (an allowed class named but not instantiated)

// Tuple is a Python tuple.
type Tuple []any

// List is a Python list. It is a pointer type because pickles share and mutate
// lists through the memo.
type List struct {
	Items []any
}

// Set is a Python set or frozenset.
type Set struct {
	Items  []any
	Frozen bool
	index  map[string]bool
}

// DictItem is one key/value pair of a Dict.
type DictItem struct {
	Key   any
	Value any
}

// Dict is a Python dict, in insertion order. Class is "" for a plain dict and
// "collections.OrderedDict" for an OrderedDict. Attrs holds instance
// attributes set by BUILD (a state_dict's "_metadata"), or is nil.
type Dict struct {
	Class string
	Attrs *Dict
	items []DictItem
	index map[string]int
}

// NewDict returns an empty plain dict.
func NewDict() *Dict { return &Dict{} }

// Len returns the number of items.
func (d *Dict) Len() int {
	if d == nil {
		return 0
	}
	return len(d.items)
}

// Items returns the items in insertion order. The slice must not be modified.
func (d *Dict) Items() []DictItem {
	if d == nil {
		return nil
	}
	return d.items
}

// Get returns the value stored under key.
func (d *Dict) Get(key any) (any, bool) {
	if d == nil {
		return nil, false
	}
	k, err := hashKey(key, defaultMaxDepth)
	if err != nil {
		return nil, false
	}
	i, ok := d.index[k]
	if !ok {
		return nil, false
	}
	return d.items[i].Value, true
}

// GetString is Get with a string key.
func (d *Dict) GetString(key string) (any, bool) { return d.Get(key) }

// Set stores value under key, keeping the first insertion position of a key,
// as Python does. It fails for unhashable keys (lists, dicts, sets).
func (d *Dict) Set(key, value any) error {
	return d.set(key, value, defaultMaxDepth)
}

func (d *Dict) set(key, value any, depth int) error {
	k, err := hashKey(key, depth)
	if err != nil {
		return err
	}
	if d.index == nil {
		d.index = make(map[string]int)
	}
	if i, ok := d.index[k]; ok {
		d.items[i].Value = value
		return nil
	}
	d.index[k] = len(d.items)
	d.items = append(d.items, DictItem{Key: key, Value: value})
	return nil
}

// Module is an instance of a torch.nn.Module subclass (or of a TorchScript
// __torch__ class): its qualified class name and its instance attributes as
// unpickled (for nn.Module: training, _parameters, _buffers, _modules, hooks
// and the hyperparameters such as in_features, beta or threshold).
type Module struct {
	Class string
	Attrs *Dict
}

// Attr returns the attribute called name.
func (m *Module) Attr(name string) (any, bool) { return m.Attrs.Get(name) }

// Object is an instance of an allowed non-module class, such as a Norse
// parameter NamedTuple or torch.device: its class, the constructor arguments
// as recorded in the pickle, the field names where the class is a known
// NamedTuple, and the state set by BUILD, if any.
type Object struct {
	Class  string
	Args   Tuple
	Fields []string
	State  any
}

// Field returns the named field of a known NamedTuple.
func (o *Object) Field(name string) (any, bool) {
	for i, f := range o.Fields {
		if f == name && i < len(o.Args) {
			return o.Args[i], true
		}
	}
	return nil, false
}

// Global is a reference to an allowed class or function that the pickle named
// without instantiating it.
type Global struct {
	Module string
	Name   string
	info   classInfo
}

func (g *Global) String() string { return g.Module + "." + g.Name }

// DType is a tensor element type, named as in torch ("float32", "int64", ...).
type DType string

// The element types a Tensor can have.
const (
	Float32  DType = "float32"
	Float64  DType = "float64"
	Float16  DType = "float16"
	BFloat16 DType = "bfloat16"
	Int8     DType = "int8"
	Uint8    DType = "uint8"
	Int16    DType = "int16"
	Int32    DType = "int32"
	Int64    DType = "int64"
	Bool     DType = "bool"
)

// Size returns the size of one element in bytes, or 0 for an unknown dtype.
func (d DType) Size() int {
	switch d {
	case Float64, Int64:
		return 8
	case Float32, Int32:
		return 4
	case Float16, BFloat16, Int16:
		return 2
	case Int8, Uint8, Bool:
		return 1
	}
	return 0
}

// decodeFloat32 converts n elements of dtype d from src into dst.
func decodeFloat32(d DType, order binary.ByteOrder, dst []float32, src []byte) {
	switch d {
	case Float32:
		for i := range dst {
			dst[i] = math.Float32frombits(order.Uint32(src[4*i:]))
		}
	case Float64:
		for i := range dst {
			dst[i] = float32(math.Float64frombits(order.Uint64(src[8*i:])))
		}
	case Float16:
		for i := range dst {
			dst[i] = halfToFloat32(order.Uint16(src[2*i:]))
		}
	case BFloat16:
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(order.Uint16(src[2*i:])) << 16)
		}
	case Int8:
		for i := range dst {
			dst[i] = float32(int8(src[i]))
		}
	case Uint8:
		for i := range dst {
			dst[i] = float32(src[i])
		}
	case Bool:
		for i := range dst {
			if src[i] != 0 {
				dst[i] = 1
			} else {
				dst[i] = 0
			}
		}
	case Int16:
		for i := range dst {
			dst[i] = float32(int16(order.Uint16(src[2*i:])))
		}
	case Int32:
		for i := range dst {
			dst[i] = float32(int32(order.Uint32(src[4*i:])))
		}
	case Int64:
		for i := range dst {
			dst[i] = float32(int64(order.Uint64(src[8*i:])))
		}
	}
}

// halfToFloat32 converts an IEEE 754 binary16 value.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf, nan
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0:
		if frac == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: value = frac * 2^-24.
		v := float32(frac) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

var errUnhashable = errors.New("unhashable key")

// hashKey returns a string that is equal for equal hashable Python values.
// Python treats 1, 1.0 and True as the same key; here they differ, which can
// only matter for hand-made pickles.
func hashKey(v any, depth int) (string, error) {
	var b []byte
	b, err := appendKey(b, v, depth)
	return string(b), err
}

func appendKey(b []byte, v any, depth int) ([]byte, error) {
	if depth <= 0 {
		return nil, fmt.Errorf("%w: key nested deeper than MaxDepth", ErrLimit)
	}
	switch x := v.(type) {
	case nil:
		return append(b, 'N'), nil
	case bool:
		if x {
			return append(b, 'T'), nil
		}
		return append(b, 'F'), nil
	case int64:
		b = append(b, 'i')
		return binary.LittleEndian.AppendUint64(b, uint64(x)), nil
	case float64:
		b = append(b, 'f')
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(x)), nil
	case string:
		b = append(b, 's')
		b = binary.LittleEndian.AppendUint64(b, uint64(len(x)))
		return append(b, x...), nil
	case []byte:
		b = append(b, 'b')
		b = binary.LittleEndian.AppendUint64(b, uint64(len(x)))
		return append(b, x...), nil
	case DType:
		return append(append(b, 'd'), x...), nil
	case Tuple:
		b = append(b, '(')
		b = binary.LittleEndian.AppendUint64(b, uint64(len(x)))
		var err error
		for _, e := range x {
			if b, err = appendKey(b, e, depth-1); err != nil {
				return nil, err
			}
		}
		return b, nil
	case *Global:
		b = append(b, 'g')
		return append(b, x.String()...), nil
	}
	// Identity-hashed objects (modules, tensors) are rare as keys; refuse them
	// rather than hash by address, which would make output depend on layout.
	return nil, fmt.Errorf("%w of type %s", errUnhashable, TypeName(v))
}

// TypeName names a value's Python type for error messages.
func TypeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []byte:
		return "bytes"
	case Tuple:
		return "tuple"
	case *List:
		return "list"
	case *Dict:
		if x.Class != "" {
			return x.Class
		}
		return "dict"
	case *Set:
		if x.Frozen {
			return "frozenset"
		}
		return "set"
	case *Module:
		return x.Class
	case *Object:
		return x.Class
	case *Tensor:
		return "torch.Tensor"
	case *Storage:
		return "storage"
	case DType:
		return "torch.dtype"
	case *Global:
		return "class " + x.String()
	}
	return fmt.Sprintf("%T", v)
}
