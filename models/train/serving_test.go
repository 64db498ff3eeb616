package train_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/models"
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/tokenizer"
)

// TestGeneratesPyTorchsContinuation runs the whole serving path for each
// model: the chat message through the template and tokenizer, the
// runtime's deployment on the cpu device, greedy sampling; the tokens must
// be PyTorch's greedy continuation of the same prompt (the run's
// reference.pt).
func TestGeneratesPyTorchsContinuation(t *testing.T) {
	rt := runtime.New(nil)
	defer rt.Close()
	if err := models.Register(rt); err != nil {
		t.Fatal(err)
	}
	// float32: the weights as trained. The default, int8, is measured
	// against the held-out text instead (bench/RESULTS.md): rounding every
	// weight may change a greedy choice between near-equal tokens.
	pl, err := models.Deploy(context.Background(), rt, &models.DeployOptions{Precision: "float32"})
	if err != nil {
		t.Fatal(err)
	}
	ds := pl.Deployments
	for _, id := range models.Names() {
		t.Run(id, func(t *testing.T) {
			if !slices.ContainsFunc(ds, func(d *runtime.Deployment) bool { return d.ID == id+"-cpu" }) {
				t.Fatalf("no %s-cpu deployment", id)
			}
			m, _ := rt.Model(id)
			prompt, want := reference(t, m.Card.Extra["training_run"].(string))
			// The reference prompt is one user turn rendered by the chat template.
			text := m.Tokenizer.Decode(prompt)
			user, ok := strings.CutPrefix(text, "<|user|>\n")
			user, ok2 := strings.CutSuffix(user, "<|end|>\n<|assistant|>\n")
			if !ok || !ok2 {
				t.Fatalf("reference prompt is not one user turn: %q", text)
			}
			res, err := rt.Generate(context.Background(), &runtime.Request{
				Model:     id,
				Messages:  []tokenizer.Message{{Role: "user", Content: user}},
				MaxTokens: len(want),
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.PromptTokens, prompt) {
				t.Fatalf("prompt encodes to %v, reference %v", res.PromptTokens, prompt)
			}
			got := res.Choices[0].Tokens
			if len(got) == 0 || !slices.Equal(got, want[:len(got)]) {
				t.Fatalf("generated %v\nPyTorch   %v", got, want[:min(len(want), len(got)+5)])
			}
			t.Logf("%d tokens as PyTorch (finish %s): %q", len(got), res.Choices[0].FinishReason, res.Choices[0].Text)
		})
	}
}

// reference reads the chat prompt and PyTorch's greedy continuation from
// a run's equivalence fixture.
func reference(t *testing.T, run string) (prompt, greedy []int) {
	t.Helper()
	ref, err := pytorch.ReadFloat32s("runs/"+run+"/reference.pt", nil)
	if err != nil {
		t.Fatal(err)
	}
	ints := func(name string) []int {
		out := make([]int, len(ref[name]))
		for i, x := range ref[name] {
			out[i] = int(x)
		}
		if len(out) == 0 {
			t.Fatalf("%s/reference.pt has no %q", run, name)
		}
		return out
	}
	return ints("prompt"), ints("greedy")
}
