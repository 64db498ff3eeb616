package wire

import "encoding/json"

// ChatMessage is one turn of a chat. Role is "system", "developer",
// "user" or "assistant".
type ChatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// StreamOptions are the options of a streamed request.
type StreamOptions struct {
	// IncludeUsage asks for one last chunk, with no choices, that carries
	// the usage of the whole request.
	IncludeUsage bool `json:"include_usage"`
}

// NeuroOptions are the request's "neuro" extension.
type NeuroOptions struct {
	// Activity asks, on a stream, for the spiking activity behind each
	// chunk's tokens (ChunkNeuro).
	Activity bool `json:"activity,omitempty"`
}

// Sampling holds the fields that chat and text completions share. A nil
// pointer leaves the field out, and the server's default applies.
type Sampling struct {
	// Temperature is 0..2, default 1; 0 is greedy.
	Temperature *float64 `json:"temperature,omitempty"`
	// TopP is 0..1, default 1.
	TopP *float64 `json:"top_p,omitempty"`
	// N is the number of choices, 1..8, default 1.
	N *int `json:"n,omitempty"`
	// Stop lists up to 4 strings that end a choice; they are left out of
	// its text.
	Stop []string `json:"stop,omitempty"`
	// Seed makes sampling reproducible: the same seed, request and
	// deployment give the same output.
	Seed *int64 `json:"seed,omitempty"`
	// PresencePenalty and FrequencyPenalty are -2..2, default 0.
	PresencePenalty  *float64 `json:"presence_penalty,omitempty"`
	FrequencyPenalty *float64 `json:"frequency_penalty,omitempty"`
	// LogitBias adds a bias (-100..100) to the logits of token ids, given
	// as decimal strings as in the OpenAI API.
	LogitBias map[string]float64 `json:"logit_bias,omitempty"`
	// User identifies the end user (accepted, not stored).
	User string `json:"user,omitempty"`
}

// ChatCompletionRequest is the body of POST /v1/chat/completions and of
// a deployment's chat completions.
type ChatCompletionRequest struct {
	// Model is required on /v1/chat/completions; through a deployment it
	// may be left empty (the deployment's model answers).
	Model    string        `json:"model,omitempty"`
	Messages []ChatMessage `json:"messages"`
	Sampling
	// MaxTokens bounds the completion (>= 1); nil lets the model run to
	// its end or the server's limit. MaxCompletionTokens is its newer
	// name; give one.
	MaxTokens           *int `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int `json:"max_completion_tokens,omitempty"`
	// Logprobs asks for each token's log-probability, TopLogprobs (0..20)
	// for that many alternatives at each position.
	Logprobs    bool `json:"logprobs,omitempty"`
	TopLogprobs *int `json:"top_logprobs,omitempty"`
	// StreamOptions applies to a streamed request only.
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	// Neuro holds Neuro's extension (streamed requests only).
	Neuro *NeuroOptions `json:"neuro,omitempty"`
	// Stream asks for server-sent events. The Go client sets it: false
	// for ChatCompletion, true for ChatCompletionStream.
	Stream bool `json:"stream,omitempty"`
}

// Usage counts the tokens of a request and, in Neuromorphic, what the
// answer cost the device (an extension OpenAI clients ignore).
type Usage struct {
	PromptTokens        int                 `json:"prompt_tokens"`
	CompletionTokens    int                 `json:"completion_tokens"`
	TotalTokens         int                 `json:"total_tokens"`
	PromptTokensDetails PromptTokensDetails `json:"prompt_tokens_details"`
	Neuromorphic        NeuromorphicUsage   `json:"neuromorphic"`
}

// PromptTokensDetails splits the prompt tokens: CachedTokens were resumed
// from the state an earlier request left (the prefix-state cache)
// instead of read.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// NeuromorphicUsage is what a completion cost the device: timesteps,
// spikes, synaptic operations and the energy model's microjoules.
type NeuromorphicUsage struct {
	Timesteps   int64   `json:"timesteps"`
	Spikes      float64 `json:"spikes"`
	SynapticOps float64 `json:"synaptic_ops"`
	EnergyUJ    float64 `json:"energy_uj"`
}

// ChatCompletion is the result of a chat completion.
type ChatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"` // "chat.completion"
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []ChatChoice `json:"choices"`
	Usage   Usage        `json:"usage"`
}

