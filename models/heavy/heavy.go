// Package heavy embeds neuro-1-heavy, the largest and best of the neuro-1
// models (22 MB of weights).
// Importing it links the model into package models, whose Register and
// Deploy then include it:
//
//	import _ "github.com/neuro-go/neuro/models/heavy"
//
// A program that imports only this package carries only this model's
// weights.
package heavy

import (
	"embed"

	"github.com/neuro-go/neuro/models"
	"github.com/neuro-go/neuro/runtime"
)

// ID is the model's id.
const ID = models.Heavy

//go:embed model.pt ranges.json results.json baseline.json
var files embed.FS

func init() {
	models.Add(&models.Builtin{
		ID:        ID,
		Files:     files,
		Run:       "heavy-lima-kd",
		Baseline:  "heavy-gru",
		Tokenizer: "neuro-bpe-1k",
		Size:      "heavy",
	})
}

// Load imports, compiles and describes neuro-1-heavy. Each call builds a new
// Model.
func Load() (*runtime.Model, error) { return models.Load(ID) }
