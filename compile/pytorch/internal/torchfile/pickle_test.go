package torchfile

import (
	"encoding/binary"
	"errors"
	"testing"
)

func TestForbiddenClasses(t *testing.T) {
	cases := []struct{ mod, name string }{
		{"os", "system"}, {"posix", "system"}, {"nt", "system"}, {"subprocess", "Popen"},
		{"subprocess", "check_output"}, {"builtins", "eval"}, {"__builtin__", "eval"},
		{"builtins", "exec"}, {"__builtin__", "exec"}, {"builtins", "getattr"},
		{"builtins", "__import__"}, {"builtins", "open"}, {"torch", "load"},
		{"torch.serialization", "load"}, {"numpy.core.multiarray", "_reconstruct"},
		{"torch.nn.modules.module", "Module"}, {"collections", "defaultdict"},
		{"torch._utils", "_rebuild_qtensor"}, {"copyreg", "__newobj__"}, {"pickle", "loads"},
		{"__torch", "x"}, {"torch.nn.modules.linear", "Linear.__init__"},
	}
	for _, c := range cases {
		// As GLOBAL, as STACK_GLOBAL, and as INST: all refused at the name.
		for i, data := range [][]byte{
			newPK().global(c.mod, c.name).str("x").op(opTuple1, opReduce).stop(),
			newPK().str(c.mod).str(c.name).op(opStackGlobal, opEmptyTuple, opReduce).stop(),
			append(newPK().op(opMark).b, "i"+c.mod+"\n"+c.name+"\n."...),
		} {
			_, err := Unpickle(data, nil)
			var fe *ForbiddenClassError
			if !errors.As(err, &fe) || fe.Module != c.mod || fe.Name != c.name {
				t.Errorf("%s.%s form %d: got %v", c.mod, c.name, i, err)
				continue
			}
			wantOff := int64(2)
			if i == 1 {
				wantOff = 2 + 2*5 + int64(len(c.mod)+len(c.name))
			} else if i == 2 {
				wantOff = 3
			}
			if fe.Offset != wantOff {
				t.Errorf("%s.%s form %d: offset %d, want %d", c.mod, c.name, i, fe.Offset, wantOff)
			}
		}
	}
	// AllowModules widens the list, for modules only.
	data := newPK().global("mypkg.nets", "Net").op(opEmptyTuple, opNewObj).stop()
	if _, err := Unpickle(data, nil); !errors.Is(err, ErrForbidden) {
		t.Fatalf("off-list module: %v", err)
	}
	v, err := Unpickle(data, &Options{AllowModules: []string{"mypkg.nets.Net"}})
	if m, ok := v.(*Module); err != nil || !ok || m.Class != "mypkg.nets.Net" {
		t.Fatalf("AllowModules: %v %v", v, err)
	}
}

