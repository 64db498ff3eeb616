package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/tokenizer"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, errInternal)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// chatLogprobsOf is a choice's log-probabilities as a chat completion
// sends them.
func chatLogprobsOf(lps []runtime.TokenLogprob) *wire.ChatLogprobs {
	out := &wire.ChatLogprobs{Content: make([]wire.TokenLogprob, len(lps))}
	for i, lp := range lps {
		c := wire.TokenLogprob{Token: lp.Text, Logprob: wire.Finite(lp.Logprob), Bytes: wire.Bytes(lp.Text), TopLogprobs: []wire.TokenLogprob{}}
		for _, t := range lp.Top {
			c.TopLogprobs = append(c.TopLogprobs, wire.TokenLogprob{Token: t.Text, Logprob: wire.Finite(t.Logprob), Bytes: wire.Bytes(t.Text)})
		}
		out.Content[i] = c
	}
	return out
}

func chatResponse(id string, created int64, model string, g *genRequest, res *runtime.Result) *wire.ChatCompletion {
	c := &wire.ChatCompletion{ID: id, Object: "chat.completion", Created: created, Model: model}
	addUsage(&c.Usage, res)
	for i, ch := range res.Choices {
		cc := wire.ChatChoice{Index: i, Message: wire.ChatMessage{Role: "assistant", Content: ch.Text}, FinishReason: string(ch.FinishReason)}
		if g.logprobs {
			cc.Logprobs = chatLogprobsOf(ch.Logprobs)
		}
		c.Choices = append(c.Choices, cc)
	}
	return c
}

// addLogprob adds a token to a choice's legacy log-probabilities and
// returns the text offset after it. The alternatives are a map: of two
// with the same text, the first (more likely) is kept.
func addLogprob(t *wire.CompletionLogprobs, lp runtime.TokenLogprob, offset int, withTop bool) int {
	v := wire.Finite(lp.Logprob)
	t.Tokens = append(t.Tokens, lp.Text)
	t.TokenLogprobs = append(t.TokenLogprobs, &v)
	if withTop {
		m := make(map[string]float64, len(lp.Top))
		for _, a := range lp.Top {
			if _, dup := m[a.Text]; !dup {
				m[a.Text] = wire.Finite(a.Logprob)
			}
		}
		t.TopLogprobs = append(t.TopLogprobs, m)
	} else {
		t.TopLogprobs = append(t.TopLogprobs, nil)
	}
	t.TextOffset = append(t.TextOffset, offset)
	return offset + len(lp.Text)
}

// completionResponse answers a text completion: choice i completes
// prompt i / n, as the result orders them.
func completionResponse(id string, created int64, model string, g *genRequest, res *runtime.Result, tok *tokenizer.Tokenizer) *wire.Completion {
	c := &wire.Completion{ID: id, Object: "text_completion", Created: created, Model: model, Usage: &wire.Usage{}}
	addUsage(c.Usage, res)
	for i, ch := range res.Choices {
		p := i / g.n
		tc := wire.CompletionChoice{Text: ch.Text, Index: i, FinishReason: string(ch.FinishReason)}
		offset := 0
		if g.echo {
			prompt := g.prompts[p]
			tc.Text = prompt + ch.Text
			if g.logprobs {
				tc.Logprobs = echoLogprobs(promptOf(res, p), tok)
				offset = len(prompt)
			}
		}
		if g.logprobs {
			if tc.Logprobs == nil {
				tc.Logprobs = &wire.CompletionLogprobs{Tokens: []string{}, TokenLogprobs: []*float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
			}
			for _, lp := range ch.Logprobs {
				offset = addLogprob(tc.Logprobs, lp, offset, true)
			}
		}
		c.Choices = append(c.Choices, tc)
	}
	return c
}

// promptOf is prompt p of a result; a backend that does not list
// Prompts gives the first alone.
func promptOf(res *runtime.Result, p int) runtime.PromptResult {
	switch {
	case p < len(res.Prompts):
		return res.Prompts[p]
	case p == 0:
		return runtime.PromptResult{Tokens: res.PromptTokens, Logprobs: res.PromptLogprobs}
	}
	return runtime.PromptResult{}
}

// echoLogprobs lists the prompt's tokens with their log-probabilities; the
// first has none (null), as in the OpenAI API.
func echoLogprobs(prompt runtime.PromptResult, tok *tokenizer.Tokenizer) *wire.CompletionLogprobs {
	t := &wire.CompletionLogprobs{}
	offset := 0
	if len(prompt.Tokens) > 0 {
		first := ""
		if tok != nil {
			first = tok.Decode(prompt.Tokens[:1])
		}
		t.Tokens = append(t.Tokens, first)
		t.TokenLogprobs = append(t.TokenLogprobs, nil)
		t.TopLogprobs = append(t.TopLogprobs, nil)
		t.TextOffset = append(t.TextOffset, 0)
		offset = len(first)
	}
	for _, lp := range prompt.Logprobs {
		offset = addLogprob(t, lp, offset, true)
	}
	return t
}

// addUsage counts a result into a completion's usage: OpenAI's token
// counts, and what the answer cost the device.
func addUsage(u *wire.Usage, res *runtime.Result) {
	u.PromptTokens += res.Usage.PromptTokens
	u.CompletionTokens += res.Usage.CompletionTokens
	u.TotalTokens += res.Usage.TotalTokens
	u.PromptTokensDetails.CachedTokens += res.Usage.CachedTokens
	u.Neuromorphic.Timesteps += res.Stats.Timesteps
	u.Neuromorphic.Spikes += res.Stats.Spikes
	u.Neuromorphic.SynapticOps += res.Stats.SynapticOps
	u.Neuromorphic.EnergyUJ += res.Stats.EnergyMicrojoule
}
