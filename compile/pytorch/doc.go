// Package pytorch reads the files PyTorch writes: torch.save archives (the zip
// format of PyTorch 1.6 and later) holding a state_dict, a whole nn.Module or
// any other picklable value, and TorchScript archives written by
// torch.jit.save, and imports the networks they hold as the compile format
// "pytorch" (alias "torchscript"). The reading layer turns bytes into Go
// values (modules, hyperparameters, tensors); Import maps those onto a
// spiking graph: snnTorch state_dicts with no description (layer order from
// the key prefixes, layer kind from the tensors present, neurons through
// snn.SnnTorchLeaky and snn.SnnTorchSynaptic), Norse and SpikingJelly
// state_dicts described by compile.ImportOptions.Layers, spiking language
// models (an nn.Embedding, neurons, a Linear readout of the logits)
// described the same way, and artificial
// nn.Sequential networks (whole-module pickles, TorchScript, or described
// state_dicts) converted by compile.ConvertANN. State_dicts of designs that
// name their own tensors import through a registered Architecture.
//
// # Layers
//
// The reading layer (zip container, unpickler, tensors) is the internal
// package internal/torchfile: it knows nothing of networks, and nothing
// outside this package reaches its insides. This package re-exports its
// API under the same names (File, Open, Tensor, the errors, ...) as type
// aliases and the same sentinel values, and adds the importer on top.
// An importer of another framework's pickles would sit beside this one on
// the same reader.
//
// # Architectures
//
// A design whose state_dict says what it is (its keys name every tensor
// the graph needs) is taught to the importer with RegisterArchitecture,
// from the init function of the package that defines it, chosen by blank
// import, as formats are registered with compile. Import offers every
// state_dict to the registered architectures before trying snnTorch's
// layer inference; the one whose Match accepts it builds the graph from a
// *StateDict, a view that gives keys, shapes and float32 elements within
// ImportOptions.MaxBytes. The neuro-1 language models' architecture is
// registered this way by models/lima; NewStateDict lets an architecture be
// tested without a file.
//
// # Overview
//
// Open checks the zip container, unpickles data.pkl (and a TorchScript
// archive's constants.pkl) and returns a *File:
//
//	f, err := pytorch.Open(r, size, nil)
//	f.Kind()       // state_dict, module, torchscript or object
//	f.StateDict()  // []NamedTensor, in torch's state_dict order
//	f.Modules()    // the module tree: path, class, hyperparameters, tensors
//	t.Float32s()   // a tensor's elements, read from the file on demand
//
// Tensor data stays in the file until asked for: a *Tensor is a strided view
// (dtype, shape, strides, offset) of a *Storage, the zip entry
// <archive>/data/<key>. Tensors that share a storage share the *Storage.
// Float32s converts every supported dtype (float32, float64, float16,
// bfloat16, int8, uint8, int16, int32, int64, bool) and follows strides and
// offsets, so transposed and sliced views read as torch shows them.
//
// The unpickler is this package's own, not gopickle's: gopickle v0.2.0
// resolves collections.OrderedDict, builtins.object and copyreg globals before
// its FindClass hook is consulted and allocates whatever a length field
// declares before checking it, so it cannot be made to refuse every class or
// to bound allocation. Here every length is checked against the bytes that
// remain, and each global is looked up in an allowlist before anything else
// happens. Allowed globals never run: each one only shapes a Go data value.
// The allowlist is:
//
//   - containers: collections.OrderedDict, builtins.dict, list, tuple, set,
//     frozenset, bytearray; _codecs.encode (only with "latin1", how protocol 2
//     writes bytes); copyreg._reconstructor with base builtins.object
//     (protocols 0 and 1);
//   - tensors: torch._utils._rebuild_tensor_v2, _rebuild_tensor,
//     _rebuild_parameter, _rebuild_parameter_with_state,
//     torch.nn.parameter.Parameter, the storage classes torch.FloatStorage,
//     DoubleStorage, HalfStorage, BFloat16Storage, CharStorage, ByteStorage,
//     ShortStorage, IntStorage, LongStorage, BoolStorage (inside persistent
//     ids only), the dtypes torch.float32 etc., torch.Size, torch.device;
//   - TorchScript helpers torch.jit._pickle.build_{int,double,bool,tensor,
//     generic}list and restore_type_tag, and every __torch__.* class (the
//     compiled modules of the archive; their code is listed, never run);
//   - modules: torch.nn Linear, Identity, Conv1d, Conv2d, BatchNorm1d,
//     BatchNorm2d, ReLU, ReLU6, Sigmoid, Tanh, LeakyReLU, Hardtanh, Flatten,
//     Unflatten, Sequential, ModuleList, ModuleDict, Dropout, Dropout1d,
//     Dropout2d, AvgPool1d/2d, MaxPool1d/2d, AdaptiveAvgPool1d/2d; snnTorch
//     Leaky, Synaptic, RLeaky, RSynaptic, Alpha, Lapicque; Norse LIFCell,
//     LIFRecurrentCell, LIF, LIFRecurrent, LIFBoxCell, LIFBox, LICell, LI,
//     IAFCell, IAF, SequentialState and the parameter NamedTuples
//     LIFParameters, LIFBoxParameters, LIParameters, IAFParameters;
//     SpikingJelly IFNode, LIFNode, ParametricLIFNode (activation_based and
//     clock_driven) and their surrogate-gradient modules;
//   - whatever Options.AllowModules adds, built as *Module.
//
// Everything else (os.system, posix.system, builtins.eval, exec, getattr,
// subprocess.*, torch.load, numpy reconstructors, user classes) is refused by
// name with a *ForbiddenClassError carrying the module, name and opcode
// offset. Python 2 spellings (__builtin__, copy_reg) are normalised for the
// lookup and reported as written.
//
// Not read: the legacy non-zip format of PyTorch before 1.6 (ErrUnsupported),
// out-of-band pickle buffers, integers beyond int64, quantized and sparse
// tensors, and full-module pickles of snnTorch neurons (snnTorch stores a
// closure as spike_grad, which pickle itself cannot save; use a state_dict:
// its neurons carry beta, threshold, graded_spikes_factor and
// reset_mechanism_val, and Synaptic alpha, as buffers).
//
// # Invariants
//
//   - Nothing named by a file is executed; a pickle can only build the data
//     values listed in internal/torchfile/values.go.
//   - No allocation is larger than a bounded multiple of the bytes it is
//     built from, or than a limit in Limits checked before allocating:
//     declared zip sizes are checked against the file and the limits, the
//     entry count before archive/zip reads the directory, tensor element
//     counts (with overflow checks) when the pickle is read.
//   - Every tensor returned by Open reaches only elements inside its storage,
//     and every storage lies inside its zip entry; Float32s cannot index out
//     of range even if the file changes afterwards (it then fails with
//     ErrTruncated).
//   - Zip entries all live under one top-level directory, have no ".." or
//     empty segments, are not duplicated and their data regions do not
//     overlap or run past the end of the file.
//   - Errors start with "pytorch: ", wrap one of ErrForbidden, ErrLimit,
//     ErrTruncated, ErrFormat, ErrUnsupported or ErrNoStateDict, and say
//     where: zip entry, pickle opcode offset, storage key. Open and Unpickle
//     recover from internal panics and return them as errors.
//   - Storage bytes read in place from stored (uncompressed) entries are not
//     CRC-checked, to keep loading at the speed of the disk; pickles and
//     deflated entries are.
package pytorch
