package models_test

import (
	"context"
	"slices"
	"testing"

	"github.com/neuro-go/neuro/models"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/tokenizer"
)

// TestConversationsResumeExactly: for each neuro-1 model, greedy turns
// continued from the state saved after the turn before give the answers
// of the whole conversation read again from the start, over four turns,
// one of them cut at max_tokens; each resumed turn reads only its new
// tokens.
func TestConversationsResumeExactly(t *testing.T) {
	ctx := context.Background()
	rt := runtime.New(&runtime.Options{PrefixCacheBytes: -1})
	defer rt.Close()
	if err := models.Register(rt); err != nil {
		t.Fatal(err)
	}
	if _, err := models.Deploy(ctx, rt, nil); err != nil {
		t.Fatal(err)
	}
	turns := []struct {
		text string
		max  int
	}{{"Tell me a short story about a fox.", 40}, {"What did the fox eat?", 3}, {"Why?", 30}, {"Thank you!", 20}}
	for _, id := range models.Names() {
		t.Run(id, func(t *testing.T) {
			msgs := []tokenizer.Message{{Role: "system", Content: "You are a helpful assistant."}}
			var state *runtime.State
			cut := false
			for i, turn := range turns {
				msgs = append(msgs, tokenizer.Message{Role: "user", Content: turn.text})
				whole, err := rt.Generate(ctx, &runtime.Request{Model: id, Messages: msgs, MaxTokens: turn.max}, nil)
				if err != nil {
					t.Fatal(err)
				}
				resumed, err := rt.Generate(ctx, &runtime.Request{Model: id, Messages: msgs, MaxTokens: turn.max, Resume: state, SaveState: true}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(resumed.Choices[0].Tokens, whole.Choices[0].Tokens) {
					t.Fatalf("turn %d: resumed %q, whole %q", i, resumed.Choices[0].Text, whole.Choices[0].Text)
				}
				if state != nil && resumed.Usage.CachedTokens != len(state.Tokens) {
					t.Fatalf("turn %d: %d tokens resumed of a %d-token state", i, resumed.Usage.CachedTokens, len(state.Tokens))
				}
				cut = cut || resumed.Choices[0].FinishReason == runtime.FinishLength
				state = resumed.State
				if state == nil {
					t.Fatalf("turn %d: no state saved", i)
				}
				msgs = append(msgs, tokenizer.Message{Role: "assistant", Content: runtime.ValidText(resumed.Choices[0].Text)})
			}
			if !cut {
				t.Fatal("no turn was cut at max_tokens")
			}
			t.Logf("%s: %d bytes of state after %d tokens", id, len(state.Data), len(state.Tokens))
		})
	}
}
