package torchfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

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

// step runs the opcode u.op through the dispatch table.
func (u *unpickler) step() error {
	if h := ops[u.op]; h != nil {
		return h(u)
	}
	return u.errf("unknown opcode 0x%02x", u.op)
}

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

// global resolves module.name against the allowlist. Refusal happens here,
// by name, before anything else about the class is looked at.
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
