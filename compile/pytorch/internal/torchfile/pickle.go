package torchfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Pickle opcodes, protocols 0 to 5.
const (
	opMark           = '('
	opStop           = '.'
	opPop            = '0'
	opPopMark        = '1'
	opDup            = '2'
	opFloat          = 'F'
	opInt            = 'I'
	opBinInt         = 'J'
	opBinInt1        = 'K'
	opLong           = 'L'
	opBinInt2        = 'M'
	opNone           = 'N'
	opPersID         = 'P'
	opBinPersID      = 'Q'
	opReduce         = 'R'
	opString         = 'S'
	opBinString      = 'T'
	opShortBinString = 'U'
	opUnicode        = 'V'
	opBinUnicode     = 'X'
	opAppend         = 'a'
	opBuild          = 'b'
	opGlobal         = 'c'
	opDict           = 'd'
	opEmptyDict      = '}'
	opAppends        = 'e'
	opGet            = 'g'
	opBinGet         = 'h'
	opInst           = 'i'
	opLongBinGet     = 'j'
	opList           = 'l'
	opEmptyList      = ']'
	opObj            = 'o'
	opPut            = 'p'
	opBinPut         = 'q'
	opLongBinPut     = 'r'
	opSetItem        = 's'
	opTuple          = 't'
	opEmptyTuple     = ')'
	opSetItems       = 'u'
	opBinFloat       = 'G'
	opProto          = 0x80
	opNewObj         = 0x81
	opExt1           = 0x82
	opExt2           = 0x83
	opExt4           = 0x84
	opTuple1         = 0x85
	opTuple2         = 0x86
	opTuple3         = 0x87
	opNewTrue        = 0x88
	opNewFalse       = 0x89
	opLong1          = 0x8a
	opLong4          = 0x8b
	opBinBytes       = 'B'
	opShortBinBytes  = 'C'
	opShortBinUni    = 0x8c
	opBinUnicode8    = 0x8d
	opBinBytes8      = 0x8e
	opEmptySet       = 0x8f
	opAddItems       = 0x90
	opFrozenSet      = 0x91
	opNewObjEx       = 0x92
	opStackGlobal    = 0x93
	opMemoize        = 0x94
	opFrame          = 0x95
	opByteArray8     = 0x96
	opNextBuffer     = 0x97
	opReadonlyBuffer = 0x98
)

var opNames = map[byte]string{
	opMark: "MARK", opStop: "STOP", opPop: "POP", opPopMark: "POP_MARK", opDup: "DUP",
	opFloat: "FLOAT", opInt: "INT", opBinInt: "BININT", opBinInt1: "BININT1", opLong: "LONG",
	opBinInt2: "BININT2", opNone: "NONE", opPersID: "PERSID", opBinPersID: "BINPERSID",
	opReduce: "REDUCE", opString: "STRING", opBinString: "BINSTRING",
	opShortBinString: "SHORT_BINSTRING", opUnicode: "UNICODE", opBinUnicode: "BINUNICODE",
	opAppend: "APPEND", opBuild: "BUILD", opGlobal: "GLOBAL", opDict: "DICT",
	opEmptyDict: "EMPTY_DICT", opAppends: "APPENDS", opGet: "GET", opBinGet: "BINGET",
	opInst: "INST", opLongBinGet: "LONG_BINGET", opList: "LIST", opEmptyList: "EMPTY_LIST",
	opObj: "OBJ", opPut: "PUT", opBinPut: "BINPUT", opLongBinPut: "LONG_BINPUT",
	opSetItem: "SETITEM", opTuple: "TUPLE", opEmptyTuple: "EMPTY_TUPLE", opSetItems: "SETITEMS",
	opBinFloat: "BINFLOAT", opProto: "PROTO", opNewObj: "NEWOBJ", opExt1: "EXT1", opExt2: "EXT2",
	opExt4: "EXT4", opTuple1: "TUPLE1", opTuple2: "TUPLE2", opTuple3: "TUPLE3",
	opNewTrue: "NEWTRUE", opNewFalse: "NEWFALSE", opLong1: "LONG1", opLong4: "LONG4",
	opBinBytes: "BINBYTES", opShortBinBytes: "SHORT_BINBYTES", opShortBinUni: "SHORT_BINUNICODE",
	opBinUnicode8: "BINUNICODE8", opBinBytes8: "BINBYTES8", opEmptySet: "EMPTY_SET",
	opAddItems: "ADDITEMS", opFrozenSet: "FROZENSET", opNewObjEx: "NEWOBJ_EX",
	opStackGlobal: "STACK_GLOBAL", opMemoize: "MEMOIZE", opFrame: "FRAME",
	opByteArray8: "BYTEARRAY8", opNextBuffer: "NEXT_BUFFER", opReadonlyBuffer: "READONLY_BUFFER",
}

