// Package mock is a hal device that runs nothing: it stands in for
// another device (taking its name, kind and limits) and answers every
// step with deterministic outputs, so that a server in mock mode goes
// through the real runtime (the same models, tokenizers, context limits,
// deployments, queues and telemetry) without the cost of a network.
//
// # Overview
//
//	base, _ := hal.Open("loihi", hal.Config{})
//	dev := mock.New(base, &mock.Options{Tokens: runtime.MockTokens(tok)})
//	rt.Deploy(ctx, runtime.DeploymentSpec{ID: "lite-loihi", Model: "neuro-1-lite", Dev: dev})
//
// # Invariants
//
//   - A slot's outputs depend only on the inputs that slot has been given
//     since its last Reset: the same request gives the same text, alone or
//     in a batch.
//   - For a language model the output is a logit vector with one token
//     60 above the rest, so sampling at any temperature picks it (a
//     logit_bias can still move it, as it would a real model).
//   - With Options.Tokens, the output chosen is always one of them. The
//     device knows nothing of text: the runtime picks the tokens
//     (runtime.MockTokens: a tokenizer's whole lower-case words, never a
//     special token such as the end of the text or of a turn), so that a
//     mock completion runs to its max_tokens (or the context's end)
//     unless one of its stop sequences matches.
package mock

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/snn"
)

// Options configure a mock device. The zero value works.
type Options struct {
	// Tokens, when set, are the outputs a language model's steps choose
	// from (token ids of the vocabulary the model reads and writes);
	// without them any output may be chosen. runtime.MockTokens gives a
	// tokenizer's whole words, so that mock outputs spell text.
	Tokens []int
}

// Device is a mock of another device.
type Device struct {
	base hal.Capabilities
	// tokens are the outputs a step chooses from (Options.Tokens).
	tokens []int
}

// New returns a device that answers as base is named and limited, and
// computes nothing.
func New(base hal.Device, opts *Options) *Device {
	d := &Device{base: base.Capabilities()}
	if opts != nil {
		d.tokens = slices.Clone(opts.Tokens)
	}
	return d
}

// Capabilities are the base device's.
func (d *Device) Capabilities() hal.Capabilities { return d.base }

// Load checks the batch against the base device's limit and returns an
// instance with the program's ports.
func (d *Device) Load(ctx context.Context, p *compile.Program, batch int) (hal.Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := hal.CheckBatch(d.base, batch); err != nil {
		return nil, err
	}
	if p == nil || p.Graph == nil {
		return nil, errors.New("mock: Load: the program has no graph")
	}
	shapes, err := p.Graph.Shapes()
	if err != nil {
		return nil, fmt.Errorf("mock: %w", err)
	}
	port := func(name string) snn.Port {
		shape := shapes[name].Out
		n := 1
		for _, s := range shape {
			n *= s
		}
		return snn.Port{Name: name, Shape: shape, Size: n}
	}
	in := &instance{d: d, batch: batch, hash: make([]uint64, batch)}
	for _, name := range p.Graph.NamesOfKind("Input") {
		in.inputs = append(in.inputs, port(name))
	}
	for _, name := range p.Graph.NamesOfKind("Output") {
		pt := port(name)
		in.outputs = append(in.outputs, pt)
		in.out = append(in.out, make([]float32, batch*pt.Size))
	}
	in.resetAll()
	return in, nil
}

type instance struct {
	d               *Device
	batch           int
	inputs, outputs []snn.Port
	out             [][]float32
	hash            []uint64
	active          []bool
	counters        snn.Counters
	closed          bool
}

const seed = 0x6e6575726f // "neuro"

func (in *instance) resetAll() {
	for i := range in.hash {
		in.hash[i] = seed
	}
}

func (in *instance) Batch() int          { return in.batch }
func (in *instance) Inputs() []snn.Port  { return in.inputs }
func (in *instance) Outputs() []snn.Port { return in.outputs }
func (in *instance) Counters() snn.Counters {
	return in.counters
}

