package hal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
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
// time, as net/http checks for http.Flusher. Every backend of this module
// has it; an Instance without it steps idle slots too, and its Counters
// include what they cost.
type SlotMasker interface {
	// SetActive chooses the slots Step advances (len == Batch); the others
	// keep their state. nil activates all.
	SetActive(active []bool) error
}

// EventStepper is an optional ability of an Instance with one input:
// stepping with that input given as spikes, per slot the indices that are
// 1 this step in increasing order (every other is 0), so that a sparse
// input costs what its spikes cost, not its size. The result is that of
// Step with the equivalent dense input. A server checks for it at run
// time and otherwise writes the dense input.
type EventStepper interface {
	StepEvents(ctx context.Context, events [][]int32) error
}

// Snapshotter is an optional ability of an Instance: saving one slot's
// state, and putting a saved state into a slot of any instance of the
// same program on the same device, which then steps on exactly as the
// saved slot would have. A server uses it to resume a conversation from
// its state instead of reading its history again; an Instance without it
// says, by not having it, that its callers must recompute.
type Snapshotter interface {
	// SaveSlot appends the slot's state to dst and returns it.
	SaveSlot(dst []byte, slot int) ([]byte, error)
	// LoadSlot sets the slot to a saved state. Bytes that are not a state
	// of this program on this device return an error wrapping
	// ErrSlotState, and leave the slot as Reset leaves it.
	LoadSlot(slot int, state []byte) error
}

// Prober is an optional ability of an Instance: reading any node's
// output after the last step (batch × the node's size), so that a
// server can show which neurons fired. The slice is the instance's own
// and changes with the next Step.
type Prober interface {
	NodeOutput(node string) []float32
}

// Sentinel errors.
var (
	ErrUnknownDevice = errors.New("hal: unknown device")
	ErrClosed        = errors.New("hal: instance closed")
	ErrDeviceFailed  = errors.New("hal: device failed")
	ErrSlotState     = errors.New("hal: not a slot state of this program")
)

// Config opens a device by name. The zero value works.
//
// It is the registry's form of a backend's settings, strings keyed by
// option name, for callers that learn them at run time (a command line, a
// request). Each backend also has a typed Config and a constructor (for
// example cpu.New), which a program that links the backend should use;
// the backend's Factory parses these strings into that typed Config.
type Config struct {
	// Options are backend-specific settings, such as "workers" for cpu.
	Options map[string]string
}

// ErrUnknownOption is wrapped by the OptionError for an option a backend
// does not take.
var ErrUnknownOption = errors.New("hal: unknown option")

// OptionError is a string option of Config that a backend could not use:
// it does not take it, or the value does not parse.
type OptionError struct {
	Device string // the backend's registered name
	Option string
	Value  string
	Err    error // ErrUnknownOption, or why the value does not parse
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("hal: %s: option %s=%q: %v", e.Device, e.Option, e.Value, e.Err)
}

func (e *OptionError) Unwrap() error { return e.Err }

// ParseOptions stores the string options of a Config into a backend's
// typed Config: parsers maps each option the backend takes to a function
// that parses a value and stores it (IntOption, FloatOption). Options are
// applied in name order, and the first that is unknown or does not parse
// is returned as an *OptionError. Range checks are left to the typed
// Config's Validate, which the backend's constructor runs.
func ParseOptions(device string, options map[string]string, parsers map[string]func(string) error) error {
	names := make([]string, 0, len(options))
	for k := range options {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := options[k]
		parse := parsers[k]
		if parse == nil {
			known := make([]string, 0, len(parsers))
			for p := range parsers {
				known = append(known, p)
			}
			sort.Strings(known)
			return &OptionError{Device: device, Option: k, Value: v, Err: fmt.Errorf("%w (%s takes %v)", ErrUnknownOption, device, known)}
		}
		if err := parse(v); err != nil {
			return &OptionError{Device: device, Option: k, Value: v, Err: err}
		}
	}
	return nil
}

// IntOption returns a parser for ParseOptions that stores a base-10
// integer in p.
func IntOption(p *int) func(string) error {
	return func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("want an integer: %w", unwrapNum(err))
		}
		*p = n
		return nil
	}
}

// FloatOption returns a parser for ParseOptions that stores a number in p.
func FloatOption(p *float64) func(string) error {
	return func(s string) error {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("want a number: %w", unwrapNum(err))
		}
		*p = x
		return nil
	}
}

// unwrapNum drops strconv's "strconv.Atoi: parsing ..." prefix, which
// repeats what OptionError says, keeping the reason (invalid syntax, value
// out of range).
func unwrapNum(err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return ne.Err
	}
	return err
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

// Open opens the named device. A name that no linked package registered
// is an error wrapping ErrUnknownDevice that names the package to import.
func Open(name string, cfg Config) (Device, error) {
	mu.RLock()
	f := registry[name]
	mu.RUnlock()
	if f == nil {
		return nil, unknownDevice(name, Devices())
	}
	return f(cfg)
}

// modulePath is where this module's backends live: a device that is not
// registered is most often one whose package the program forgot to
// import, so the error names it.
const modulePath = "github.com/neuro-go/neuro/runtime/hal/"

// backends are the names this module's backends register, each from
// its package modulePath+name.
var backends = []string{"cpu", "loihi", "xylo"}

// unknownDevice says why name is not registered and what to import.
func unknownDevice(name string, registered []string) error {
	what := fmt.Sprintf("%q: no device is registered", name)
	if len(registered) > 0 {
		what = fmt.Sprintf("%q (registered: %s)", name, strings.Join(registered, ", "))
	}
	switch {
	case slices.Contains(backends, name):
		return fmt.Errorf("%w %s; import _ %q", ErrUnknownDevice, what, modulePath+name)
	case name == "mock":
		return fmt.Errorf("%w %s; a mock is not opened by name: wrap a device with mock.New from %q", ErrUnknownDevice, what, modulePath+"mock")
	}
	last := len(backends) - 1
	return fmt.Errorf("%w %s; this module's devices are %s and %s, each linked by import _ %q, and mock.New from %q, which stands in for any of them",
		ErrUnknownDevice, what, strings.Join(backends[:last], ", "), backends[last], modulePath+"<name>", modulePath+"mock")
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