func opName(op byte) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return fmt.Sprintf("0x%02x", op)
}

// storageResolver attaches file data to a storage named by a persistent id,
// checking that the file holds enough bytes for it.
type storageResolver func(st *Storage) error

// unpickler is a pickle virtual machine that only builds data. It keeps the
// whole pickle in memory (bounded by Limits.MaxPickleBytes), so every length
// field can be checked against the bytes that remain before anything is
// allocated, and each opcode allocates at most a bounded multiple of its own
// size.
type unpickler struct {
	data    []byte
	pos     int
	entry   string
	limits  Limits
	extra   map[string]bool
	resolve storageResolver

	stack []any
	marks []int
	memo  map[int64]any

	storages map[string]*Storage

	opStart int
	op      byte
}

// Unpickle reads one pickle from data and returns the value it builds. Only
// allowlisted classes are built, and nothing is ever called; a forbidden class
// gives a *ForbiddenClassError. Storages named by persistent ids come back
// without data: their tensors describe shape and layout but Float32s fails.
// Use Open to read whole files.
func Unpickle(data []byte, opts *Options) (any, error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > o.Limits.MaxPickleBytes {
		return nil, &LimitError{Limit: "MaxPickleBytes", Value: int64(len(data)), Max: o.Limits.MaxPickleBytes}
	}
	u := newUnpickler(data, "", o, nil)
	return u.run()
}

func newUnpickler(data []byte, entry string, o Options, resolve storageResolver) *unpickler {
	u := &unpickler{
		data:     data,
		entry:    entry,
		limits:   o.Limits,
		resolve:  resolve,
		memo:     make(map[int64]any),
		storages: make(map[string]*Storage),
	}
	if len(o.AllowModules) > 0 {
		u.extra = make(map[string]bool, len(o.AllowModules))
		for _, n := range o.AllowModules {
			u.extra[n] = true
		}
	}
	return u
}

// run executes opcodes until STOP. A panic inside (a bug, never expected) is
// turned into an error at this boundary.
func (u *unpickler) run() (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			result = nil
			err = u.fail(fmt.Errorf("%w: internal error: %v", ErrFormat, r))
		}
	}()
	for {
		if u.pos >= len(u.data) {
			u.opStart = u.pos
			u.op = 0
			return nil, u.fail(fmt.Errorf("%w: pickle ends without STOP", ErrTruncated))
		}
		u.opStart = u.pos
		u.op = u.data[u.pos]
		u.pos++
		if u.op == opStop {
			if len(u.stack) != 1 || len(u.marks) != 0 {
				return nil, u.fail(fmt.Errorf("%w: STOP with %d values and %d marks on the stack", ErrFormat, len(u.stack), len(u.marks)))
			}
			return u.stack[0], nil
		}
		if err := u.step(); err != nil {
			var pe *PickleError
			var fe *ForbiddenClassError
			if errors.As(err, &pe) || errors.As(err, &fe) {
				return nil, err
			}
			return nil, u.fail(err)
		}
	}
}

func (u *unpickler) fail(err error) error {
	return &PickleError{Entry: u.entry, Offset: int64(u.opStart), Op: u.op, Err: err}
}

func (u *unpickler) errf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}

// read returns the next n bytes without copying.
func (u *unpickler) read(n int) ([]byte, error) {
	if n < 0 || n > len(u.data)-u.pos {
		return nil, fmt.Errorf("%w: opcode wants %d bytes, %d remain", ErrTruncated, n, len(u.data)-u.pos)
	}
	b := u.data[u.pos : u.pos+n]
	u.pos += n
	return b, nil
}

func (u *unpickler) readLen(width int) (int, error) {
	b, err := u.read(width)
	if err != nil {
		return 0, err
	}
	var n uint64
	switch width {
	case 1:
		n = uint64(b[0])
	case 4:
		n = uint64(binary.LittleEndian.Uint32(b))
	case 8:
		n = binary.LittleEndian.Uint64(b)
	}
	if n > uint64(len(u.data)-u.pos) {
		return 0, fmt.Errorf("%w: declared length %d, %d bytes remain", ErrTruncated, n, len(u.data)-u.pos)
	}
	return int(n), nil
}

