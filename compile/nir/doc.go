// Package nir reads and writes the Neuromorphic Intermediate
// Representation (NIR, github.com/neuromorphs/NIR) as the Python nir package
// stores it in HDF5, and registers the reader with compile as format "nir".
//
// # Overview
//
// Read and ReadFile decode a NIR file into a validated *snn.Graph; Write
// and WriteFile encode a graph as NIR. Every NIR primitive maps onto the
// snn node of the same name, field for field (tau, r, v_leak, v_threshold,
// v_reset, tau_syn, tau_mem, w_in, weight, bias, stride, padding,
// dilation, groups, kernel_size, delay, threshold, start_dim, end_dim).
// Where the conventions differ the reader converts:
//
//   - Conv1d and Conv2d: NIR's input_shape is spatial only; snn's
//     InputShape leads with the channels, taken from the weight
//     (in_channels/groups × groups). A padding of "valid" is 0; "same" is
//     dilation·(kernel−1)/2 and needs stride 1 and an even total.
//   - Parameter arrays of element-wise nodes share one shape (NIR's rule),
//     which becomes the node's Shape; scalars broadcast.
//   - A missing v_reset is 0 and a missing w_in is 1, as in nir's reader.
//   - Nested NIRGraph nodes (snnTorch writes its recurrent layers so) are
//     flattened: nodes get qualified names such as "lif1.lif"; the nested
//     Input and Output nodes are removed and the edges through them joined.
//   - input_type/output_type and metadata are not kept (a warning says so).
//
// NIR's parameters are continuous-time, and snn integrates them exactly.
// NIR's reference importers integrate with forward Euler instead; with
// Options.Euler the reader rewrites time constants so that the simulator
// reproduces Euler's per-step decays at Options.Dt (docs/nir.md derives
// the mapping and shows snnTorch's export convention, dt = 1e-4, mapping
// onto snn.SnnTorchLeaky). WriteOptions.Euler is the inverse.
//
// snn's extensions of NIR, a subtractive reset and a refractory period,
// have no NIR field: Write refuses them (ErrUnsupported) unless
// WriteOptions.DropExtensions is set, which drops them with a warning.
//
// # HDF5
//
// Reading goes through the pure-Go github.com/scigolib/hdf5 (v0.14.1),
// which reads what h5py writes: old- and new-style groups, gzip-compressed
// chunked datasets, variable-length strings. Its shortcomings, and what
// this package does about them:
//
//   - It opens files only by name: Read copies its input to a temporary
//     file, removed as soon as the library has opened it.
//   - It loads the whole group tree on open and, for new-style groups,
//     follows hard links without noting where it has been: a cyclic file
//     overflows the stack (fatal, not recoverable) and a file of repeated
//     diamonds takes exponential time. It also sizes buffers from fields
//     of local heaps and global heaps without checking them against the
//     file (one fuzzed file asked for 145 TB). A pre-scan of our own walks
//     the link structure first with a depth and visit budget and checks
//     those sizes, so such files are refused before the library sees them.
//   - Its only public account of a dataset's type and shape is the string
//     of Dataset.Info, which the reader parses; sizes are checked against
//     the file size and Options.MaxBytes before any data is read.
//   - It may panic on malformed input; Read recovers and returns an error.
//   - Its writer cannot write scalar datasets (NIR's stride, groups and
//     start_dim are scalars) and writes only to named files. Write uses a
//     minimal HDF5 writer of this package instead (h5write.go): superblock
//     version 2, version 2 object headers with Jenkins checksums, compact
//     link storage, contiguous float32/float64/int64 datasets and
//     variable-length UTF-8 strings in global heaps. h5py and the Python nir
//     package read its files (testdata/check_exports.py); data is not
//     compressed.
//
// # Invariants
//
//   - Read returns a graph that passes snn's Validate, or an error; it
//     never panics, and every error about the file wraps ErrInvalid or
//     ErrUnsupported, naming node and field (*FieldError) where there is
//     one.
//   - No allocation exceeds what the file could hold (deflate's ratio of
//     about 1000 included) or Options.MaxBytes.
//   - Write then Read gives back the graph read: weights bit for bit, names,
//     edges and parameters unchanged (for graphs read from NIR; a graph
//     built in Go may come back with scalars broadcast to its shape and a
//     nil convolution bias as zeros).
package nir
