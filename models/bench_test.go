package models_test

import (
	"context"
	"io/fs"
	"testing"

	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all"
	"github.com/neuro-go/neuro/runtime"
)

// BenchmarkLoad: import plus compile of each embedded model, and of all of
// them as the server does at start (target: under 2 s for all).
func BenchmarkLoad(b *testing.B) {
	for _, id := range models.Names() {
		b.Run(id, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := models.Load(id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			for _, id := range models.Names() {
				if _, err := models.Load(id); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkCompileLanguageModel: each embedded model's state_dict
// compiled as a caller's language model (runtime.Compile with
// LanguageModel, what POST /v1/compile with options.task "causal-lm"
// does), its tokenizer named, stored in memory and deleted again.
func BenchmarkCompileLanguageModel(b *testing.B) {
	for _, id := range models.Names() {
		b.Run(id, func(b *testing.B) {
			bi, err := models.Lookup(id)
			if err != nil {
				b.Fatal(err)
			}
			data, err := fs.ReadFile(bi.Files, "model.pt")
			if err != nil {
				b.Fatal(err)
			}
			rt := runtime.New(nil)
			defer rt.Close()
			if err := models.Register(rt); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				nw, err := rt.Compile(context.Background(), &runtime.CompileRequest{Format: "pytorch", Data: data, Owner: "bench",
					LanguageModel: &runtime.LanguageModel{TokenizerName: bi.Tokenizer, ChatTemplate: "neuro"}})
				if err != nil {
					b.Fatal(err)
				}
				if err := rt.DeleteNetwork(nw.ID, "bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
