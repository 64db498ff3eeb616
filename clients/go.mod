// The client libraries for Python, JavaScript and Rust hold no Go code.
// This file makes the folder a module of its own, so that the Go module's
// zip, which go get downloads, leaves them out.
module github.com/neuro-go/neuro/clients

go 1.26.0