func (in *instance) Output(i int) []float32 { return in.out[i] }

func (in *instance) Reset(slot int) error {
	if in.closed {
		return hal.ErrClosed
	}
	if slot < 0 || slot >= in.batch {
		return fmt.Errorf("mock: Reset: slot %d outside [0, %d)", slot, in.batch)
	}
	in.hash[slot] = seed
	return nil
}

// mockStateMagic opens a mock slot state: then the slot's hash.
const mockStateMagic = "MOCK"

// SaveSlot appends the slot's hash (hal.Snapshotter): a mock's whole
// state, so that resumed conversations are checked on mock devices too.
func (in *instance) SaveSlot(dst []byte, slot int) ([]byte, error) {
	if in.closed {
		return dst, hal.ErrClosed
	}
	if slot < 0 || slot >= in.batch {
		return dst, fmt.Errorf("mock: SaveSlot: slot %d outside [0, %d)", slot, in.batch)
	}
	return binary.LittleEndian.AppendUint64(append(dst, mockStateMagic...), in.hash[slot]), nil
}

// LoadSlot sets the slot's hash from a saved state.
func (in *instance) LoadSlot(slot int, state []byte) error {
	if err := in.Reset(slot); err != nil {
		return err
	}
	if len(state) != len(mockStateMagic)+8 || string(state[:len(mockStateMagic)]) != mockStateMagic {
		return fmt.Errorf("%w: mock: %d bytes are not a mock slot state", hal.ErrSlotState, len(state))
	}
	in.hash[slot] = binary.LittleEndian.Uint64(state[len(mockStateMagic):])
	return nil
}

func (in *instance) SetActive(active []bool) error {
	if active != nil && len(active) != in.batch {
		return fmt.Errorf("mock: SetActive: %d flags for a batch of %d", len(active), in.batch)
	}
	in.active = active
	return nil
}

func (in *instance) Close() error {
	if in.closed {
		return hal.ErrClosed
	}
	in.closed = true
	return nil
}

// Step folds each active slot's largest input (a token's one-hot, say)
// into its hash and writes the outputs the hash chooses.
func (in *instance) Step(ctx context.Context, inputs ...[]float32) error {
	if in.closed {
		return hal.ErrClosed
	}
	if len(inputs) != len(in.inputs) {
		return fmt.Errorf("%w: mock: %d inputs, want %d", snn.ErrInputSize, len(inputs), len(in.inputs))
	}
	for i, x := range inputs {
		if len(x) != in.batch*in.inputs[i].Size {
			return fmt.Errorf("%w: mock: input %d has %d values, want %d", snn.ErrInputSize, i, len(x), in.batch*in.inputs[i].Size)
		}
	}
	in.counters.Steps++
	for slot := 0; slot < in.batch; slot++ {
		if in.active != nil && !in.active[slot] {
			continue
		}
		for i, x := range inputs {
			n := in.inputs[i].Size
			best, at := float32(0), -1
			for j, v := range x[slot*n : (slot+1)*n] {
				if v > best {
					best, at = v, j
				}
			}
			if at >= 0 {
				in.hash[slot] = mix(in.hash[slot], uint64(i)<<32|uint64(at))
			}
		}
		for o, pt := range in.outputs {
			y := in.out[o][slot*pt.Size : (slot+1)*pt.Size]
			clear(y)
			y[in.d.pick(in.hash[slot], pt.Size)] = 60
		}
	}
	return ctx.Err()
}

// pick chooses the output a hash stands for: one of the tokens that the
// output has, or without them any output.
func (d *Device) pick(h uint64, size int) int {
	if n := uint64(len(d.tokens)); n > 0 {
		for k := uint64(0); k < n; k++ {
			if id := d.tokens[(h>>8+k)%n]; id >= 0 && id < size {
				return id
			}
		}
	}
	return int((h >> 8) % uint64(size))
}

// mix is splitmix64's finaliser over (h, x): well spread for every input.
func mix(h, x uint64) uint64 {
	z := h + (x+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
