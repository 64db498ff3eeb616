package snn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
)

// ErrSlotState is wrapped by LoadSlot's errors: the bytes are not a
// slot state of this simulator's network.
var ErrSlotState = errors.New("snn: not a slot state of this network")

// slotStateMagic opens every saved slot state; the last byte is the
// format's version.
const slotStateMagic = "NSS\x01"

// slotLayout is what a slot state holds, worked out once per simulator.
type slotLayout struct {
	nodes       []*simNode  // whose state is saved, in step order
	linear      []*linearOp // that track the rows they last wrote
	fingerprint uint64
}

// layout returns the simulator's slot layout. A node's state is saved
// when a slot cannot go on as it would have without it: a node with
// state of its own (neurons, delays), one that reads itself, or one read
// through a delayed edge, whose output of the last step is read in the
// next. Every other node's output is computed afresh before anything
// reads it, so LoadSlot clears it as Reset does.
func (s *Simulator) layout() *slotLayout {
	if s.slots != nil {
		return s.slots
	}
	l := &slotLayout{}
	delayed := map[*simNode]bool{}
	for _, d := range s.nodes {
		for _, src := range d.srcs {
			if src.delayed {
				delayed[src.node] = true
			}
		}
	}
	for _, n := range s.nodes {
		switch op := n.op.(type) {
		case *neuronOp, *delayOp:
			l.nodes = append(l.nodes, n)
			continue
		case *linearOp:
			l.linear = append(l.linear, op)
		}
		if n.selfBuf != nil || delayed[n] {
			l.nodes = append(l.nodes, n)
		}
	}
	l.fingerprint = fingerprint(s.opts.Dt, l.nodes)
	s.slots = l
	return l
}

// fingerprint identifies the layout of a slot state: the saved nodes, in
// order, with their sizes and kinds of state, and the time step.
func fingerprint(dt float64, nodes []*simNode) uint64 {
	h := fnv.New64a()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	put(math.Float64bits(dt))
	for _, n := range nodes {
		h.Write([]byte(n.name))
		h.Write([]byte(n.kind))
		put(uint64(n.n))
		switch op := n.op.(type) {
		case *neuronOp:
			put(uint64(len(op.syn)))
			put(uint64(len(op.refUntil)))
			put(uint64(len(op.owed)))
		case *delayOp:
			put(uint64(op.depth))
		}
	}
	return h.Sum64()
}

// SaveSlot appends the state of one batch slot to dst and returns it:
// everything the slot's next steps depend on. LoadSlot puts it into any
// slot of a simulator of the same graph and options, which then steps on
// exactly as this slot would have. The state holds the neurons' values,
// the outputs read in the next step, delay lines and refractory clocks:
// a few bytes per neuron, independent of how many steps were taken.
func (s *Simulator) SaveSlot(dst []byte, slot int) ([]byte, error) {
	if slot < 0 || slot >= s.batch {
		return dst, fmt.Errorf("snn: SaveSlot(%d): slot out of range [0, %d)", slot, s.batch)
	}
	// A fused chain's late integrators owe their last step's update,
	// which reads an output the state does not hold: apply it first.
	s.settle()
	l := s.layout()
	dst = append(dst, slotStateMagic...)
	dst = binary.LittleEndian.AppendUint64(dst, l.fingerprint)
	for _, n := range l.nodes {
		lo, hi := slot*n.n, (slot+1)*n.n
		dst = appendFloats(dst, n.out[lo:hi])
		if n.selfBuf != nil {
			dst = appendFloats(dst, n.selfBuf[lo:hi])
		}
		switch op := n.op.(type) {
		case *neuronOp:
			dst = appendFloats(dst, op.u[lo:hi])
			if op.syn != nil {
				dst = appendFloats(dst, op.syn[lo:hi])
			}
			if op.refUntil != nil {
				for _, v := range op.refUntil[lo:hi] {
					dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
				}
				dst = binary.LittleEndian.AppendUint64(dst, uint64(op.clock[slot]))
				held := op.refList[slot].held()
				dst = binary.LittleEndian.AppendUint32(dst, uint32(len(held)))
				for _, e := range held {
					dst = binary.LittleEndian.AppendUint32(dst, uint32(e.idx))
					dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(e.hold))
					dst = binary.LittleEndian.AppendUint64(dst, uint64(e.until))
				}
			}
			if op.owed != nil {
				dst = append(dst, boolByte(op.owed[slot]))
			}
		case *delayOp:
			m := op.depth * op.n
			dst = appendFloats(dst, op.ring[slot*m:(slot+1)*m])
			dst = binary.LittleEndian.AppendUint32(dst, uint32(op.pos[slot]))
		}
	}
	return dst, nil
}

