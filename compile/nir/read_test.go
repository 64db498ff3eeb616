package nir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/snn"
)

// expected is testdata/expected.json, written by gen_fixtures.py: per
// fixture, the node kinds and edges after flattening nested graphs.
type expected map[string]struct {
	Kinds map[string]string `json:"kinds"`
	Edges [][2]string       `json:"edges"`
}

func loadExpected(t *testing.T) expected {
	t.Helper()
	b, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func fixtures(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.nir")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	return files
}

func fixtureName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".nir")
}

func edgesOf(g *snn.Graph) [][2]string {
	var out [][2]string
	for _, e := range g.Edges {
		out = append(out, [2]string{e.From, e.To})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i][0] < out[j][0] || out[i][0] == out[j][0] && out[i][1] < out[j][1]
	})
	return slices.Compact(out)
}

func TestReadFixtures(t *testing.T) {
	want := loadExpected(t)
	seen := map[snn.Kind]bool{}
	for _, path := range fixtures(t) {
		name := fixtureName(path)
		t.Run(name, func(t *testing.T) {
			g, err := ReadFile(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			kinds := map[string]string{}
			for n, node := range g.Nodes {
				kinds[n] = string(node.Kind())
				seen[node.Kind()] = true
			}
			if !mapsEqual(kinds, w.Kinds) {
				t.Errorf("kinds:\n got %v\nwant %v", kinds, w.Kinds)
			}
			if got := edgesOf(g); !slices.Equal(got, w.Edges) {
				t.Errorf("edges:\n got %v\nwant %v", got, w.Edges)
			}
		})
	}
	for _, k := range snn.Kinds {
		if !seen[k] {
			t.Errorf("no fixture has a %s node", k)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
