// Package lite embeds neuro-1-lite, the smallest and fastest of the
// neuro-1 models, and the one every neuromorphic emulator holds (1.7 MB of
// weights).
// Importing it links the model into package models, whose Register and
// Deploy then include it:
//
//	import _ "github.com/neuro-go/neuro/models/lite"
//
// A program that imports only this package carries only this model's
// weights.
package lite

import (
	"embed"

	"github.com/neuro-go/neuro/models"
	"github.com/neuro-go/neuro/runtime"
)

// ID is the model's id.
const ID = models.Lite

//go:embed model.pt ranges.json results.json baseline.json
var files embed.FS

func init() {
	models.Add(&models.Builtin{
		ID:        ID,
		Files:     files,
		Run:       "lite-lima-kd2xlr10wd5-lif-k32sh32-l2-lr10-wd5-bpe2k-skipmixspk-ema-s6-avg0.998",
		Baseline:  "lite-gru-2x-lr10-wd10m-bpe2k-ema-s6-gpu-avg0.998",
		Tokenizer: "neuro-bpe-2k",
		Size:      "lite",
	})
}

// Load imports, compiles and describes neuro-1-lite. Each call builds a new
// Model.
func Load() (*runtime.Model, error) { return models.Load(ID) }
