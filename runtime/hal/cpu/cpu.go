// Package cpu is the hal backend of the float simulator (package snn), the
// default device. A program that links it builds the device with New; one
// that chooses devices by name imports it for its side effect:
//
//	import _ "github.com/neuro-go/neuro/runtime/hal/cpu"
//	dev, err := hal.Open("cpu", hal.Config{Options: map[string]string{"workers": "4"}})
//
// The option "workers" is Config.Workers; "precision" (float32 or
// bfloat16) is Config.Precision.
package cpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/snn"
)

// Name is the name the backend registers.
const Name = "cpu"

func init() {
	hal.Register(Name, func(cfg hal.Config) (hal.Device, error) {
		var c Config
		if err := hal.ParseOptions(Name, cfg.Options, map[string]func(string) error{
			"workers": hal.IntOption(&c.Workers),
			"precision": func(v string) error {
				p, err := snn.ParsePrecision(v)
				c.Precision = p
				return err
			},
		}); err != nil {
			return nil, err
		}
		d, err := New(&c)
		if err != nil {
			return nil, err
		}
		return d, nil
	})
}

// maxWorkers is snn.Options.Workers' limit.
const maxWorkers = 256

// Config configures the CPU device. The zero value works.
type Config struct {
	// Workers is how many goroutines one step of an instance may use for
	// large dense synapse products (snn.Options.Workers), 1 to 256.
	// Default: GOMAXPROCS when a program is loaded, at most 256, because a
	// single sequence is what an interactive user waits on.
	Workers int
	// Precision is how the weights of dense synapse products are stored
	// (snn.Options.Weights). Default snn.Float32, exact; snn.BFloat16
	// halves the bytes each token streams and snn.Int8 quarters them, each
	// at a measured cost in quality (bench/RESULTS.md).
	Precision snn.Precision
}

// Validate reports whether c is usable; New runs it.
func (c *Config) Validate() error {
	if c.Workers < 0 || c.Workers > maxWorkers {
		return fmt.Errorf("cpu: Config.Workers is %d, must be from 1 to %d (0: GOMAXPROCS)", c.Workers, maxWorkers)
	}
	if c.Precision > snn.Int8 {
		return fmt.Errorf("cpu: Config.Precision is %v, must be float32, bfloat16 or int8", c.Precision)
	}
	return nil
}

// Device is the CPU simulator. The zero value is a device with the
// default Config.
type Device struct {
	cfg Config
}

// New returns the CPU device; nil cfg means the defaults.
func New(cfg *Config) (*Device, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &Device{cfg: c}, nil
}

// Config returns the configuration the device was built with.
func (d *Device) Config() Config { return d.cfg }

// Capabilities reports the simulator's model: no resource limits.
func (d *Device) Capabilities() hal.Capabilities {
	return hal.Capabilities{Name: Name, Kind: hal.KindCPU, Vendor: "Neuro", Model: d.cfg.Precision.String() + " simulator", Target: compile.CPUTarget()}
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
		return nil, fmt.Errorf("cpu: program has no graph")
	}
	dt := p.Dt
	if dt == 0 {
		dt = 1e-3
	}
	workers := d.cfg.Workers
	if workers == 0 {
		workers = min(runtime.GOMAXPROCS(0), maxWorkers)
	}
	sim, err := snn.NewSimulator(p.Graph, &snn.Options{Dt: dt, Batch: batch, Workers: workers, Weights: d.cfg.Precision})
	if errors.Is(err, snn.ErrTooLarge) {
		// The program does not fit this batch: the caller's to change.
		return nil, fmt.Errorf("%w: cpu: %w", compile.ErrUnsupported, err)
	}
	if err != nil {
		return nil, fmt.Errorf("cpu: %w", err)
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

// StepEvents advances the simulator with its input given as spikes
// (hal.EventStepper).
func (in *Instance) StepEvents(ctx context.Context, events [][]int32) error {
	if in.closed {
		return hal.ErrClosed
	}
	return in.sim.StepEvents(events)
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

// SaveSlot appends one slot's state to dst (hal.Snapshotter).
func (in *Instance) SaveSlot(dst []byte, slot int) ([]byte, error) {
	if in.closed {
		return dst, hal.ErrClosed
	}
	return in.sim.SaveSlot(dst, slot)
}

// LoadSlot puts a saved state into a slot (hal.Snapshotter).
func (in *Instance) LoadSlot(slot int, state []byte) error {
	if in.closed {
		return hal.ErrClosed
	}
	if err := in.sim.LoadSlot(slot, state); err != nil {
		if errors.Is(err, snn.ErrSlotState) {
			return fmt.Errorf("%w: %w", hal.ErrSlotState, err)
		}
		return err
	}
	return nil
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
