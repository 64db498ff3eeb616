package torchfile

import (
	"fmt"
	"strings"
)

// call applies an allowed global to arguments (REDUCE, INST, OBJ). Each case
// builds a data value from the arguments; no Python or Go code named by the
// pickle runs.
func (u *unpickler) call(fn any, args Tuple) (any, error) {
	g, ok := fn.(*Global)
	if !ok {
		return nil, u.errf("cannot call %s", TypeName(fn))
	}
	switch g.info.kind {
	case ckOrderedDict, ckDict:
		d := NewDict()
		if g.info.kind == ckOrderedDict {
			d.Class = "collections.OrderedDict"
		}
		if len(args) > 1 {
			return nil, u.errf("%s takes at most 1 argument, got %d", g, len(args))
		}
		if len(args) == 1 {
			if err := u.fillDict(d, args[0]); err != nil {
				return nil, err
			}
		}
		return d, nil
	case ckList, ckTuple, ckSet, ckFrozenset:
		var items []any
		if len(args) > 1 {
			return nil, u.errf("%s takes at most 1 argument, got %d", g, len(args))
		}
		if len(args) == 1 {
			var err error
			if items, err = iterItems(args[0]); err != nil {
				return nil, u.errf("%s: %v", g, err)
			}
		}
		switch g.info.kind {
		case ckList:
			return &List{Items: append([]any(nil), items...)}, nil
		case ckTuple:
			return append(Tuple(nil), items...), nil
		}
		s := &Set{Frozen: g.info.kind == ckFrozenset}
		if err := u.addToSet(s, items); err != nil {
			return nil, err
		}
		return s, nil
	case ckBytearray, ckCodecsEncode:
		return u.bytesFrom(g, args)
	case ckReconstructor:
		// copyreg._reconstructor(cls, object, None) makes an empty instance.
		if len(args) != 3 {
			return nil, u.errf("%s takes 3 arguments, got %d", g, len(args))
		}
		if base, ok := args[1].(*Global); !ok || base.info.kind != ckObjectBase || args[2] != nil {
			return nil, fmt.Errorf("%w: copyreg._reconstructor with a base other than object", ErrUnsupported)
		}
		return u.newObj(args[0], nil)
	case ckRebuildTensorV2, ckRebuildTensor:
		return u.rebuildTensor(g, args)
	case ckRebuildParameter, ckRebuildParamState, ckParameter:
		if len(args) < 1 || len(args) > 4 {
			return nil, u.errf("%s: %d arguments", g, len(args))
		}
		t, ok := args[0].(*Tensor)
		if !ok {
			return nil, u.errf("%s: first argument is %s, not a tensor", g, TypeName(args[0]))
		}
		p := *t
		p.Parameter = true
		p.RequiresGrad = true
		if len(args) > 1 {
			rg, ok := args[1].(bool)
			if !ok {
				return nil, u.errf("%s: requires_grad is %s", g, TypeName(args[1]))
			}
			p.RequiresGrad = rg
		}
		return &p, nil
	case ckSize:
		if len(args) > 1 {
			return nil, u.errf("torch.Size takes at most 1 argument")
		}
		if len(args) == 0 {
			return Tuple{}, nil
		}
		items, err := iterItems(args[0])
		if err != nil {
			return nil, u.errf("torch.Size: %v", err)
		}
		for _, v := range items {
			if _, ok := v.(int64); !ok {
				return nil, u.errf("torch.Size of %s", TypeName(v))
			}
		}
		return append(Tuple(nil), items...), nil
	case ckDevice:
		if len(args) < 1 || len(args) > 2 {
			return nil, u.errf("torch.device: %d arguments", len(args))
		}
		if _, ok := args[0].(string); !ok {
			return nil, u.errf("torch.device of %s", TypeName(args[0]))
		}
		return &Object{Class: "torch.device", Args: args}, nil
	case ckJitList:
		if len(args) != 1 {
			return nil, u.errf("%s: %d arguments", g, len(args))
		}
		return args[0], nil
	case ckJitTypeTag:
		if len(args) != 2 {
			return nil, u.errf("%s: %d arguments", g, len(args))
		}
		return args[0], nil
	case ckObject:
		return &Object{Class: g.String(), Args: args, Fields: g.info.fields}, nil
	}
	return nil, u.errf("%s cannot be called (only instantiated with NEWOBJ)", g)
}