// readLine returns the bytes up to a newline, without it.
func (u *unpickler) readLine() ([]byte, error) {
	i := bytes.IndexByte(u.data[u.pos:], '\n')
	if i < 0 {
		return nil, fmt.Errorf("%w: no newline after text opcode", ErrTruncated)
	}
	b := u.data[u.pos : u.pos+i]
	u.pos += i + 1
	return b, nil
}

func (u *unpickler) push(v any) { u.stack = append(u.stack, v) }

func (u *unpickler) pop() (any, error) {
	floor := 0
	if len(u.marks) > 0 {
		floor = u.marks[len(u.marks)-1]
	}
	if len(u.stack) <= floor {
		return nil, u.errf("stack underflow")
	}
	v := u.stack[len(u.stack)-1]
	u.stack = u.stack[:len(u.stack)-1]
	return v, nil
}

func (u *unpickler) top() (any, error) {
	floor := 0
	if len(u.marks) > 0 {
		floor = u.marks[len(u.marks)-1]
	}
	if len(u.stack) <= floor {
		return nil, u.errf("stack underflow")
	}
	return u.stack[len(u.stack)-1], nil
}

// popMark returns the values above the topmost mark, removing them and it.
func (u *unpickler) popMark() ([]any, error) {
	if len(u.marks) == 0 {
		return nil, u.errf("no MARK on the stack")
	}
	m := u.marks[len(u.marks)-1]
	u.marks = u.marks[:len(u.marks)-1]
	items := make([]any, len(u.stack)-m)
	copy(items, u.stack[m:])
	clear(u.stack[m:])
	u.stack = u.stack[:m]
	return items, nil
}

func (u *unpickler) memoPut(idx int64, v any) error {
	if idx < 0 {
		return u.errf("negative memo index %d", idx)
	}
	u.memo[idx] = v
	return nil
}

func (u *unpickler) memoGet(idx int64) error {
	v, ok := u.memo[idx]
	if !ok {
		return u.errf("memo index %d not set", idx)
	}
	u.push(v)
	return nil
}

