package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/tokenizer"
)

// jfloat is a float that JSON can always hold (see appendFloat).
type jfloat float64

func (f jfloat) MarshalJSON() ([]byte, error) { return appendFloat(nil, float64(f)), nil }

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

type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   usageRecord  `json:"usage"`
}

type chatChoice struct {
	Index        int                  `json:"index"`
	Message      chatMessage          `json:"message"`
	Logprobs     *chatLogprobs        `json:"logprobs"`
	FinishReason runtime.FinishReason `json:"finish_reason"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatLogprobs struct {
	Content []chatTokenLogprob `json:"content"`
}

type chatTokenLogprob struct {
	Token       string             `json:"token"`
	Logprob     jfloat             `json:"logprob"`
	Bytes       []int              `json:"bytes"`
	TopLogprobs []chatTokenLogprob `json:"top_logprobs,omitempty"`
}

func tokenBytes(s string) []int {
	b := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		b[i] = int(s[i])
	}
	return b
}

func chatLogprobsOf(lps []runtime.TokenLogprob) *chatLogprobs {
	out := &chatLogprobs{Content: make([]chatTokenLogprob, len(lps))}
	for i, lp := range lps {
		c := chatTokenLogprob{Token: lp.Text, Logprob: jfloat(lp.Logprob), Bytes: tokenBytes(lp.Text), TopLogprobs: []chatTokenLogprob{}}
		for _, t := range lp.Top {
			c.TopLogprobs = append(c.TopLogprobs, chatTokenLogprob{Token: t.Text, Logprob: jfloat(t.Logprob), Bytes: tokenBytes(t.Text)})
		}
		out.Content[i] = c
	}
	return out
}

func chatResponse(id string, created int64, model string, g *genRequest, res *runtime.Result) *chatCompletion {
	c := &chatCompletion{ID: id, Object: "chat.completion", Created: created, Model: model}
	c.Usage.add(res)
	for i, ch := range res.Choices {
		cc := chatChoice{Index: i, Message: chatMessage{Role: "assistant", Content: ch.Text}, FinishReason: ch.FinishReason}
		if g.logprobs {
			cc.Logprobs = chatLogprobsOf(ch.Logprobs)
		}
		c.Choices = append(c.Choices, cc)
	}
	return c
}

type textCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []textChoice `json:"choices"`
	Usage   *usageRecord `json:"usage,omitempty"`
}

type textChoice struct {
	Text         string                `json:"text"`
	Index        int                   `json:"index"`
	Logprobs     *textLogprobs         `json:"logprobs"`
	FinishReason *runtime.FinishReason `json:"finish_reason"`
}

// textLogprobs is the legacy completions format. A null entry of
// token_logprobs and top_logprobs is the first token of an echoed prompt,
// which has no context to be predicted from.
type textLogprobs struct {
	Tokens        []string            `json:"tokens"`
	TokenLogprobs []*jfloat           `json:"token_logprobs"`
	TopLogprobs   []map[string]jfloat `json:"top_logprobs"`
	TextOffset    []int               `json:"text_offset"`
}

func (t *textLogprobs) add(lp runtime.TokenLogprob, offset int, withTop bool) int {
	v := jfloat(lp.Logprob)
	t.Tokens = append(t.Tokens, lp.Text)
	t.TokenLogprobs = append(t.TokenLogprobs, &v)
	if withTop {
		m := make(map[string]jfloat, len(lp.Top))
		for _, a := range lp.Top {
			if _, dup := m[a.Text]; !dup {
				m[a.Text] = jfloat(a.Logprob)
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
func completionResponse(id string, created int64, model string, g *genRequest, res *runtime.Result, tok *tokenizer.Tokenizer) *textCompletion {
	c := &textCompletion{ID: id, Object: "text_completion", Created: created, Model: model, Usage: &usageRecord{}}
	c.Usage.add(res)
	for i, ch := range res.Choices {
		p := i / g.n
		fr := ch.FinishReason
		tc := textChoice{Text: ch.Text, Index: i, FinishReason: &fr}
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
				tc.Logprobs = &textLogprobs{Tokens: []string{}, TokenLogprobs: []*jfloat{}, TopLogprobs: []map[string]jfloat{}, TextOffset: []int{}}
			}
			for _, lp := range ch.Logprobs {
				offset = tc.Logprobs.add(lp, offset, true)
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
func echoLogprobs(prompt runtime.PromptResult, tok *tokenizer.Tokenizer) *textLogprobs {
	t := &textLogprobs{}
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
		offset = t.add(lp, offset, true)
	}
	return t
}

// usageRecord is a completion's usage: OpenAI's token counts, and what
// the answer cost the device (an extension OpenAI clients ignore).
type usageRecord struct {
	runtime.Usage
	Neuromorphic neuroUsage `json:"neuromorphic"`
}

type neuroUsage struct {
	Timesteps   int64   `json:"timesteps"`
	Spikes      float64 `json:"spikes"`
	SynapticOps float64 `json:"synaptic_ops"`
	EnergyUJ    float64 `json:"energy_uj"`
}

// add counts a result in.
func (u *usageRecord) add(res *runtime.Result) {
	u.PromptTokens += res.Usage.PromptTokens
	u.CompletionTokens += res.Usage.CompletionTokens
	u.TotalTokens += res.Usage.TotalTokens
	u.Neuromorphic.Timesteps += res.Stats.Timesteps
	u.Neuromorphic.Spikes += res.Stats.Spikes
	u.Neuromorphic.SynapticOps += res.Stats.SynapticOps
	u.Neuromorphic.EnergyUJ += res.Stats.EnergyMicrojoule
}
