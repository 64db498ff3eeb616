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

// The handlers of the opcodes, named after Python's pickle.py (load_proto
// is loadProto), in the groups of opcodes: stack and framing, numbers,
// strings and bytes, containers, the memo, objects, and the refused ones.
// Each runs with u.op its opcode and u.pos the byte after it.

func (u *unpickler) loadProto() error {
	b, err := u.read(1)
	if err != nil {
		return err
	}
	if b[0] > 5 {
		return fmt.Errorf("%w: pickle protocol %d", ErrUnsupported, b[0])
	}
	return nil
}

func (u *unpickler) loadFrame() error {
	// Framing only groups bytes for buffered readers; the whole pickle is
	// in memory, so check the length and go on.
	_, err := u.readLen(8)
	return err
}

func (u *unpickler) loadMark() error {
	u.marks = append(u.marks, len(u.stack))
	return nil
}

func (u *unpickler) loadPop() error {
	if len(u.marks) > 0 && len(u.stack) == u.marks[len(u.marks)-1] {
		_, err := u.popMark() // Python pops a mark when the stack top is one
		return err
	}
	_, err := u.pop()
	return err
}

func (u *unpickler) loadPopMark() error {
	_, err := u.popMark()
	return err
}

func (u *unpickler) loadDup() error {
	v, err := u.top()
	if err != nil {
		return err
	}
	u.push(v)
	return nil
}

func (u *unpickler) loadNone() error  { u.push(nil); return nil }
func (u *unpickler) loadTrue() error  { u.push(true); return nil }
func (u *unpickler) loadFalse() error { u.push(false); return nil }

func (u *unpickler) loadBinInt() error {
	b, err := u.read(4)
	if err != nil {
		return err
	}
	u.push(int64(int32(binary.LittleEndian.Uint32(b))))
	return nil
}

func (u *unpickler) loadBinInt1() error {
	b, err := u.read(1)
	if err != nil {
		return err
	}
	u.push(int64(b[0]))
	return nil
}

func (u *unpickler) loadBinInt2() error {
	b, err := u.read(2)
	if err != nil {
		return err
	}
	u.push(int64(binary.LittleEndian.Uint16(b)))
	return nil
}

// loadBinLong is LONG1 and LONG4: a length of width bytes, then the
// integer's bytes.
func (u *unpickler) loadBinLong(width int) error {
	n, err := u.readLen(width)
	if err != nil {
		return err
	}
	b, _ := u.read(n)
	v, err := decodeLong(b)
	if err != nil {
		return err
	}
	u.push(v)
	return nil
}

func (u *unpickler) loadInt() error {
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
	return nil
}

func (u *unpickler) loadLong() error {
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
	return nil
}

func (u *unpickler) loadFloat() error {
	line, err := u.readLine()
	if err != nil {
		return err
	}
	v, err := strconv.ParseFloat(string(line), 64)
	if err != nil {
		return u.errf("FLOAT %q", truncate(line))
	}
	u.push(v)
	return nil
}

func (u *unpickler) loadBinFloat() error {
	b, err := u.read(8)
	if err != nil {
		return err
	}
	u.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
	return nil
}

// loadBinString is SHORT_BINSTRING and BINSTRING: Python 2 str, bytes in
// no particular encoding, read as a Go string.
func (u *unpickler) loadBinString(width int) error {
	b, err := u.readCounted(width)
	if err != nil {
		return err
	}
	u.push(string(b))
	return nil
}

// loadBinUnicode is SHORT_BINUNICODE, BINUNICODE and BINUNICODE8: UTF-8
// text.
func (u *unpickler) loadBinUnicode(width int) error {
	b, err := u.readCounted(width)
	if err != nil {
		return err
	}
	if !utf8.Valid(b) {
		return u.errf("string is not valid UTF-8")
	}
	u.push(string(b))
	return nil
}

// loadBinBytes is SHORT_BINBYTES, BINBYTES, BINBYTES8 and BYTEARRAY8.
func (u *unpickler) loadBinBytes(width int) error {
	b, err := u.readCounted(width)
	if err != nil {
		return err
	}
	u.push(bytes.Clone(b))
	return nil
}

// readCounted reads a length of width bytes and then that many bytes.
func (u *unpickler) readCounted(width int) ([]byte, error) {
	n, err := u.readLen(width)
	if err != nil {
		return nil, err
	}
	b, _ := u.read(n)
	return b, nil
}

func (u *unpickler) loadString() error {
	line, err := u.readLine()
	if err != nil {
		return err
	}
	s, err := unquotePython(line)
	if err != nil {
		return u.errf("STRING: %v", err)
	}
	u.push(s)
	return nil
}

func (u *unpickler) loadUnicode() error {
	line, err := u.readLine()
	if err != nil {
		return err
	}
	s, err := rawUnicodeEscape(line)
	if err != nil {
		return u.errf("UNICODE: %v", err)
	}
	u.push(s)
	return nil
}

func (u *unpickler) loadEmptyTuple() error { u.push(Tuple{}); return nil }

