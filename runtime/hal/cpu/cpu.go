// Package cpu is the hal backend of the float simulator (package snn), the
// default device. Import it for its side effect:
//
//	import _ "github.com/neuro-go/neuro/runtime/hal/cpu"
//
// Config option "workers" sets how many goroutines each instance's step may
// use for large dense synapse products (snn.Options.Workers); the default
// is GOMAXPROCS.
package cpu

import (
	"context"
	"fmt"
	"runtime"
	"strconv"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/snn"
)

// Name is the name the backend registers.
const Name = "cpu"

func init() {
	hal.Register(Name, func(cfg hal.Config) (hal.Device, error) {
		d := New()
		if v, ok := cfg.Options["workers"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 256 {
				return nil, fmt.Errorf("hal: cpu: option workers %q: want a whole number from 1 to 256", v)
			}
			d.Workers = n
		}
		return d, nil
	})
}

// Device is the CPU simulator.
type Device struct {
	// Workers is how many goroutines one step of an instance may use.
	Workers int
}

// New returns the CPU device with GOMAXPROCS workers.
func New() *Device { return &Device{Workers: runtime.GOMAXPROCS(0)} }

// Capabilities reports the simulator's model: no resource limits.
func (*Device) Capabilities() hal.Capabilities {
	return hal.Capabilities{Name: Name, Kind: hal.KindCPU, Vendor: "Neuro", Model: "float32 simulator", Target: compile.CPUTarget()}
}

// Load builds a simulator for the program.
func (d *Device) Load(ctx context.Context, p *compile.Program, batch int) (hal.Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := hal.CheckBatch(d.Capabilities(), batch); err != nil {
		return nil, err
	}
	if p == nil || p.Graph == nil {
		return nil, fmt.Errorf("hal: cpu: program has no graph")
	}
	dt := p.Dt
	if dt == 0 {
		dt = 1e-3
	}
	sim, err := snn.NewSimulator(p.Graph, &snn.Options{Dt: dt, Batch: batch, Workers: max(1, d.Workers)})
	if err != nil {
		return nil, fmt.Errorf("hal: cpu: %w", err)
	}
	return &Instance{sim: sim}, nil
}

// Instance wraps a simulator.
type Instance struct {
	sim    *snn.Simulator
	closed bool
}

// Simulator gives access to the underlying simulator (states, recorders).
func (in *Instance) Simulator() *snn.Simulator { return in.sim }

func (in *Instance) Batch() int             { return in.sim.Batch() }
func (in *Instance) Inputs() []snn.Port     { return in.sim.Inputs() }
func (in *Instance) Outputs() []snn.Port    { return in.sim.Outputs() }
func (in *Instance) Output(i int) []float32 { return in.sim.Output(i) }
func (in *Instance) Counters() snn.Counters { return in.sim.Counters() }

// Step advances the simulator.
func (in *Instance) Step(ctx context.Context, inputs ...[]float32) error {
	if in.closed {
		return hal.ErrClosed
	}
	return in.sim.Step(inputs...)
}

// SetActive steps only the chosen slots (hal.SlotMasker).
func (in *Instance) SetActive(active []bool) error { return in.sim.SetActive(active) }

// Reset clears one slot.
func (in *Instance) Reset(slot int) error {
	if in.closed {
		return hal.ErrClosed
	}
	return in.sim.Reset(slot)
}

// Close releases the simulator.
func (in *Instance) Close() error {
	if in.closed {
		return hal.ErrClosed
	}
	in.closed = true
	in.sim.Close()
	return nil
}
