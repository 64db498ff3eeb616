package wire

import (
	"encoding/json"
	"errors"
)

// CompletionRequest is the body of POST /v1/completions. Give Prompt, or
// Prompts for one set of choices per prompt, or PromptTokens for prompts
// given as token ids of the model's tokenizer.
type CompletionRequest struct {
	Model        string
	Prompt       string
	Prompts      []string
	PromptTokens [][]int
	Sampling
	// MaxTokens bounds each completion; 0 is allowed (with Echo and
	// Logprobs it scores the prompt). nil: the server's limit.
	MaxTokens *int
	// Logprobs (0..5) asks for log-probabilities with that many
	// alternatives per position; nil asks for none.
	Logprobs *int
	// Echo prepends the prompt to each choice's text (and, with Logprobs,
	// its tokens' log-probabilities).
	Echo bool
	// StreamOptions applies to a streamed request only.
	StreamOptions *StreamOptions
	// Neuro holds Neuro's extension (streamed requests only).
	Neuro *NeuroOptions
	// Stream asks for server-sent events; the Go client sets it.
	Stream bool
}

// ErrPrompts is returned by CompletionRequest.MarshalJSON for a request
// that gives more than one of Prompt, Prompts and PromptTokens.
var ErrPrompts = errors.New("client: CompletionRequest: give one of Prompt, Prompts and PromptTokens")

// completionBody is CompletionRequest as JSON: prompt is a string, or
// an array for Prompts or PromptTokens.
type completionBody struct {
	Model  string `json:"model"`
	Prompt any    `json:"prompt"`
	Sampling
	MaxTokens     *int           `json:"max_tokens,omitempty"`
	Logprobs      *int           `json:"logprobs,omitempty"`
	Echo          bool           `json:"echo,omitempty"`
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	Neuro         *NeuroOptions  `json:"neuro,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
}

// MarshalJSON writes prompt as a string, or as an array for Prompts or
// PromptTokens.
func (r *CompletionRequest) MarshalJSON() ([]byte, error) {
	var prompt any = r.Prompt
	given := 0
	if r.Prompt != "" {
		given++
	}
	if len(r.Prompts) > 0 {
		prompt = r.Prompts
		given++
	}
	if len(r.PromptTokens) > 0 {
		prompt = r.PromptTokens
		given++
	}
	if given > 1 {
		return nil, ErrPrompts
	}
	return json.Marshal(completionBody{Model: r.Model, Prompt: prompt, Sampling: r.Sampling, MaxTokens: r.MaxTokens,
		Logprobs: r.Logprobs, Echo: r.Echo, StreamOptions: r.StreamOptions, Neuro: r.Neuro, Stream: r.Stream})
}

// Completion is the result of a text completion, and also each chunk of
// a streamed one (Object "text_completion" both).
type Completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []CompletionChoice `json:"choices"`
	Usage   *Usage             `json:"usage,omitempty"`
	// Neuro is the spiking activity behind a chunk's tokens, on a stream
	// that asked for it.
	Neuro *ChunkNeuro `json:"neuro,omitempty"`
}

// CompletionChoice is one choice. With several prompts, Index counts
// across them: prompt p's choices are p*n .. p*n+n-1. In a stream,
// FinishReason is empty (null) until the choice's last chunk.
type CompletionChoice struct {
	Text         string              `json:"text"`
	Index        int                 `json:"index"`
	Logprobs     *CompletionLogprobs `json:"logprobs"`
	FinishReason string              `json:"finish_reason"`
}

// MarshalJSON writes an empty FinishReason as null.
func (c CompletionChoice) MarshalJSON() ([]byte, error) {
	out := struct {
		Text         string              `json:"text"`
		Index        int                 `json:"index"`
		Logprobs     *CompletionLogprobs `json:"logprobs"`
		FinishReason *string             `json:"finish_reason"`
	}{Text: c.Text, Index: c.Index, Logprobs: c.Logprobs}
	if c.FinishReason != "" {
		out.FinishReason = &c.FinishReason
	}
	return json.Marshal(out)
}

// CompletionLogprobs is the legacy completions format. A nil entry of
// TokenLogprobs (and TopLogprobs) is the first token of an echoed
// prompt, which has no context to be predicted from. TextOffset counts
// bytes of the choice's text.
type CompletionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}
