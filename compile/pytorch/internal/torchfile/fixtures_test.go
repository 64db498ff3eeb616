package torchfile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// expectation is the JSON that gen_fixtures.py writes beside each fixture.
type expectation struct {
	Kind      string   `json:"kind"`
	Entries   []string `json:"entries"`
	Forbidden []string `json:"forbidden"`
	Tensors   []struct {
		Name    string    `json:"name"`
		DType   string    `json:"dtype"`
		Shape   []int64   `json:"shape"`
		Strides []int64   `json:"strides"`
		Offset  int64     `json:"offset"`
		Data    []float64 `json:"data"`
	} `json:"tensors"`
	Modules []struct {
		Path    string         `json:"path"`
		Class   string         `json:"class"`
		Hyper   map[string]any `json:"hyper"`
		Params  []string       `json:"params"`
		Buffers []string       `json:"buffers"`
	} `json:"modules"`
	CodeFiles []string `json:"code_files"`
	Shared    []string `json:"shared"`
}

func openFixture(t testing.TB, path string) (*File, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Open(strings.NewReader(string(data)), int64(len(data)), nil)
}

func TestFixtures(t *testing.T) {
	jsons, err := filepath.Glob("testdata/*.json")
	if err != nil || len(jsons) < 9 {
		t.Fatalf("fixtures missing: %v %v", jsons, err)
	}
	for _, jp := range jsons {
		name := strings.TrimSuffix(filepath.Base(jp), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(jp)
			if err != nil {
				t.Fatal(err)
			}
			var want expectation
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			f, err := openFixture(t, strings.TrimSuffix(jp, ".json")+".pt")
			if want.Kind == "error" {
				var fe *ForbiddenClassError
				if !errors.As(err, &fe) || !errors.Is(err, ErrForbidden) {
					t.Fatalf("Open: got %v, want a ForbiddenClassError", err)
				}
				if fe.Module != want.Forbidden[0] || fe.Name != want.Forbidden[1] || fe.Offset <= 0 || !strings.HasSuffix(fe.Entry, "/data.pkl") {
					t.Fatalf("refused %+v, want %v", fe, want.Forbidden)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if got := f.Kind().String(); got != want.Kind {
				t.Errorf("Kind = %s, want %s", got, want.Kind)
			}
			if wantName := strings.SplitN(want.Entries[0], "/", 2)[0]; f.ArchiveName() != wantName {
				t.Errorf("ArchiveName = %q, want %q", f.ArchiveName(), wantName)
			}
			if f.Version() != 3 {
				t.Errorf("Version = %d, want 3", f.Version())
			}
			sd, err := f.StateDict()
			if err != nil {
				t.Fatalf("StateDict: %v", err)
			}
			if len(sd) != len(want.Tensors) {
				t.Fatalf("StateDict has %d tensors, want %d", len(sd), len(want.Tensors))
			}
			byName := map[string]*Tensor{}
			for i, wt := range want.Tensors {
				nt := sd[i]
				byName[nt.Name] = nt.Tensor
				if nt.Name != wt.Name {
					t.Errorf("tensor %d is %q, want %q", i, nt.Name, wt.Name)
				}
				tt := nt.Tensor
				if string(tt.DType) != wt.DType || !slices.Equal(tt.Shape, wt.Shape) || !slices.Equal(tt.Strides, wt.Strides) || tt.Offset != wt.Offset {
					t.Errorf("%s: %s %v strides %v offset %d, want %s %v %v %d", wt.Name,
						tt.DType, tt.Shape, tt.Strides, tt.Offset, wt.DType, wt.Shape, wt.Strides, wt.Offset)
				}
				got, err := tt.Float32s()
				if err != nil {
					t.Fatalf("%s: Float32s: %v", wt.Name, err)
				}
				if len(got) != len(wt.Data) {
					t.Fatalf("%s: %d values, want %d", wt.Name, len(got), len(wt.Data))
				}
				for j := range got {
					if float64(got[j]) != wt.Data[j] {
						t.Errorf("%s[%d] = %v, want %v", wt.Name, j, got[j], wt.Data[j])
						break
					}
				}
			}
			for _, n := range want.Shared {
				if byName[n].Storage != byName[want.Shared[0]].Storage {
					t.Errorf("%s does not share the storage of %s", n, want.Shared[0])
				}
			}
			if want.CodeFiles != nil && !slices.Equal(f.CodeFiles(), want.CodeFiles) {
				t.Errorf("CodeFiles = %v, want %v", f.CodeFiles(), want.CodeFiles)
			}
			if want.Modules == nil {
				if _, err := f.Modules(); !errors.Is(err, ErrNoStateDict) {
					t.Errorf("Modules on %s: err %v", want.Kind, err)
				}
				return
			}
			mods, err := f.Modules()
			if err != nil {
				t.Fatalf("Modules: %v", err)
			}
			if len(mods) != len(want.Modules) {
				t.Fatalf("%d modules, want %d", len(mods), len(want.Modules))
			}
			for i, wm := range want.Modules {
				m := mods[i]
				if m.Path != wm.Path || m.Class != wm.Class {
					t.Errorf("module %d = %q %s, want %q %s", i, m.Path, m.Class, wm.Path, wm.Class)
				}
				if wm.Params != nil && !slices.Equal(names(m.Params), wm.Params) {
					t.Errorf("%q params %v, want %v", m.Path, names(m.Params), wm.Params)
				}
				if wm.Buffers != nil && !slices.Equal(names(m.Buffers), wm.Buffers) {
					t.Errorf("%q buffers %v, want %v", m.Path, names(m.Buffers), wm.Buffers)
				}
				for k, wv := range wm.Hyper {
					gv, ok := m.Hyperparameter(k)
					if !ok {
						t.Errorf("%q: no hyperparameter %s", m.Path, k)
						continue
					}
					gj, _ := json.Marshal(plainJSON(gv))
					wj, _ := json.Marshal(wv)
					if string(gj) != string(wj) {
						t.Errorf("%q.%s = %s, want %s", m.Path, k, gj, wj)
					}
				}
			}
		})
	}
}

func names(ts []NamedTensor) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// plainJSON turns unpickled values into what encoding/json writes like Python's json.
func plainJSON(v any) any {
	switch x := v.(type) {
	case Tuple:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainJSON(e)
		}
		return out
	case *List:
		return plainJSON(Tuple(x.Items))
	}
	return v
}