func (u *unpickler) step() error {
	switch u.op {
	case opProto:
		b, err := u.read(1)
		if err != nil {
			return err
		}
		if b[0] > 5 {
			return fmt.Errorf("%w: pickle protocol %d", ErrUnsupported, b[0])
		}
	case opFrame:
		// Framing only groups bytes for buffered readers; the whole pickle is
		// in memory, so check the length and go on.
		if _, err := u.readLen(8); err != nil {
			return err
		}
	case opMark:
		u.marks = append(u.marks, len(u.stack))
	case opPop:
		if len(u.marks) > 0 && len(u.stack) == u.marks[len(u.marks)-1] {
			_, err := u.popMark() // Python pops a mark when the stack top is one
			return err
		}
		_, err := u.pop()
		return err
	case opPopMark:
		_, err := u.popMark()
		return err
	case opDup:
		v, err := u.top()
		if err != nil {
			return err
		}
		u.push(v)

	case opNone:
		u.push(nil)
	case opNewTrue:
		u.push(true)
	case opNewFalse:
		u.push(false)
	case opBinInt:
		b, err := u.read(4)
		if err != nil {
			return err
		}
		u.push(int64(int32(binary.LittleEndian.Uint32(b))))
	case opBinInt1:
		b, err := u.read(1)
		if err != nil {
			return err
		}
		u.push(int64(b[0]))
	case opBinInt2:
		b, err := u.read(2)
		if err != nil {
			return err
		}
		u.push(int64(binary.LittleEndian.Uint16(b)))
	case opLong1, opLong4:
		w := 1
		if u.op == opLong4 {
			w = 4
		}
		n, err := u.readLen(w)
		if err != nil {
			return err
		}
		b, _ := u.read(n)
		v, err := decodeLong(b)
		if err != nil {
			return err
		}
		u.push(v)
	case opInt:
		line, err := u.readLine()
		if err != nil {
			return err
		}
		switch string(line) {
		case "01":
			u.push(true)
		case "00":
			u.push(false)
		default:
			v, err := strconv.ParseInt(string(line), 10, 64)
			if err != nil {
				return u.errf("INT %q: %v", truncate(line), err)
			}
			u.push(v)
		}
	case opLong:
		line, err := u.readLine()
		if err != nil {
			return err
		}
		s := string(bytes.TrimSuffix(line, []byte("L")))
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return u.errf("LONG %q does not fit in int64", truncate(line))
		}
		u.push(v)
	case opFloat:
		line, err := u.readLine()
		if err != nil {
			return err
		}
		v, err := strconv.ParseFloat(string(line), 64)
		if err != nil {
			return u.errf("FLOAT %q", truncate(line))
		}
		u.push(v)
	case opBinFloat:
		b, err := u.read(8)
		if err != nil {
			return err
		}
		u.push(math.Float64frombits(binary.BigEndian.Uint64(b)))

	case opShortBinUni, opBinUnicode, opBinUnicode8, opShortBinString, opBinString:
		w := 1
		switch u.op {
		case opBinUnicode, opBinString:
			w = 4
		case opBinUnicode8:
			w = 8
		}
		n, err := u.readLen(w)
		if err != nil {
			return err
		}
		b, _ := u.read(n)
		if (u.op == opShortBinUni || u.op == opBinUnicode || u.op == opBinUnicode8) && !utf8.Valid(b) {
			return u.errf("string is not valid UTF-8")
		}
		u.push(string(b))
	case opShortBinBytes, opBinBytes, opBinBytes8, opByteArray8:
		w := 1
		switch u.op {
		case opBinBytes:
			w = 4
		case opBinBytes8, opByteArray8:
			w = 8
		}
		n, err := u.readLen(w)
		if err != nil {
			return err
		}
		b, _ := u.read(n)
		u.push(bytes.Clone(b))
	case opString:
		line, err := u.readLine()
		if err != nil {
			return err
		}
		s, err := unquotePython(line)
		if err != nil {
			return u.errf("STRING: %v", err)
		}
		u.push(s)
	case opUnicode:
		line, err := u.readLine()
		if err != nil {
			return err
		}
		s, err := rawUnicodeEscape(line)
		if err != nil {
			return u.errf("UNICODE: %v", err)
		}
		u.push(s)

	case opEmptyTuple:
		u.push(Tuple{})
	case opTuple1, opTuple2, opTuple3:
		n := int(u.op-opTuple1) + 1
		t := make(Tuple, n)
		for i := n - 1; i >= 0; i-- {
			v, err := u.pop()
			if err != nil {
				return err
			}
			t[i] = v
		}
		u.push(t)
	case opTuple:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		u.push(Tuple(items))
	case opEmptyList:
		u.push(&List{})
	case opList:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		u.push(&List{Items: items})
	case opAppend:
		v, err := u.pop()
		if err != nil {
			return err
		}
		return u.appendTo([]any{v})
	case opAppends:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		return u.appendTo(items)
	case opEmptyDict:
		u.push(NewDict())
	case opDict:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		d := NewDict()
		if err := u.setItems(d, items); err != nil {
			return err
		}
		u.push(d)
	case opSetItem:
		v, err := u.pop()
		if err != nil {
			return err
		}
		k, err := u.pop()
		if err != nil {
			return err
		}
		return u.setItemsOnTop([]any{k, v})
	case opSetItems:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		return u.setItemsOnTop(items)
	case opEmptySet:
		u.push(&Set{})
	case opAddItems:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		t, err := u.top()
		if err != nil {
			return err
		}
		s, ok := t.(*Set)
		if !ok || s.Frozen {
			return u.errf("ADDITEMS on %s", TypeName(t))
		}
		return u.addToSet(s, items)
	case opFrozenSet:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		s := &Set{Frozen: true}
		if err := u.addToSet(s, items); err != nil {
			return err
		}
		u.push(s)

	case opPut:
		line, err := u.readLine()
		if err != nil {
			return err
		}
		idx, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil {
			return u.errf("PUT index %q", truncate(line))
		}
		v, err := u.top()
		if err != nil {
			return err
		}
		return u.memoPut(idx, v)
	case opBinPut, opLongBinPut:
		w := 1
		if u.op == opLongBinPut {
			w = 4
		}
		b, err := u.read(w)
		if err != nil {
			return err
		}
		idx := int64(b[0])
		if w == 4 {
			idx = int64(binary.LittleEndian.Uint32(b))
		}
		v, err := u.top()
		if err != nil {
			return err
		}
		return u.memoPut(idx, v)
	case opMemoize:
		v, err := u.top()
		if err != nil {
			return err
		}
		return u.memoPut(int64(len(u.memo)), v)
	case opGet:
		line, err := u.readLine()
		if err != nil {
			return err
		}
		idx, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil {
			return u.errf("GET index %q", truncate(line))
		}
		return u.memoGet(idx)
	case opBinGet:
		b, err := u.read(1)
		if err != nil {
			return err
		}
		return u.memoGet(int64(b[0]))
	case opLongBinGet:
		b, err := u.read(4)
		if err != nil {
			return err
		}
		return u.memoGet(int64(binary.LittleEndian.Uint32(b)))

	case opGlobal:
		g, err := u.readGlobal()
		if err != nil {
			return err
		}
		u.push(g)
	case opStackGlobal:
		nv, err := u.pop()
		if err != nil {
			return err
		}
		mv, err := u.pop()
		if err != nil {
			return err
		}
		mod, ok1 := mv.(string)
		name, ok2 := nv.(string)
		if !ok1 || !ok2 {
			return u.errf("STACK_GLOBAL wants two strings, got %s and %s", TypeName(mv), TypeName(nv))
		}
		g, err := u.global(mod, name)
		if err != nil {
			return err
		}
		u.push(g)
	case opInst:
		g, err := u.readGlobal()
		if err != nil {
			return err
		}
		args, err := u.popMark()
		if err != nil {
			return err
		}
		v, err := u.call(g, Tuple(args))
		if err != nil {
			return err
		}
		u.push(v)
	case opObj:
		items, err := u.popMark()
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return u.errf("OBJ without a class")
		}
		v, err := u.call(items[0], Tuple(items[1:]))
		if err != nil {
			return err
		}
		u.push(v)
	case opReduce:
		argv, err := u.pop()
		if err != nil {
			return err
		}
		fn, err := u.pop()
		if err != nil {
			return err
		}
		args, ok := argv.(Tuple)
		if !ok {
			return u.errf("REDUCE arguments are %s, not a tuple", TypeName(argv))
		}
		v, err := u.call(fn, args)
		if err != nil {
			return err
		}
		u.push(v)
	case opNewObj, opNewObjEx:
		var kwargs any
		if u.op == opNewObjEx {
			var err error
			if kwargs, err = u.pop(); err != nil {
				return err
			}
		}
		argv, err := u.pop()
		if err != nil {
			return err
		}
		cls, err := u.pop()
		if err != nil {
			return err
		}
		args, ok := argv.(Tuple)
		if !ok {
			return u.errf("%s arguments are %s, not a tuple", opName(u.op), TypeName(argv))
		}
		if kw, ok := kwargs.(*Dict); kwargs != nil && (!ok || kw.Len() > 0) {
			return fmt.Errorf("%w: NEWOBJ_EX with keyword arguments", ErrUnsupported)
		}
		v, err := u.newObj(cls, args)
		if err != nil {
			return err
		}
		u.push(v)
	case opBuild:
		state, err := u.pop()
		if err != nil {
			return err
		}
		obj, err := u.top()
		if err != nil {
			return err
		}
		return u.build(obj, state)
	case opBinPersID:
		pid, err := u.pop()
		if err != nil {
			return err
		}
		v, err := u.persistentLoad(pid)
		if err != nil {
			return err
		}
		u.push(v)
	case opPersID:
		return fmt.Errorf("%w: text persistent id (PERSID); torch.save writes BINPERSID", ErrUnsupported)
	case opExt1, opExt2, opExt4:
		return fmt.Errorf("%w: extension registry (%s) is not allowed", ErrUnsupported, opName(u.op))
	case opNextBuffer, opReadonlyBuffer:
		return fmt.Errorf("%w: out-of-band buffers (%s)", ErrUnsupported, opName(u.op))
	default:
		return u.errf("unknown opcode 0x%02x", u.op)
	}
	return nil
}

