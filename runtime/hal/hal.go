package hal

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// Kind says what sort of device a backend drives.
type Kind string

const (
	KindCPU      Kind = "cpu"      // a simulator on the host processor
	KindEmulator Kind = "emulator" // a bit-accurate model of a chip
	KindHardware Kind = "hardware" // a real chip behind a driver
)

// Capabilities describe a device: its identity and its resource and cost
// model, which compile uses to partition and estimate.
type Capabilities struct {
	Name   string `json:"name"`
	Kind   Kind   `json:"kind"`
	Vendor string `json:"vendor,omitempty"`
	Model  string `json:"model,omitempty"`
	// MaxBatch is the most independent states one Instance may hold; 0 is
	// unlimited.
	MaxBatch int            `json:"max_batch,omitempty"`
	Target   compile.Target `json:"target"`
}

// Device runs compiled programs. Implementations must be safe for
// concurrent use.
type Device interface {
	Capabilities() Capabilities
	// Load places p on the device with room for batch independent states.
	// A program that does not fit returns an error wrapping
	// compile.ErrUnsupported that names the node and limit.
	Load(ctx context.Context, p *compile.Program, batch int) (Instance, error)
}

// Instance is a loaded program: a batch of independent states stepped
// together. An Instance is used by one goroutine at a time.
type Instance interface {
	// Batch is the number of independent states.
	Batch() int
	// Inputs and Outputs describe the Input and Output nodes in the order
	// Step takes and Output returns them.
	Inputs() []snn.Port
	Outputs() []snn.Port
	// Step advances every slot by one timestep; inputs[i] is the i-th
	// Input's values for all slots (batch × size). Wrong sizes return an
	// error wrapping snn.ErrInputSize. A failed device returns an error
	// wrapping ErrDeviceFailed.
	Step(ctx context.Context, inputs ...[]float32) error
	// Output returns the i-th Output's values after the last step (batch ×
	// size); the slice is reused by the next Step.
	Output(i int) []float32
	// Reset returns one slot to its initial state, leaving the others.
	Reset(slot int) error
	// Counters reports what all steps so far cost.
	Counters() snn.Counters
	// Close releases the device resources; later calls return ErrClosed.
	Close() error
}

// SlotMasker is an optional ability of an Instance: stepping only some of
// its slots, so that idle slots cost nothing. Callers check for it at run
// time, as net/http checks for http.Flusher.
type SlotMasker interface {
	// SetActive chooses the slots Step advances (len == Batch); the others
	// keep their state. nil activates all.
	SetActive(active []bool) error
}

// Sentinel errors.
var (
	ErrUnknownDevice = errors.New("hal: unknown device")
	ErrClosed        = errors.New("hal: instance closed")
	ErrDeviceFailed  = errors.New("hal: device failed")
)

// Config opens a device. The zero value works.
type Config struct {
	// Options are backend-specific settings.
	Options map[string]string
}

// Factory opens a device of one backend.
type Factory func(cfg Config) (Device, error)

var (
	mu       sync.RWMutex
	registry = map[string]Factory{}
)

// Register makes a backend available under name; backends call it from
// init and are chosen by blank import. Registering a name twice panics.
func Register(name string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[name]; dup || f == nil {
		panic("hal: Register called twice for " + name + " or with a nil factory")
	}
	registry[name] = f
}

// Open opens the named device.
func Open(name string, cfg Config) (Device, error) {
	mu.RLock()
	f := registry[name]
	mu.RUnlock()
	if f == nil {
		return nil, fmt.Errorf("%w %q (registered: %v)", ErrUnknownDevice, name, Devices())
	}
	return f(cfg)
}

// Devices lists the registered backend names, sorted.
func Devices() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CheckBatch validates a requested batch size against a device's limit.
func CheckBatch(c Capabilities, batch int) error {
	if batch < 1 {
		return fmt.Errorf("hal: %s: batch %d, must be at least 1", c.Name, batch)
	}
	if c.MaxBatch > 0 && batch > c.MaxBatch {
		return fmt.Errorf("%w: %s holds at most %d states, asked for %d", compile.ErrUnsupported, c.Name, c.MaxBatch, batch)
	}
	return nil
}
