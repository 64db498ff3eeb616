// Package all links every built-in neuro-1 language model into package
// models: neuro-1-lite, neuro-1-standard and neuro-1-heavy (31 MB of
// weights). Import it for its side effect:
//
//	import _ "github.com/neuro-go/neuro/models/all"
//
// A program that needs fewer imports the models' own packages instead.
package all

import (
	_ "github.com/neuro-go/neuro/models/heavy"    // neuro-1-heavy
	_ "github.com/neuro-go/neuro/models/lite"     // neuro-1-lite
	_ "github.com/neuro-go/neuro/models/standard" // neuro-1-standard
)