// global resolves module.name against the allowlist. Refusal happens here,
// by name, before anything else about the class is looked at.
// readGlobal reads the "module\nname\n" operand of GLOBAL and INST and
// resolves it against the allowlist.
func (u *unpickler) readGlobal() (any, error) {
	mod, err := u.readLine()
	if err != nil {
		return nil, err
	}
	name, err := u.readLine()
	if err != nil {
		return nil, err
	}
	return u.global(string(mod), string(name))
}

func (u *unpickler) global(module, name string) (any, error) {
	ci, ok := lookupClass(module, name, u.extra)
	if !ok {
		return nil, &ForbiddenClassError{Entry: u.entry, Module: module, Name: name, Offset: int64(u.opStart)}
	}
	if ci.kind == ckDType {
		return ci.dtype, nil
	}
	return &Global{Module: normaliseModule(module), Name: name, info: ci}, nil
}

func (u *unpickler) appendTo(items []any) error {
	t, err := u.top()
	if err != nil {
		return err
	}
	l, ok := t.(*List)
	if !ok {
		return u.errf("APPEND to %s", TypeName(t))
	}
	l.Items = append(l.Items, items...)
	return nil
}

func (u *unpickler) setItemsOnTop(items []any) error {
	t, err := u.top()
	if err != nil {
		return err
	}
	d, ok := t.(*Dict)
	if !ok {
		return u.errf("SETITEM on %s", TypeName(t))
	}
	return u.setItems(d, items)
}

