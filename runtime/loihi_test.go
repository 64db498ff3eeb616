package runtime

import (
	"context"
	"testing"

	_ "github.com/neuro-go/neuro/runtime/hal/loihi"
)

// The same language-model program generates on the Loihi 2 emulator:
// greedy output is deterministic, and a seeded sample reproducible.
func TestGenerateOnLoihi(t *testing.T) {
	rt := New(nil)
	defer rt.Close()
	m := &Model{ID: "test-lm", Program: testProgram(testTok.VocabSize(), 48, 1), Tokenizer: testTok}
	if err := rt.RegisterModel(m); err != nil {
		t.Fatal(err)
	}
	d, err := rt.Deploy(context.Background(), DeploymentSpec{ID: "loihi", Model: "test-lm", Device: "loihi", MaxBatch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if d.Device.Kind != "emulator" {
		t.Fatalf("device %+v", d.Device)
	}
	req := &Request{Deployment: "loihi", Prompt: "Once upon a time", MaxTokens: 12}
	a, b := gen(t, rt, req), gen(t, rt, req)
	if a.Choices[0].Text != b.Choices[0].Text || len(a.Choices[0].Tokens) != 12 {
		t.Fatalf("greedy on loihi: %q / %q", a.Choices[0].Text, b.Choices[0].Text)
	}
	req.Sampling = Sampling{Temperature: 1, Seed: seed(3)}
	if x, y := gen(t, rt, req), gen(t, rt, req); x.Choices[0].Text != y.Choices[0].Text {
		t.Fatalf("seeded sampling on loihi differs: %q / %q", x.Choices[0].Text, y.Choices[0].Text)
	}
	if a.Stats.EnergyMicrojoule <= 0 {
		t.Fatal("no energy estimate from the Loihi cost model")
	}
	t.Logf("loihi greedy: %q, %.3g µJ", a.Choices[0].Text, a.Stats.EnergyMicrojoule)
}
