package onnx

import "github.com/neuro-go/neuro/compile"

// Importing this package (a blank import is enough) makes the format "onnx"
// available to compile.Import.
func init() { compile.RegisterFormat("onnx", Import) }
