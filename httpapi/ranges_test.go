package httpapi

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/httpapi/wire"
	_ "github.com/neuro-go/neuro/models/lima"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/loihi"
)

// options.ranges calibrates a compiled network's graded values on the
// sequences sent, as examples/compile -ranges does: the stored program
// carries the ranges across a restart, so loihi sizes its graded spikes by
// them when it folds the program. Sequences that do not fit the network,
// that are not sequences, or that would take more work than the bound are
// 400 naming options.ranges.
func TestCompileRanges(t *testing.T) {
	dir := t.TempDir()
	rt := runtime.New(&runtime.Options{DataDir: dir})
	s := newTestServer(t, rt, &Options{MaxCompileBytes: 1 << 20})
	tiny := readFixture(t, "models/lima/testdata/tiny.pt")
	var plain wire.CompiledNetwork
	w := do(s, "POST", "/v1/compile", keyAlice, compileBody("pytorch", tiny, ""))
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &plain) != nil {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	vocab := plain.Network.Inputs
	seq := make([][]float32, 30)
	for i := range seq {
		seq[i] = make([]float32, vocab)
		seq[i][(5*i)%vocab] = 1
	}
	// body sends v as options.ranges, after the other options in more.
	body := func(v any, more ...string) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return compileBody("pytorch", tiny, `,"options":{`+strings.Join(append(more, `"ranges":`+string(b)), ",")+`}`)
	}
	w = do(s, "POST", "/v1/compile", keyAlice, body([][][]float32{seq, seq[:7]}))
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	var res wire.CompiledNetwork
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	rt2 := runtime.New(&runtime.Options{DataDir: dir})
	m, err := rt2.Model(res.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Program.Ranges["b0.mix"]; len(r) == 0 || slices.Max(r) <= 0 {
		t.Fatalf("the stored program's ranges lack b0.mix: %v", m.Program.Ranges)
	}
	if m, err := rt2.Model(plain.ID); err != nil {
		t.Fatal(err)
	} else if m.Program.Ranges != nil {
		t.Fatalf("a network compiled without options.ranges has ranges %v", m.Program.Ranges)
	}
	dev, err := hal.Open("loihi", hal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	li, err := dev.Load(context.Background(), m.Program, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(li.(*loihi.Instance).Report().Nodes, func(n loihi.NodeReport) bool {
		return slices.ContainsFunc(n.Notes, func(s string) bool { return strings.Contains(s, "calibrated range") })
	}) {
		t.Error("loihi sized no graded layer by the calibrated ranges")
	}

	long := make([][]float32, 600)
	for i := range long {
		long[i] = seq[0]
	}
	for _, tc := range []struct {
		name, body, code, says string
	}{
		{"vectors, not sequences", body(seq), "invalid_type", "array of sequences"},
		{"an object", compileBody("pytorch", tiny, `,"options":{"ranges":{"sequences":[]}}`), "invalid_type", "array of sequences"},
		{"no sequences", body([][][]float32{}), "invalid_value", "no sequences"},
		{"wrong width", body([][][]float32{{{1, 0, 0}}}), "invalid_value", "has 3 values"},
		{"too many sequences", body(make([][][]float32, maxRangeSequences+1)), "invalid_value", "at most"},
		{"too much work", body([][][]float32{long}, `"timesteps":4096`), "invalid_value", "updates; at most"},
	} {
		w := do(s, "POST", "/v1/compile", keyAlice, tc.body)
		checkError(t, w, 400, typeInvalidRequest, tc.code, "options.ranges")
		if !strings.Contains(w.Body.String(), tc.says) {
			t.Errorf("%s: the message does not say %q: %s", tc.name, tc.says, w.Body)
		}
	}
}
