package runtime

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/tokenizer"
)

var userTurns = []string{
	"Tell me about the sea.",
	"And the mountains?",
	"Which would you visit first, and why?",
	"Thank you.",
}

// chatTurn asks one turn of a conversation: msgs whole, or resumed
// from state; it returns the answer and the result.
func chatTurn(t *testing.T, rt *Runtime, msgs []tokenizer.Message, state *State, maxTokens int, stop []string) *Result {
	t.Helper()
	req := &Request{Model: "test-lm", Messages: msgs, MaxTokens: maxTokens, Stop: stop, Resume: state, SaveState: state != nil || len(msgs) == 1, Principal: "alice"}
	return gen(t, rt, req)
}

// TestConversationResumes: a conversation continued from each turn's
// saved state gives, token for token, the answers of the same
// conversation sent whole to a runtime without the cache, and reads only
// each turn's new tokens. Turns cut at max_tokens or at a stop sequence
// (whose text ends before the tokens read) are among them.
func TestConversationResumes(t *testing.T) {
	whole := newTestRuntime(t, 2, &Options{PrefixCacheBytes: -1})
	resumed := newTestRuntime(t, 2, &Options{PrefixCacheBytes: -1})
	limits := []int{12, 5, 12, 8}
	stops := make([][]string, len(userTurns))
	var msgs []tokenizer.Message
	var state *State
	for turn, text := range userTurns {
		msgs = append(msgs, tokenizer.Message{Role: "user", Content: text})
		if turn == 2 {
			// A stop sequence inside the answer: its text ends before
			// the tokens read, and the turn closes from the prompt.
			probe := gen(t, whole, &Request{Model: "test-lm", Messages: msgs, MaxTokens: limits[turn]})
			if len(probe.Choices[0].Text) < 6 {
				t.Fatalf("probe answer %q too short", probe.Choices[0].Text)
			}
			stops[turn] = []string{probe.Choices[0].Text[3:5]}
		}
		want := gen(t, whole, &Request{Model: "test-lm", Messages: msgs, MaxTokens: limits[turn], Stop: stops[turn]})
		got := gen(t, resumed, &Request{Model: "test-lm", Messages: msgs, MaxTokens: limits[turn], Stop: stops[turn], Resume: state, SaveState: true})
		if !slices.Equal(got.Choices[0].Tokens, want.Choices[0].Tokens) || got.Choices[0].Text != want.Choices[0].Text {
			t.Fatalf("turn %d: resumed %q, whole %q", turn, got.Choices[0].Text, want.Choices[0].Text)
		}
		if stops[turn] != nil && got.Choices[0].FinishReason != FinishStop {
			t.Fatalf("turn %d: finished %q, want stop", turn, got.Choices[0].FinishReason)
		}
		if got.Usage.PromptTokens != want.Usage.PromptTokens {
			t.Fatalf("turn %d: %d prompt tokens resumed, %d whole", turn, got.Usage.PromptTokens, want.Usage.PromptTokens)
		}
		if turn > 0 {
			if got.Usage.CachedTokens != len(state.Tokens) || got.Usage.CachedTokens == 0 {
				t.Fatalf("turn %d: %d tokens resumed, the state holds %d", turn, got.Usage.CachedTokens, len(state.Tokens))
			}
			if got.Stats.Timesteps >= want.Stats.Timesteps {
				t.Fatalf("turn %d: resuming took %d timesteps, reading it whole %d", turn, got.Stats.Timesteps, want.Stats.Timesteps)
			}
		}
		msgs = append(msgs, tokenizer.Message{Role: "assistant", Content: ValidText(got.Choices[0].Text)})
		state = got.State
		closed, _ := testTok.EncodeChat(msgs, false)
		if state == nil || !slices.Equal(state.Tokens, closed) {
			t.Fatalf("turn %d: state %v, want the closed conversation's %d tokens", turn, state != nil, len(closed))
		}
		if !bytes.Equal(state.Data, stateAfter(t, resumed, closed)) {
			t.Fatalf("turn %d: the saved state is not that of reading the closed conversation", turn)
		}
	}
}

