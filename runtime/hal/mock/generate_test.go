package mock_test

import (
	"context"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/lite"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal"
	_ "github.com/neuro-go/neuro/runtime/hal/loihi"
	"github.com/neuro-go/neuro/runtime/hal/mock"
)

// TestTextRunsToMaxTokens: mock text is for developing clients, so a
// completion on a mock device runs to max_tokens ("length"), and ends
// early only where a stop sequence matches ("stop").
func TestTextRunsToMaxTokens(t *testing.T) {
	ctx := context.Background()
	m, err := models.Load(models.Lite)
	if err != nil {
		t.Fatal(err)
	}
	rt := runtime.New(nil)
	defer rt.Close()
	if err := rt.RegisterModel(m); err != nil {
		t.Fatal(err)
	}
	for _, device := range []string{"cpu", "loihi"} {
		base, err := hal.Open(device, hal.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Deploy(ctx, runtime.DeploymentSpec{ID: "lite-" + device, Model: m.ID, Dev: mock.New(base, &mock.Options{Tokens: runtime.MockTokens(m.Tokenizer)})}); err != nil {
			t.Fatal(err)
		}
		for _, prompt := range []string{"Once upon a time", "The", "Tell me a story about a dragon"} {
			req := &runtime.Request{Deployment: "lite-" + device, Prompt: prompt, MaxTokens: 24, Sampling: runtime.Sampling{Temperature: 0}}
			res, err := rt.Generate(ctx, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			ch := res.Choices[0]
			if ch.FinishReason != "length" || res.Usage.CompletionTokens != 24 {
				t.Fatalf("%s: %q: %q, finish %q after %d tokens; want 24 tokens and length", device, prompt, ch.Text, ch.FinishReason, res.Usage.CompletionTokens)
			}
			t.Logf("%s: %q → %q", device, prompt, ch.Text)
			// A stop sequence from the middle of that text ends it there.
			words := strings.Fields(ch.Text)
			stop := " " + words[len(words)/2]
			req.Stop = []string{stop}
			cut, err := rt.Generate(ctx, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := ch.Text[:strings.Index(ch.Text, stop)]; cut.Choices[0].Text != want || cut.Choices[0].FinishReason != "stop" {
				t.Errorf("%s: %q with stop %q: %q (%s), want %q (stop)", device, prompt, stop, cut.Choices[0].Text, cut.Choices[0].FinishReason, want)
			}
		}
	}
}