// loadTupleN is TUPLE1, TUPLE2 and TUPLE3: a tuple of the top n values.
func (u *unpickler) loadTupleN(n int) error {
	t := make(Tuple, n)
	for i := n - 1; i >= 0; i-- {
		v, err := u.pop()
		if err != nil {
			return err
		}
		t[i] = v
	}
	u.push(t)
	return nil
}

func (u *unpickler) loadTuple() error {
	items, err := u.popMark()
	if err != nil {
		return err
	}
	u.push(Tuple(items))
	return nil
}

func (u *unpickler) loadEmptyList() error { u.push(&List{}); return nil }

func (u *unpickler) loadList() error {
	items, err := u.popMark()
	if err != nil {
		return err
	}
	u.push(&List{Items: items})
	return nil
}

func (u *unpickler) loadAppend() error {
	v, err := u.pop()
	if err != nil {
		return err
	}
	return u.appendTo([]any{v})
}

func (u *unpickler) loadAppends() error {
	items, err := u.popMark()
	if err != nil {
		return err
	}
	return u.appendTo(items)
}

func (u *unpickler) loadEmptyDict() error { u.push(NewDict()); return nil }

func (u *unpickler) loadDict() error {
	items, err := u.popMark()
	if err != nil {
		return err
	}
	d := NewDict()
	if err := u.setItems(d, items); err != nil {
		return err
	}
	u.push(d)
	return nil
}

func (u *unpickler) loadSetItem() error {
	v, err := u.pop()
	if err != nil {
		return err
	}
	k, err := u.pop()
	if err != nil {
		return err
	}
	return u.setItemsOnTop([]any{k, v})
}

func (u *unpickler) loadSetItems() error {
	items, err := u.popMark()
	if err != nil {
		return err
	}
	return u.setItemsOnTop(items)
}

func (u *unpickler) loadEmptySet() error { u.push(&Set{}); return nil }

func (u *unpickler) loadAddItems() error {
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
}

func (u *unpickler) loadFrozenSet() error {
	items, err := u.popMark()
	if err != nil {
		return err
	}
	s := &Set{Frozen: true}
	if err := u.addToSet(s, items); err != nil {
		return err
	}
	u.push(s)
	return nil
}

func (u *unpickler) loadPut() error {
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
}

// loadBinPut is BINPUT and LONG_BINPUT: a memo index of width bytes.
func (u *unpickler) loadBinPut(width int) error {
	b, err := u.read(width)
	if err != nil {
		return err
	}
	idx := int64(b[0])
	if width == 4 {
		idx = int64(binary.LittleEndian.Uint32(b))
	}
	v, err := u.top()
	if err != nil {
		return err
	}
	return u.memoPut(idx, v)
}

func (u *unpickler) loadMemoize() error {
	v, err := u.top()
	if err != nil {
		return err
	}
	return u.memoPut(int64(len(u.memo)), v)
}

func (u *unpickler) loadGet() error {
	line, err := u.readLine()
	if err != nil {
		return err
	}
	idx, err := strconv.ParseInt(string(line), 10, 64)
	if err != nil {
		return u.errf("GET index %q", truncate(line))
	}
	return u.memoGet(idx)
}

func (u *unpickler) loadBinGet() error {
	b, err := u.read(1)
	if err != nil {
		return err
	}
	return u.memoGet(int64(b[0]))
}

func (u *unpickler) loadLongBinGet() error {
	b, err := u.read(4)
	if err != nil {
		return err
	}
	return u.memoGet(int64(binary.LittleEndian.Uint32(b)))
}

func (u *unpickler) loadGlobal() error {
	g, err := u.readGlobal()
	if err != nil {
		return err
	}
	u.push(g)
	return nil
}

func (u *unpickler) loadStackGlobal() error {
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
	return nil
}

func (u *unpickler) loadInst() error {
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
	return nil
}

func (u *unpickler) loadObj() error {
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
	return nil
}

func (u *unpickler) loadReduce() error {
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
	return nil
}

// loadNewObj is NEWOBJ and NEWOBJ_EX, whose keyword arguments must be
// empty.
func (u *unpickler) loadNewObj() error {
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
	return nil
}

func (u *unpickler) loadBuild() error {
	state, err := u.pop()
	if err != nil {
		return err
	}
	obj, err := u.top()
	if err != nil {
		return err
	}
	return u.build(obj, state)
}

func (u *unpickler) loadBinPersID() error {
	pid, err := u.pop()
	if err != nil {
		return err
	}
	v, err := u.persistentLoad(pid)
	if err != nil {
		return err
	}
	u.push(v)
	return nil
}

func (u *unpickler) loadPersID() error {
	return fmt.Errorf("%w: text persistent id (PERSID); torch.save writes BINPERSID", ErrUnsupported)
}

// loadExt is EXT1, EXT2 and EXT4, which name classes by a number in
// copyreg's extension registry: refused, as the registry is outside the
// allowlist.
func (u *unpickler) loadExt() error {
	return fmt.Errorf("%w: extension registry (%s) is not allowed", ErrUnsupported, opName(u.op))
}

// loadBuffer is NEXT_BUFFER and READONLY_BUFFER, whose data lies outside
// the pickle.
func (u *unpickler) loadBuffer() error {
	return fmt.Errorf("%w: out-of-band buffers (%s)", ErrUnsupported, opName(u.op))
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