func (u *unpickler) setItems(d *Dict, items []any) error {
	if len(items)%2 != 0 {
		return u.errf("odd number of values (%d) for dict items", len(items))
	}
	for i := 0; i < len(items); i += 2 {
		if err := d.set(items[i], items[i+1], u.limits.MaxDepth); err != nil {
			return u.keyErr("dict key", err)
		}
	}
	return nil
}

func (u *unpickler) addToSet(s *Set, items []any) error {
	if s.index == nil {
		s.index = make(map[string]bool, len(items))
	}
	seen := s.index
	for _, v := range items {
		k, err := hashKey(v, u.limits.MaxDepth)
		if err != nil {
			return u.keyErr("set item", err)
		}
		if !seen[k] {
			seen[k] = true
			s.Items = append(s.Items, v)
		}
	}
	return nil
}

func (u *unpickler) keyErr(what string, err error) error {
	if errors.Is(err, ErrLimit) {
		return withContext(what, err)
	}
	return u.errf("%s: %v", what, err)
}

// decodeLong decodes a little-endian two's-complement integer of LONG1/LONG4.
func decodeLong(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, nil
	}
	// Strip redundant sign bytes so that 9-byte encodings of int64 values fit.
	for len(b) > 8 {
		last, prev := b[len(b)-1], b[len(b)-2]
		if (last == 0 && prev&0x80 == 0) || (last == 0xff && prev&0x80 != 0) {
			b = b[:len(b)-1]
			continue
		}
		return 0, fmt.Errorf("%w: integer of %d bytes does not fit in int64", ErrUnsupported, len(b))
	}
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	if b[len(b)-1]&0x80 != 0 && len(b) < 8 {
		v |= ^uint64(0) << (8 * uint(len(b)))
	}
	return int64(v), nil
}

// unquotePython decodes the repr of a Python 2 str (protocol 0 STRING).
func unquotePython(line []byte) (string, error) {
	if len(line) < 2 || (line[0] != '\'' && line[0] != '"') || line[len(line)-1] != line[0] {
		return "", errors.New("string is not quoted")
	}
	s := line[1 : len(line)-1]
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(s) {
			return "", errors.New("trailing backslash")
		}
		switch s[i] {
		case '\\', '\'', '"':
			out = append(out, s[i])
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'x':
			if i+2 >= len(s) {
				return "", errors.New("short \\x escape")
			}
			v, err := strconv.ParseUint(string(s[i+1:i+3]), 16, 8)
			if err != nil {
				return "", errors.New("bad \\x escape")
			}
			out = append(out, byte(v))
			i += 2
		default:
			return "", fmt.Errorf("unsupported escape \\%c", s[i])
		}
	}
	return string(out), nil
}

// rawUnicodeEscape decodes Python's raw-unicode-escape (protocol 0 UNICODE).
func rawUnicodeEscape(line []byte) (string, error) {
	var out []rune
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' && i+1 < len(line) && (line[i+1] == 'u' || line[i+1] == 'U') {
			n := 4
			if line[i+1] == 'U' {
				n = 8
			}
			if i+2+n > len(line) {
				return "", errors.New("short \\u escape")
			}
			v, err := strconv.ParseUint(string(line[i+2:i+2+n]), 16, 32)
			if err != nil || v > utf8.MaxRune {
				return "", errors.New("bad \\u escape")
			}
			out = append(out, rune(v))
			i += 1 + n
			continue
		}
		out = append(out, rune(line[i])) // latin-1
	}
	return string(out), nil
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