// ChatChoice is one choice of a chat completion. FinishReason is "stop"
// (the model ended or a stop sequence matched) or "length".
type ChatChoice struct {
	Index        int           `json:"index"`
	Message      ChatMessage   `json:"message"`
	Logprobs     *ChatLogprobs `json:"logprobs"`
	FinishReason string        `json:"finish_reason"`
}

// ChatLogprobs are the log-probabilities of a choice's tokens.
type ChatLogprobs struct {
	Content []TokenLogprob `json:"content"`
}

// TokenLogprob is a token, its log-probability (Finite) and its UTF-8
// bytes, with the most likely alternatives at its position. A token that
// is part of a UTF-8 character has U+FFFD in Token and its real bytes in
// Bytes. TopLogprobs is a list, possibly empty, on a choice's tokens,
// and nil (left out) on the alternatives themselves.
type TokenLogprob struct {
	Token       string         `json:"token"`
	Logprob     float64        `json:"logprob"`
	Bytes       []int          `json:"bytes"`
	TopLogprobs []TokenLogprob `json:"top_logprobs,omitzero"`
}

// ChatCompletionChunk is one event of a streamed chat completion. The
// first chunk of each choice carries Delta.Role; the last chunk of a
// stream with StreamOptions.IncludeUsage has no choices and a Usage.
type ChatCompletionChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"` // "chat.completion.chunk"
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []ChatChunkChoice `json:"choices"`
	Usage   *Usage            `json:"usage,omitempty"`
	// Neuro is the spiking activity behind a content chunk's tokens, on
	// a request that asked for it.
	Neuro *ChunkNeuro `json:"neuro,omitempty"`
}

// ChatChunkChoice is one choice's part of a chunk. FinishReason is empty
// until the choice's last chunk.
type ChatChunkChoice struct {
	Index        int           `json:"index"`
	Delta        ChatDelta     `json:"delta"`
	Logprobs     *ChatLogprobs `json:"logprobs"`
	FinishReason string        `json:"finish_reason"`
}

// ChatDelta is new text of a choice.
type ChatDelta struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content,omitempty"`
}

// MarshalJSON writes the chunk choice as the server streams it: a
// choice's last chunk has an empty delta and its finish_reason; every
// other chunk has delta.content (possibly empty: a token that is all
// special has log-probabilities and no text) and finish_reason null.
func (c ChatChunkChoice) MarshalJSON() ([]byte, error) {
	type delta struct {
		Role    string  `json:"role,omitempty"`
		Content *string `json:"content,omitempty"`
	}
	out := struct {
		Index        int           `json:"index"`
		Delta        delta         `json:"delta"`
		Logprobs     *ChatLogprobs `json:"logprobs"`
		FinishReason *string       `json:"finish_reason"`
	}{Index: c.Index, Delta: delta{Role: c.Delta.Role}, Logprobs: c.Logprobs}
	if c.FinishReason == "" {
		out.Delta.Content = &c.Delta.Content
	} else {
		out.FinishReason = &c.FinishReason
	}
	return json.Marshal(out)
}

// ChunkNeuro is a chunk's "neuro" extension.
type ChunkNeuro struct {
	// Activity lists, for each spiking layer of the model in evaluation
	// order, the neurons that fired for the chunk's tokens. A device that
	// cannot report activity sends an empty list.
	Activity []LayerActivity `json:"activity"`
}

// LayerActivity is the neurons of one spiking layer that fired.
type LayerActivity struct {
	Layer   string `json:"layer"`
	Neurons int    `json:"neurons"`
	Spikes  []int  `json:"spikes"`
}