func TestUnpickleValues(t *testing.T) {
	// {"a": [1, -2, 3.5, None, True], "b": ("x", b"\x00\xff"), "c": frozenset({1}), "d": OrderedDict(k=big)}
	p := newPK().op(opEmptyDict, opMark)
	p.str("a").op(opEmptyList, opMark).int(1).int(-2).op(opBinFloat)
	p.b = binary.BigEndian.AppendUint64(p.b, 0x400C000000000000) // 3.5
	p.op(opNone, opNewTrue, opAppends)
	p.str("b").str("x").op(opShortBinBytes, 2, 0, 0xff, opTuple2)
	p.str("c").op(opMark).int(1).int(1).op(opFrozenSet)
	p.str("d").global("collections", "OrderedDict").op(opEmptyTuple, opReduce, opMark).str("k").int(1 << 40).op(opSetItems)
	p.op(opSetItems)
	v, err := Unpickle(p.stop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := v.(*Dict)
	a, _ := d.Get("a")
	items := a.(*List).Items
	if len(items) != 5 || items[0] != int64(1) || items[1] != int64(-2) || items[2] != 3.5 || items[3] != nil || items[4] != true {
		t.Errorf("a = %#v", items)
	}
	b, _ := d.Get("b")
	if tb := b.(Tuple); tb[0] != "x" || string(tb[1].([]byte)) != "\x00\xff" {
		t.Errorf("b = %#v", b)
	}
	c, _ := d.Get("c")
	if s := c.(*Set); !s.Frozen || len(s.Items) != 1 {
		t.Errorf("c = %#v", c)
	}
	od, _ := d.Get("d")
	if k, _ := od.(*Dict).Get("k"); od.(*Dict).Class != "collections.OrderedDict" || k != int64(1<<40) {
		t.Errorf("d = %#v", od)
	}
}

func TestMalformedPickles(t *testing.T) {
	long := func(op byte, n uint32) []byte {
		b := newPK().op(op).b
		return binary.LittleEndian.AppendUint32(b, n)
	}
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"no STOP", newPK().op(opNone).b, ErrTruncated},
		{"huge BINUNICODE", long(opBinUnicode, 0xffffffff), ErrTruncated},
		{"huge BINBYTES", long(opBinBytes, 0xfffffff0), ErrTruncated},
		{"huge FRAME", append(newPK().op(opFrame).b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), ErrTruncated},
		{"stack underflow", newPK().op(opReduce, opStop).b, ErrFormat},
		{"pop below mark", newPK().op(opNone, opMark, opTuple1, opStop).b, ErrFormat},
		{"two values at STOP", newPK().op(opNone, opNone).stop(), ErrFormat},
		{"memo miss", newPK().op(opBinGet, 9).stop(), ErrFormat},
		{"unknown opcode", newPK().op(0xff).stop(), ErrFormat},
		{"protocol 6", []byte{opProto, 6, opNone, opStop}, ErrUnsupported},
		{"ext registry", newPK().op(opExt1, 1).stop(), ErrUnsupported},
		{"out-of-band buffer", newPK().op(opNextBuffer).stop(), ErrUnsupported},
		{"int too large", newPK().op(opLong1, 10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10).stop(), ErrUnsupported},
		{"unhashable key", newPK().op(opEmptyDict, opEmptyList, opNone, opSetItem).stop(), ErrFormat},
		{"append to dict", newPK().op(opEmptyDict, opNone, opAppend).stop(), ErrFormat},
		{"invalid utf-8", newPK().op(opShortBinUni, 1, 0xff).stop(), ErrFormat},
		{"module called with REDUCE", newPK().global("torch.nn.modules.linear", "Linear").op(opEmptyTuple, opReduce).stop(), ErrFormat},
		{"storage type called", newPK().global("torch", "FloatStorage").op(opEmptyTuple, opReduce).stop(), ErrFormat},
		{"persid not storage", newPK().str("x").op(opBinPersID).stop(), ErrFormat},
		{"tensor on non-storage", newPK().global("torch._utils", "_rebuild_tensor_v2").op(opMark, opNone).int(0).ints(1).ints(1).op(opNewFalse, opNone, opTuple, opReduce).stop(), ErrFormat},
		{"dims over limit", newPK().tensor("0", 1, 0, make([]int64, 65), make([]int64, 65)).stop(), ErrLimit},
		{"storage retyped", newPK().op(opMark).tensor("0", 4, 0, []int64{1}, []int64{1}).tensor("0", 5, 0, []int64{1}, []int64{1}).op(opTuple).stop(), ErrFormat},
		{"deep tuple key", func() []byte {
			p := newPK().op(opEmptyDict).op(opNone)
			for range 2000 {
				p.op(opTuple1)
			}
			return p.op(opNone, opSetItem).stop()
		}(), ErrLimit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Unpickle(c.data, nil)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			var pe *PickleError
			if !errors.As(err, &pe) {
				t.Fatalf("%v is not a *PickleError", err)
			}
		})
	}
}

func TestModuleCycle(t *testing.T) {
	// A Sequential whose _modules holds itself, built through the memo.
	p := newPK().global("torch.nn.modules.container", "Sequential").op(opEmptyTuple, opNewObj, opBinPut, 0)
	p.op(opEmptyDict).str("_modules").op(opEmptyDict).str("0").op(opBinGet, 0, opSetItem, opSetItem, opBuild)
	pkl := p.stop()
	f, err := openBytes(buildZip(t, zentry{"archive/data.pkl", pkl}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind() != KindModule {
		t.Fatalf("Kind = %v", f.Kind())
	}
	if _, err := f.Modules(); !errors.Is(err, ErrFormat) {
		t.Fatalf("Modules on a cycle: %v", err)
	}
	if _, err := f.StateDict(); !errors.Is(err, ErrFormat) {
		t.Fatalf("StateDict on a cycle: %v", err)
	}
}

func TestHalfFloat(t *testing.T) {
	for _, c := range []struct {
		h uint16
		f float32
	}{{0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0001, 5.960464477539063e-08}, {0x8000, 0}, {0x3555, 0.33325195}} {
		if got := halfToFloat32(c.h); got != c.f {
			t.Errorf("half %#04x = %v, want %v", c.h, got, c.f)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (&Options{Limits: Limits{MaxDepth: -1}}).Validate(); err == nil {
		t.Fatal("negative limit accepted")
	}
	if _, err := Unpickle(newPK().op(opNone).stop(), &Options{Limits: Limits{MaxEntries: -1}}); err == nil {
		t.Fatal("Unpickle accepted invalid options")
	}
}

func TestSharedModulesBounded(t *testing.T) {
	// 60 levels, each module holding the next one twice: 2^60 paths.
	p := newPK()
	for i := 0; i < 60; i++ {
		p.global("torch.nn.modules.container", "Sequential").op(opEmptyTuple, opNewObj)
		p.op(opEmptyDict).str("_modules").op(opEmptyDict)
		if i > 0 {
			p.str("a").op(opBinGet, byte(i-1), opSetItem).str("b").op(opBinGet, byte(i-1), opSetItem)
		}
		p.op(opSetItem, opBuild, opBinPut, byte(i))
		if i < 59 {
			p.op(opPop)
		}
	}
	f, err := openBytes(buildZip(t, zentry{"archive/data.pkl", p.stop()}), nil)
	if err != nil {
		t.Fatal(err)
	}
	mods, err := f.Modules()
	if err != nil || len(mods) != 60 {
		t.Fatalf("Modules: %d, %v", len(mods), err)
	}
	if _, err := f.StateDict(); !errors.Is(err, ErrLimit) {
		t.Fatalf("StateDict over 2^60 paths: %v", err)
	}
}
