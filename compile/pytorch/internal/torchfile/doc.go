// Package torchfile is the reading layer of compile/pytorch: the hardened
// zip reader, the allowlist unpickler and the strided tensors of the files
// torch.save and torch.jit.save write. It turns bytes into Go values and
// knows nothing of networks; compile/pytorch re-exports its API under the
// same names and maps the values onto spiking graphs.
//
// It is internal so that its representation (the unpickler's opcodes, the
// allowlist, the storage resolver) can change without breaking anyone: the
// only public spelling of these types is compile/pytorch's, and the
// package documentation there (allowlist, limits, invariants) describes
// this code.
//
// # Invariants
//
// Those of compile/pytorch's reading layer: nothing named by a file is
// executed; no allocation exceeds a bounded multiple of the bytes it is
// built from or a Limits field checked first; every tensor reaches only
// elements inside its storage and every storage lies inside its zip entry;
// errors start with "pytorch: " and wrap one of the sentinel errors; Open
// and Unpickle recover internal panics into errors.
package torchfile
