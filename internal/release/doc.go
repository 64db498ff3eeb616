// Package release checks what the module ships: its tests build the
// module zip that `go get github.com/neuro-go/neuro` downloads, with
// golang.org/x/mod/zip as the Go module proxy does, and hold it to its
// size budget. It has no API.
package release
