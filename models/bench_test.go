package models_test

import (
	"testing"

	"github.com/neuro-go/neuro/models"
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