// newObj is cls.__new__(cls, *args) for NEWOBJ and friends.
func (u *unpickler) newObj(cls any, args Tuple) (any, error) {
	g, ok := cls.(*Global)
	if !ok {
		return nil, u.errf("NEWOBJ on %s, not a class", TypeName(cls))
	}
	switch g.info.kind {
	case ckModule:
		return &Module{Class: g.String(), Attrs: NewDict()}, nil
	case ckObject:
		return &Object{Class: g.String(), Args: args, Fields: g.info.fields}, nil
	case ckOrderedDict, ckDict, ckList, ckSet, ckFrozenset:
		// __new__ of a container ignores its arguments; items follow.
		return u.call(g, nil)
	case ckTuple, ckSize:
		return u.call(g, Tuple{append(Tuple(nil), args...)})
	case ckParameter:
		return u.call(g, args)
	}
	return nil, u.errf("%s cannot be instantiated with NEWOBJ", g)
}

// build applies BUILD's state to obj: instance attributes of a module or an
// OrderedDict, the state of a data object.
func (u *unpickler) build(obj, state any) error {
	var dictState, slotState any = state, nil
	if t, ok := state.(Tuple); ok && len(t) == 2 {
		dictState, slotState = t[0], t[1]
	}
	switch o := obj.(type) {
	case *Module:
		return u.setAttrs(o.Attrs, o.Class, dictState, slotState)
	case *Dict:
		if o.Attrs == nil {
			o.Attrs = NewDict()
		}
		return u.setAttrs(o.Attrs, TypeName(o), dictState, slotState)
	case *Object:
		o.State = state
		return nil
	}
	return u.errf("BUILD on %s", TypeName(obj))
}

func (u *unpickler) setAttrs(attrs *Dict, class string, states ...any) error {
	for _, s := range states {
		if s == nil {
			continue
		}
		d, ok := s.(*Dict)
		if !ok {
			return u.errf("BUILD state for %s is %s, not a dict", class, TypeName(s))
		}
		for _, it := range d.Items() {
			name, ok := it.Key.(string)
			if !ok {
				return u.errf("attribute name of %s is %s", class, TypeName(it.Key))
			}
			if err := attrs.set(name, it.Value, u.limits.MaxDepth); err != nil {
				return u.keyErr("attribute", err)
			}
		}
	}
	return nil
}

func (u *unpickler) fillDict(d *Dict, src any) error {
	switch s := src.(type) {
	case *Dict:
		for _, it := range s.Items() {
			if err := d.set(it.Key, it.Value, u.limits.MaxDepth); err != nil {
				return u.keyErr("dict key", err)
			}
		}
		return nil
	}
	items, err := iterItems(src)
	if err != nil {
		return u.errf("dict from %v", err)
	}
	for _, it := range items {
		pair, ok := it.(Tuple)
		if !ok {
			if l, isList := it.(*List); isList {
				pair = l.Items
			} else {
				return u.errf("dict item is %s, not a pair", TypeName(it))
			}
		}
		if len(pair) != 2 {
			return u.errf("dict item has %d values, not 2", len(pair))
		}
		if err := d.set(pair[0], pair[1], u.limits.MaxDepth); err != nil {
			return u.keyErr("dict key", err)
		}
	}
	return nil
}

func iterItems(v any) ([]any, error) {
	switch x := v.(type) {
	case Tuple:
		return x, nil
	case *List:
		return x.Items, nil
	case *Set:
		return x.Items, nil
	}
	return nil, fmt.Errorf("%s is not iterable here", TypeName(v))
}

func (u *unpickler) bytesFrom(g *Global, args Tuple) (any, error) {
	if len(args) == 0 && g.info.kind == ckBytearray {
		return []byte{}, nil
	}
	if len(args) == 1 {
		if b, ok := args[0].([]byte); ok {
			return append([]byte{}, b...), nil
		}
	}
	if len(args) == 2 {
		s, ok1 := args[0].(string)
		enc, ok2 := args[1].(string)
		if ok1 && ok2 && (strings.EqualFold(enc, "latin1") || strings.EqualFold(enc, "latin-1")) {
			b := make([]byte, 0, len(s))
			for _, r := range s {
				if r > 0xff {
					return nil, u.errf("%s: character U+%04X is not latin-1", g, r)
				}
				b = append(b, byte(r))
			}
			return b, nil
		}
	}
	return nil, u.errf("%s: unsupported arguments", g)
}