// LoadSlot sets one batch slot to a state SaveSlot saved, from this
// simulator or another of the same graph and options; the other slots
// keep theirs. Bytes that are not such a state (another network's, cut
// short, out of range) return an error wrapping ErrSlotState, and the slot
// is then left as Reset leaves it.
func (s *Simulator) LoadSlot(slot int, state []byte) error {
	if slot < 0 || slot >= s.batch {
		return fmt.Errorf("snn: LoadSlot(%d): slot out of range [0, %d)", slot, s.batch)
	}
	s.resetSlot(slot)
	if err := s.loadSlot(slot, state); err != nil {
		s.resetSlot(slot)
		return err
	}
	for _, op := range s.layout().linear {
		if op.lastOK != nil {
			// Its outputs were cleared: the next step clears them all
			// again instead of the rows it wrote last.
			op.lastOK[slot] = false
		}
	}
	return nil
}

func (s *Simulator) loadSlot(slot int, state []byte) error {
	r := stateReader{b: state}
	if string(r.bytes(len(slotStateMagic))) != slotStateMagic {
		return fmt.Errorf("%w: it does not start with the slot-state header", ErrSlotState)
	}
	l := s.layout()
	if s.events.stale != nil {
		s.events.stale[slot] = true
	}
	if fp := r.u64(); r.err == nil && fp != l.fingerprint {
		return fmt.Errorf("%w: it was saved from another network (fingerprint %016x, this one %016x)", ErrSlotState, fp, l.fingerprint)
	}
	for _, n := range l.nodes {
		lo, hi := slot*n.n, (slot+1)*n.n
		r.floats(n.out[lo:hi])
		if n.selfBuf != nil {
			r.floats(n.selfBuf[lo:hi])
		}
		switch op := n.op.(type) {
		case *neuronOp:
			r.floats(op.u[lo:hi])
			if op.syn != nil {
				r.floats(op.syn[lo:hi])
			}
			if op.refUntil != nil {
				for i := lo; i < hi; i++ {
					op.refUntil[i] = int64(r.u64())
				}
				op.clock[slot] = int64(r.u64())
				k := int(r.u32())
				if k > n.n || r.err != nil {
					return r.fail(fmt.Sprintf("node %q: %d refractory entries for %d neurons", n.name, k, n.n))
				}
				q, frozen := &op.refList[slot], op.frozenOf(slot)
				for range k {
					e := refEntry{idx: int32(r.u32()), hold: math.Float32frombits(r.u32()), until: int64(r.u64())}
					if r.err != nil {
						return r.err
					}
					if e.idx < 0 || int(e.idx) >= n.n {
						return r.fail(fmt.Sprintf("node %q: refractory neuron %d of %d", n.name, e.idx, n.n))
					}
					// A step holds a neuron once, until the clock its
					// refUntil says, and lists it in the order of release.
					switch ru := op.refUntil[lo+int(e.idx)]; {
					case frozen[e.idx>>6]&(1<<(e.idx&63)) != 0:
						return r.fail(fmt.Sprintf("node %q: refractory neuron %d held twice", n.name, e.idx))
					case e.until != ru:
						return r.fail(fmt.Sprintf("node %q: refractory neuron %d held until %d, its clock says %d", n.name, e.idx, e.until, ru))
					case len(q.e) > 0 && e.until < q.e[len(q.e)-1].until:
						return r.fail(fmt.Sprintf("node %q: refractory neuron %d held until %d, listed after one held until %d",
							n.name, e.idx, e.until, q.e[len(q.e)-1].until))
					}
					frozen[e.idx>>6] |= 1 << (e.idx & 63)
					q.push(e)
				}
				for i, until := range op.refUntil[lo:hi] {
					if until > op.clock[slot] && frozen[i>>6]&(1<<(i&63)) == 0 {
						return r.fail(fmt.Sprintf("node %q: neuron %d refractory until %d, after the clock (%d), but not held", n.name, i, until, op.clock[slot]))
					}
				}
				op.stale[slot] = true
			}
			if op.owed != nil {
				op.owed[slot] = r.u8() != 0
			}
		case *delayOp:
			m := op.depth * op.n
			r.floats(op.ring[slot*m : (slot+1)*m])
			pos := int(r.u32())
			if pos >= op.depth && r.err == nil {
				return r.fail(fmt.Sprintf("node %q: delay position %d of %d", n.name, pos, op.depth))
			}
			op.pos[slot] = pos
		}
		if r.err != nil {
			return r.err
		}
		// The lists of non-zero outputs are what a step would record:
		// the indices in ascending order (fire and scanActive both).
		n.active[slot] = scanNonZero(n.active[slot][:0], n.out[lo:hi])
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d bytes left over after the state", ErrSlotState, len(r.b))
	}
	return nil
}

func appendFloats(dst []byte, xs []float32) []byte {
	for _, x := range xs {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	}
	return dst
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// stateReader reads a saved state; the first short read sets err, and
// every read after it returns zeros.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.err = fmt.Errorf("%w: it is cut short", ErrSlotState)
		r.b = nil
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *stateReader) fail(why string) error {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrSlotState, why)
	}
	return r.err
}

func (r *stateReader) u8() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *stateReader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *stateReader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// floats fills xs; a non-finite value is refused, since no step makes one.
func (r *stateReader) floats(xs []float32) {
	b := r.bytes(4 * len(xs))
	if b == nil {
		return
	}
	for i := range xs {
		v := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			r.fail(fmt.Sprintf("value %v is not finite", v))
			return
		}
		xs[i] = v
	}
}
