package release

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// budget is the most the module zip may weigh, compressed.
const budget = 40_000_000

// TestModuleZip builds the module zip of the committed tree (HEAD), as the
// module proxy does, and checks its size and that the training records,
// the corpus and the clients stay out of it (models/train and compat are
// modules of their own) while the weights of each built-in model stay in.
func TestModuleZip(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skip("not a git checkout: the module zip is built from the repository")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to build the module zip:", err)
	}
	var buf bytes.Buffer
	m := module.Version{Path: "github.com/neuro-go/neuro", Version: "v0.0.0-00010101000000-000000000000"}
	if err := modzip.CreateFromVCS(&buf, m, root, "HEAD", ""); err != nil {
		t.Fatal(err)
	}
	t.Logf("module zip: %.1f MB compressed", float64(buf.Len())/1e6)
	if buf.Len() > budget {
		t.Errorf("module zip is %d bytes, over the %d-byte budget", buf.Len(), budget)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var unpacked uint64
	for _, f := range zr.File {
		name := strings.TrimPrefix(f.Name, m.Path+"@"+m.Version+"/")
		names = append(names, name)
		unpacked += f.UncompressedSize64
		for _, out := range []string{"models/train/", "compat/", "clients/"} {
			if strings.HasPrefix(name, out) {
				t.Errorf("%s is in the module zip", name)
			}
		}
	}
	t.Logf("%d files, %.1f MB unpacked", len(names), float64(unpacked)/1e6)
	for _, in := range []string{"LICENSE", "NOTICE", "go.mod", "models/lite/model.pt", "models/standard/model.pt", "models/heavy/model.pt"} {
		if !slices.Contains(names, in) {
			t.Errorf("%s is missing from the module zip", in)
		}
	}
}
