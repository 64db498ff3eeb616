package train_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all"
)

// TestShippedFilesAreTheRuns: each model package embeds exactly the files
// of the training runs it names (its weights, ranges, record and NOTICE,
// and its baseline's record), so the training records describe what is served.
func TestShippedFilesAreTheRuns(t *testing.T) {
	names := models.Names()
	if len(names) != 3 {
		t.Fatalf("linked models %v", names)
	}
	for _, id := range names {
		b, err := models.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		pkg := filepath.Join("..", strings.TrimPrefix(id, "neuro-1-"))
		for embedded, run := range map[string]string{
			"model.pt":      filepath.Join("runs", b.Run, "model.pt"),
			"ranges.json":   filepath.Join("runs", b.Run, "ranges.json"),
			"results.json":  filepath.Join("runs", b.Run, "results.json"),
			"baseline.json": filepath.Join("runs", b.Baseline, "results.json"),
			"NOTICE":        filepath.Join("runs", b.Run, "NOTICE"),
		} {
			got, err := fs.ReadFile(b.Files, embedded)
			if errors.Is(err, fs.ErrNotExist) && embedded == "NOTICE" {
				got, err = os.ReadFile(filepath.Join(pkg, embedded)) // kept beside the weights, not embedded
			}
			if err != nil {
				t.Fatal(err)
			}
			onDisk, err := os.ReadFile(filepath.Join(pkg, embedded))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(run)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) || !bytes.Equal(onDisk, want) {
				t.Errorf("%s: %s differs from %s", id, filepath.Join(pkg, embedded), run)
			}
		}
	}
}
