// Package compile turns network files into Programs that every device runs.
//
// # Overview
//
// Importers are registered formats, in the manner of image.RegisterFormat:
// a leaf package (compile/pytorch, compile/onnx, compile/nir) registers
// itself in an init function and is chosen by blank import; Import reads a
// file in a named format into an snn.Graph. Each importer also registers
// Sniffers (RegisterSniffer, Magic) for its files' first bytes, so that
// Import with no format name recognises the file (Sniff): zip archives and
// pickles are pytorch, the HDF5 signature nir, a ModelProto onnx. Spiking networks (snnTorch,
// Norse, NIR) map onto the simulator's neurons directly; artificial ReLU
// networks are described as an ANN and converted by ConvertANN (ReLU to IF
// with subtractive reset, layer-wise threshold balancing from a robust
// percentile of calibration activations).
//
// Compile applies the passes a device needs (Prune, Quantize, Partition onto
// a Target's cores) and returns a Program with a Report: counts, warnings,
// quantisation error, resource use, and energy and latency per timestep from
// the Target's cost model. Programs save to and load from one file: an
// 8-byte little-endian header length, a JSON header (metadata, the graph
// with weights by reference, a tensor table with byte offsets), raw
// little-endian float32 tensors, and a SHA-256 trailer over everything
// before it.
//
// Calibrate runs a Program's float network on sample sequences and records
// in Program.Ranges the largest value each graded neuron (a non-spiking
// neuron or a Delay) reaches; the file carries it, and fixed-point devices
// size those values from it rather than from the worst case the weights
// allow (runtime/hal/loihi's graded spikes).
//
// # Invariants
//
//   - Load verifies the checksum before trusting any byte, refuses newer
//     format versions (ErrNewerVersion) and damaged files (ErrCorrupt),
//     checks every tensor's offsets and size against the file before
//     reading it, and validates the graph and the ranges (each names a
//     graded node, one finite magnitude per element).
//   - Save then Load gives a program that runs bit-identically, and saving
//     it again gives the same bytes.
//   - A network that parses but cannot be represented or does not fit a
//     target gets an error wrapping ErrUnsupported that names the node
//     (*UnsupportedError) or the node and limit (*FitError).
//   - Compile never modifies the graph it is given.
package compile
