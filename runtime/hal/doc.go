// Package hal is the hardware abstraction: the same compiled Program runs on
// the CPU simulator or on an emulated neuromorphic chip (loihi, bit for bit
// with Lava's fixed-point models; xylo, modelled on SynSense's xylosim)
// through one small interface.
//
// # Overview
//
// A Device describes itself (Capabilities: identity plus the compile.Target
// resource and cost model) and loads Programs into Instances, which step a
// batch of independent states. Backends register by name (Register) and are
// chosen by blank import:
//
//	import _ "github.com/neuro-go/neuro/runtime/hal/cpu"
//	dev, err := hal.Open("cpu", hal.Config{})
//
// Each backend also has a typed Config with a Validate method and a
// constructor, New, whose nil or zero Config means the defaults; a program
// that links the backend should use them (cpu.New(&cpu.Config{Workers:
// 4})). Open is for names and settings learnt at run time: its string
// Options are parsed by the backend's Factory into that same Config
// (ParseOptions, with the parse function each field needs), so both routes
// validate alike, and an option that is unknown or does not parse is an
// *OptionError that names it.
//
// Every backend runs the conformance suite in package haltest, as gonum's
// BLAS implementations run blas/testblas. A real chip's driver is one more
// backend of the same interface.
//
// # Invariants
//
//   - Load refuses a Program that does not fit, with an error wrapping
//     compile.ErrUnsupported that names the node and limit; it never
//     changes the program's meaning silently.
//   - Batch slots of an Instance never interact; Reset(slot) touches only
//     that slot.
//   - Step returns errors (wrong input sizes, a failed device, a closed
//     instance), never panics.
package hal
