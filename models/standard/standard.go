// Package standard embeds neuro-1-standard, the default neuro-1 model,
// also called neuro-1 (7.4 MB of weights).
// Importing it links the model into package models, whose Register and
// Deploy then include it:
//
//	import _ "github.com/neuro-go/neuro/models/standard"
//
// A program that imports only this package carries only this model's
// weights.
package standard

import (
	"embed"

	"github.com/neuro-go/neuro/models"
	"github.com/neuro-go/neuro/runtime"
)

// ID is the model's id.
const ID = models.Standard

//go:embed model.pt ranges.json results.json baseline.json
var files embed.FS

func init() {
	models.Add(&models.Builtin{
		ID:        ID,
		Aliases:   []string{"neuro-1"},
		Files:     files,
		Run:       "standard-lima-kd-ema-avg0.998",
		Baseline:  "standard-gru",
		Tokenizer: "neuro-bpe-1k",
		Size:      "standard",
	})
}

// Load imports, compiles and describes neuro-1-standard. Each call builds a new
// Model.
func Load() (*runtime.Model, error) { return models.Load(ID) }