// stateAfter is the state of the runtime's test model after reading
// tokens from the start, one tick each, as a deployment reads them.
func stateAfter(t *testing.T, rt *Runtime, tokens []int) []byte {
	t.Helper()
	m, err := rt.Model("test-lm")
	if err != nil {
		t.Fatal(err)
	}
	dev, err := cpu.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in, err := dev.Load(ctx, m.Program, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	x := make([]float32, in.Inputs()[0].Size)
	pulse := m.Program.Input.Kind == compile.InputOneHotPulse
	for _, tok := range tokens {
		for step := range m.Program.Timesteps {
			x[tok] = 1
			if pulse && step > 0 {
				x[tok] = 0
			}
			if err := in.Step(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		x[tok] = 0
	}
	data, err := in.(hal.Snapshotter).SaveSlot(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPrefixCacheSameResult: chat completions of a growing conversation
// resume from the cache on every turn after the first, with the same
// answers as without the cache; another principal's requests never do.
func TestPrefixCacheSameResult(t *testing.T) {
	off := newTestRuntime(t, 2, &Options{PrefixCacheBytes: -1})
	on := newTestRuntime(t, 2, nil)
	var msgs []tokenizer.Message
	for turn, text := range userTurns {
		msgs = append(msgs, tokenizer.Message{Role: "user", Content: text})
		want := gen(t, off, &Request{Model: "test-lm", Messages: msgs, MaxTokens: 10})
		got := gen(t, on, &Request{Model: "test-lm", Messages: msgs, MaxTokens: 10, Principal: "alice"})
		if !slices.Equal(got.Choices[0].Tokens, want.Choices[0].Tokens) {
			t.Fatalf("turn %d: cached %q, uncached %q", turn, got.Choices[0].Text, want.Choices[0].Text)
		}
		if want.Usage.CachedTokens != 0 {
			t.Fatalf("turn %d: %d cached tokens with the cache off", turn, want.Usage.CachedTokens)
		}
		if turn > 0 && got.Usage.CachedTokens == 0 {
			t.Fatalf("turn %d: nothing resumed", turn)
		}
		other := gen(t, on, &Request{Model: "test-lm", Messages: msgs, MaxTokens: 10, Principal: "bob"})
		if other.Usage.CachedTokens != 0 && turn == 0 {
			t.Fatalf("turn %d: another principal resumed %d tokens of alice's", turn, other.Usage.CachedTokens)
		}
		msgs = append(msgs, tokenizer.Message{Role: "assistant", Content: ValidText(got.Choices[0].Text)})
	}
	st := on.CacheStats()
	if st.Hits == 0 || st.ResumedTokens == 0 || st.Bytes == 0 || st.Bytes > st.Budget || st.Entries == 0 {
		t.Fatalf("cache stats %+v", st)
	}
	// NoCache neither reads nor writes it.
	res := gen(t, on, &Request{Model: "test-lm", Messages: msgs, MaxTokens: 4, Principal: "alice", NoCache: true})
	if res.Usage.CachedTokens != 0 {
		t.Fatalf("NoCache resumed %d tokens", res.Usage.CachedTokens)
	}
}

// TestPrefixCacheBounded: the cache holds no more than its budget,
// evicting the least recently used states.
func TestPrefixCacheBounded(t *testing.T) {
	rt := newTestRuntime(t, 2, &Options{PrefixCacheBytes: 64 << 10})
	for i := range 40 {
		gen(t, rt, &Request{Model: "test-lm", Prompt: userTurns[i%4] + string(rune('a'+i)), MaxTokens: 3, Principal: "alice"})
	}
	if st := rt.CacheStats(); st.Bytes > 64<<10 || st.Entries == 0 {
		t.Fatalf("cache stats %+v over a 64 KiB budget", st)
	}
	// A deployment that stops leaves nothing behind.
	if err := rt.Undeploy("test-cpu", ""); err != nil && !errors.Is(err, ErrPermission) {
		t.Fatal(err)
	}
}

// TestResumeRefusesAnotherModel: a state continues only on its model;
// on another deployment of the same model it is not used, and the prompt
// is read whole.
func TestResumeRefusesAnotherModel(t *testing.T) {
	rt := newTestRuntime(t, 2, &Options{PrefixCacheBytes: -1})
	msgs := []tokenizer.Message{{Role: "user", Content: userTurns[0]}}
	first := chatTurn(t, rt, msgs, nil, 6, nil)
	state := *first.State
	state.Model = "other-lm"
	msgs = append(msgs, tokenizer.Message{Role: "assistant", Content: first.Choices[0].Text}, tokenizer.Message{Role: "user", Content: userTurns[1]})
	_, err := rt.Generate(context.Background(), &Request{Model: "test-lm", Messages: msgs, MaxTokens: 4, Resume: &state}, nil)
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Param != "model" {
		t.Fatalf("another model's state: %v, want a ParamError naming model", err)
	}
	state = *first.State
	state.Deployment = "elsewhere"
	res := gen(t, rt, &Request{Model: "test-lm", Messages: msgs, MaxTokens: 4, Resume: &state})
	if res.Usage.CachedTokens != 0 {
		t.Fatalf("another deployment's state resumed %d tokens", res.Usage.CachedTokens)
	}
	if _, err := rt.Generate(context.Background(), &Request{Model: "test-lm", Prompt: "x", SaveState: true}, nil); !errors.As(err, &pe) || pe.Param != "messages" {
		t.Fatalf("SaveState without messages: %v", err)
	}
}

// plainDevice hides its instances' abilities: a device that cannot save
// slots.
type plainDevice struct{ hal.Device }

type plainInstance struct{ hal.Instance }

func (d plainDevice) Load(ctx context.Context, p *compile.Program, batch int) (hal.Instance, error) {
	in, err := d.Device.Load(ctx, p, batch)
	if err != nil {
		return nil, err
	}
	return plainInstance{in}, nil
}

// TestNoSnapshotsRecompute: on a device that cannot save slots, a
// conversation is read whole every turn, with the same answers, and
// neither the cache nor a stored state is used.
func TestNoSnapshotsRecompute(t *testing.T) {
	rt := newTestRuntime(t, 2, nil)
	dev, err := cpu.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Deploy(context.Background(), DeploymentSpec{ID: "plain", Model: "test-lm", Dev: plainDevice{dev}}); err != nil {
		t.Fatal(err)
	}
	msgs := []tokenizer.Message{{Role: "user", Content: userTurns[0]}}
	saved := gen(t, rt, &Request{Deployment: "test-cpu", Messages: msgs, MaxTokens: 6, SaveState: true})
	plain := gen(t, rt, &Request{Deployment: "plain", Messages: msgs, MaxTokens: 6, SaveState: true})
	if plain.State != nil || saved.State == nil || plain.Choices[0].Text != saved.Choices[0].Text {
		t.Fatalf("states %v / %v, answers %q / %q", plain.State != nil, saved.State != nil, plain.Choices[0].Text, saved.Choices[0].Text)
	}
	msgs = append(msgs, tokenizer.Message{Role: "assistant", Content: ValidText(plain.Choices[0].Text)}, tokenizer.Message{Role: "user", Content: userTurns[1]})
	again := gen(t, rt, &Request{Deployment: "plain", Messages: msgs, MaxTokens: 6})
	want := gen(t, rt, &Request{Deployment: "test-cpu", Messages: msgs, MaxTokens: 6, NoCache: true})
	if again.Usage.CachedTokens != 0 || again.Choices[0].Text != want.Choices[0].Text {
		t.Fatalf("on the plain device: %d cached, %q; want 0, %q", again.Usage.CachedTokens, again.Choices[0].Text, want.Choices[0].Text)
	}
}
