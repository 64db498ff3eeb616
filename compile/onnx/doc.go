// Package onnx reads ONNX models of artificial neural networks into a small,
// validated Go description (Model), maps it onto compile's ANN description
// ((*Model).ANN), and imports it as the compile format "onnx" (Import), where
// compile.ConvertANN turns it into a spiking network.
//
// # Overview
//
// DecodeBytes (or Decode, from an io.Reader) returns a Model: the default-domain
// opset, graph inputs and outputs with their declared shapes, the nodes in
// topological order with their attributes, the initializer tensors, and the
// inferred shape of every value. (*Model).Run is a plain float32 reference
// implementation of the supported operators, the yardstick the conversion
// checks itself against.
//
// Supported: opsets 9 to 17 of the default domain, and the operators Add,
// AveragePool, BatchNormalization (inference form), Constant, Conv (1-D and
// 2-D), Dropout (inference: identity), Flatten, Gemm, GlobalAveragePool,
// Identity, MatMul, MaxPool, Pad (constant mode), Relu, Reshape and Transpose.
// Pad and Transpose are there because PyTorch 1.13 writes them for plain
// networks: every nn.AvgPool2d becomes a zero Pad then AveragePool, and
// nn.Linear on a 3-D input without constant folding transposes its weight
// with a Transpose node. Tensors hold FLOAT or INT64 values.
//
// Decoding goes in three steps:
//
//  1. A bounds-checked walk over the protobuf wire format (wire.go) records
//     the structure without copying tensor data, and Decode validates it:
//     opset range, operators, names, tensor sizes against their data and
//     against Options, dangling inputs, cycles. Nothing large is allocated
//     before this passes.
//  2. onnx-go v0.5.0 decodes the file (onnx.NewModel + UnmarshalBinary) into
//     a Backend of this package that records the graph onnx-go builds:
//     operators and their attributes, initializer tensors, and the weighted
//     edges that give each node's inputs in order. onnx-go's panics are
//     recovered into errors.
//  3. What onnx-go recorded is checked against the scan (operator, outputs,
//     inputs in order, attribute types, tensor sizes); any disagreement is an
//     error. Then each node's arity and attributes are validated for the
//     model's opset, and shapes are inferred.
//
// Why the scan: onnx-go v0.5.0 passes a Backend neither the opset imports nor
// node names, nor which values are graph inputs and outputs (only node ids); it
// allocates a tensor of whatever shape a graph input declares (4 TB for a
// declared [1e6, 1e6]) and panics, through gorgonia, on tensors whose data does
// not match their dims; it reads BOOL raw data as 8 bytes per value (ONNX
// stores 1) and does not read FLOAT16. Its protobuf types are internal
// (internal/onnx/ir), so the scan reads the wire format itself (about 500
// lines, field numbers of onnx.proto) rather than through them. Other onnx-go
// quirks handled: it gives input-less nodes (Constant) a made-up input named
// "<node name>/input", which Decode expects and drops; it adds one edge per
// input position, which gonum's simple graphs would collapse for Add(x, x), so
// the Backend is a multigraph; it refuses a graph with no nodes, and so does
// Decode, with a clear error.
//
// # Invariants
//
// A Model returned by Decode satisfies:
//
//   - Opset is in MinOpset..MaxOpset and every node's Op is one of
//     SupportedOps, in the default domain.
//   - Nodes are in topological order; every non-empty node input is a graph
//     input, an initializer, or an output of an earlier node; every value has
//     exactly one producer; every graph output is produced.
//   - Every node has one used output (extra outputs, such as Dropout's mask or
//     BatchNormalization's running statistics, are empty) and only the
//     attributes its operator defines, of the right type.
//   - Parameters that some opsets pass as constant inputs are also in Attrs,
//     so they read the same whatever the opset: Dropout "ratio" (float),
//     Pad "pads" (ints) and "value" (float), Reshape "shape" (ints), and a
//     Constant's value in "value" (tensor) whichever value_* attribute held it.
//     Node inputs are left as the file wrote them.
//   - BatchNormalization is in inference form (training_mode 0).
//   - Every tensor has at least one element, at most Options.MaxTensorElements,
//     and its data length matches its shape; Float32 tensors use Data, Int64
//     tensors Int64s.
//   - Shapes has an entry for every value; a dimension is -1 where it depends
//     on a symbolic input dimension (such as a dynamic batch axis), and an
//     entry is nil where an input declares no shape.
//
// Errors are prefixed "onnx: ". Typed errors say where the problem is:
// FormatError (byte offset), UnsupportedOpError (operator and node), NodeError
// (node, operator, cause), DanglingInputError, CycleError, OpsetError,
// TensorError, LimitError; they match the sentinels ErrMalformed,
// ErrUnsupported and ErrLimit through errors.Is.
package onnx
