module github.com/neuro-go/neuro/models/train

go 1.26.0

require github.com/neuro-go/neuro v0.0.0

require (
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/neuro-go/neuro => ../..
