package runtime

import (
	"errors"
	"fmt"

	"github.com/neuro-go/neuro/tokenizer"
)

// Request asks for a completion: of a text (Prompt), of several texts
// (Prompts) or of a chat (Messages).
type Request struct {
	// Model names the model (ID or alias). With Deployment set it may be
	// empty; if both are set they must agree.
	Model      string
	Deployment string
	Prompt     string
	// Prompts, in place of Prompt, asks for the completions of several
	// texts in one request: their sequences are stepped together, N
	// choices each, and choice k of prompt p is Result.Choices[p*N+k]
	// (Event.Choice the same), the order of the OpenAI API.
	Prompts []string
	// PromptTokens, in place of Prompt and Prompts, gives the prompts as
	// token ids of the model's tokenizer (a text completion's prompt sent
	// as token arrays), ordered as Prompts are.
	PromptTokens [][]int
	Messages     []tokenizer.Message
	Sampling     Sampling
	// MaxTokens bounds the completion; 0 means until the model stops or
	// the context is full. Use EchoOnly for a completion of no tokens.
	MaxTokens int
	// EchoOnly asks for no completion at all (max_tokens 0): with Echo and
	// Logprobs it scores the prompt.
	EchoOnly bool
	// Stop lists up to 4 strings that end the completion; they are not
	// part of the text.
	Stop []string
	// N is the number of choices; default 1.
	N int
	// MaxPromptTokens, when positive, bounds the prompt's tokens (after
	// the chat template): a longer one is refused with a
	// *PromptLengthError, which wraps ErrContextLength. The model's
	// context bounds it as well.
	MaxPromptTokens int
	// Logprobs asks for the log-probability of each generated token, and
	// TopLogprobs for that many alternatives at each position.
	Logprobs    bool
	TopLogprobs int
	// Echo asks for the prompt's token log-probabilities (text completion).
	Echo bool
	// Activity asks for the spiking activity behind each token on its
	// events (Event.Activity), where the device can report it.
	Activity bool
	// Principal identifies the caller for telemetry; Endpoint names the
	// API call.
	Principal string
	Endpoint  string

	// Resume, when set, is a conversation's state to start from: when
	// the prompt's tokens extend Resume.Tokens, only the tokens after
	// them are read. A state another model made is a *ParamError naming
	// "model"; one made by another deployment, or whose tokens the
	// prompt does not extend, is not used, and the prompt is read whole.
	// The result is the same either way.
	Resume *State
	// SaveState asks for Result.State: the state after the conversation
	// of Messages and the answer, the answer's turn closed as the chat
	// template closes an assistant's turn, so that the next turn resumes
	// from it. It needs Messages and one choice; a deployment whose
	// device cannot save states (hal.Snapshotter) returns none.
	SaveState bool
	// NoCache keeps the request out of the prefix-state cache: it
	// neither resumes from a cached state nor leaves one.
	NoCache bool
}

// Event is a piece of a streamed completion.
type Event struct {
	// Choice is the choice's index in Result.Choices.
	Choice int
	// Text is new text of the choice; never part of a stop sequence.
	Text string
	// Logprobs are those of the tokens consumed since the last event.
	Logprobs []TokenLogprob
	// FinishReason is set on the last event of a choice.
	FinishReason FinishReason
	// Activity is, when the request asked for it, which neurons of each
	// spiking layer fired for the tokens consumed since the last event.
	Activity []LayerActivity
}

// LayerActivity is the neurons of one spiking layer that fired for a
// token (during any of its timesteps), at most MaxActivitySpikes of them.
type LayerActivity struct {
	Layer   string `json:"layer"`
	Neurons int    `json:"neurons"`
	Spikes  []int  `json:"spikes"`
}

// MaxActivitySpikes caps the neurons listed per layer and token.
const MaxActivitySpikes = 512

// Choice is one finished completion.
type Choice struct {
	// Index is the choice's index in Result.Choices: prompt × N + choice
	// for a request of several Prompts.
	Index        int
	Text         string
	Tokens       []int
	Logprobs     []TokenLogprob
	FinishReason FinishReason
}

// FinishReason says why a choice ended, in the OpenAI API's words.
type FinishReason string

const (
	// FinishStop: the model emitted a stop token or a stop sequence matched.
	FinishStop FinishReason = "stop"
	// FinishLength: max_tokens or the model's context was reached.
	FinishLength FinishReason = "length"
)

// Usage counts tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// CachedTokens are the prompt tokens resumed from a state (Resume or
	// the prefix-state cache) instead of read.
	CachedTokens int `json:"cached_tokens,omitempty"`
}

// Result is a finished request.
type Result struct {
	Model      string
	Deployment string
	Choices    []Choice
	// Usage counts the tokens of every prompt and choice.
	Usage Usage
	// PromptTokens are the prompt's token ids, and PromptLogprobs their
	// log-probabilities (Echo with Logprobs; the first has none): the
	// first prompt's, for a request of several.
	PromptTokens   []int
	PromptLogprobs []TokenLogprob
	// Prompts are each prompt's, in the request's order: one for a
	// request of Prompt or Messages.
	Prompts []PromptResult
	Stats   Stats
	// State is the conversation's state after the turn (Request.SaveState).
	State *State
}

// PromptResult is a prompt as the model read it.
type PromptResult struct {
	// Tokens are its token ids, and Logprobs their log-probabilities
	// (Echo with Logprobs; the first token has none).
	Tokens   []int
	Logprobs []TokenLogprob
}

// Bounds of a Request: the runtime refuses a request outside them with a
// *ParamError naming the field, and a server reports them in its own
// errors. They are the OpenAI API's, where it has the parameter.
const (
	// MaxTemperature bounds Sampling.Temperature: [0, MaxTemperature].
	MaxTemperature = 2
	// MaxTopP bounds Sampling.TopP: [0, MaxTopP].
	MaxTopP = 1
	// MaxPenalty bounds Sampling.PresencePenalty and FrequencyPenalty:
	// [-MaxPenalty, MaxPenalty].
	MaxPenalty = 2
	// MaxLogitBias bounds each of Sampling.LogitBias' values:
	// [-MaxLogitBias, MaxLogitBias].
	MaxLogitBias = 100
	// MaxChoices bounds Request.N: [1, MaxChoices] (0 is 1).
	MaxChoices = 8
	// MaxStops bounds how many Request.Stop sequences there may be.
	MaxStops = 4
	// MaxTopLogprobs bounds Request.TopLogprobs: [0, MaxTopLogprobs].
	MaxTopLogprobs = 20
)

// PromptLengthError is a prompt longer than Request.MaxPromptTokens. It
// wraps ErrContextLength.
type PromptLengthError struct {
	Tokens int // the prompt's
	Limit  int // Request.MaxPromptTokens
}

func (e *PromptLengthError) Error() string {
	return fmt.Sprintf("runtime: the prompt has %d tokens, the limit is %d", e.Tokens, e.Limit)
}

func (e *PromptLengthError) Unwrap() error { return ErrContextLength }

// prepare validates a request, finds the deployment that will serve it
// and encodes its prompts, each once.
func (r *Runtime) prepare(req *Request) (*Deployment, [][]int, error) {
	d, err := r.resolve(req)
	if err != nil {
		return nil, nil, err
	}
	if err := checkRequest(req); err != nil {
		return nil, nil, err
	}
	if req.PromptTokens != nil {
		for i, ids := range req.PromptTokens {
			if err := checkPromptTokens(d.Model, req, ids, i); err != nil {
				return nil, nil, err
			}
		}
		return d, req.PromptTokens, nil
	}
	if req.Prompts == nil {
		prompt, err := encodePrompt(d.Model, req, req.Prompt)
		if err != nil {
			return nil, nil, err
		}
		return d, [][]int{prompt}, nil
	}
	prompts := make([][]int, len(req.Prompts))
	for i, text := range req.Prompts {
		if prompts[i], err = encodePrompt(d.Model, req, text); err != nil {
			return nil, nil, err
		}
	}
	return d, prompts, nil
}

func (r *Runtime) resolve(req *Request) (*Deployment, error) {
	if req.Deployment != "" {
		d, err := r.deploymentOf(req.Deployment, req.Principal, req.Model)
		if err != nil {
			return nil, err
		}
		if !d.Model.IsLanguageModel() {
			return nil, fmt.Errorf("%w: %q", ErrNotLanguageModel, d.Model.ID)
		}
		if d.Status() != StatusReady {
			return nil, fmt.Errorf("%w: deployment %q is %s", ErrDeviceUnavailable, d.ID, d.Status())
		}
		return d, nil
	}
	m, err := r.Model(req.Model)
	if err != nil {
		return nil, err
	}
	if !m.IsLanguageModel() {
		return nil, fmt.Errorf("%w: %q", ErrNotLanguageModel, m.ID)
	}
	return r.DeploymentFor(m.ID)
}

// deploymentOf finds a request's deployment, principal's own first
// (findDeployment), and checks that it serves model, when a request
// names both.
func (r *Runtime) deploymentOf(id, principal, model string) (*Deployment, error) {
	r.mu.RLock()
	d, ok := r.findDeployment(id, principal)
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrDeploymentNotFound, id)
	}
	if model != "" {
		m, err := r.Model(model)
		if err != nil {
			return nil, err
		}
		if m.ID != d.Model.ID {
			return nil, &ParamError{"model", fmt.Sprintf("deployment %q serves %q, not %q", d.ID, d.Model.ID, model)}
		}
	}
	return d, nil
}

// encodePrompt encodes the request's chat, or else text, and checks its
// length.
func encodePrompt(m *Model, req *Request, text string) ([]int, error) {
	var ids []int
	if req.Messages != nil {
		var err error
		ids, err = m.Tokenizer.EncodeChat(req.Messages, true)
		if errors.Is(err, tokenizer.ErrNoChatTemplate) {
			return nil, &ParamError{"messages", fmt.Sprintf("model %s has no chat template, so it completes text but does not chat: compile it with options.chat_template to chat with it, or send a prompt to /v1/completions", m.ID)}
		}
		if err != nil {
			return nil, &ParamError{"messages", err.Error()}
		}
	} else {
		ids = m.Tokenizer.Encode(text)
	}
	if len(ids) == 0 {
		// An empty prompt starts from the end-of-text token, where every
		// training document starts.
		id, ok := m.Tokenizer.SpecialID(tokenizer.EndOfText)
		if !ok {
			return nil, &ParamError{"prompt", "empty prompt, and the tokenizer has no end-of-text token to start from"}
		}
		ids = []int{id}
	}
	if err := checkPromptLength(m, req, len(ids)); err != nil {
		return nil, err
	}
	return ids, nil
}

// checkPromptLength checks a prompt of n tokens against the model's
// context and the request's limit.
func checkPromptLength(m *Model, req *Request, n int) error {
	if c := m.ContextLength(); c > 0 && n > c {
		return fmt.Errorf("%w: %d prompt tokens, the context holds %d", ErrContextLength, n, c)
	}
	if req.MaxPromptTokens > 0 && n > req.MaxPromptTokens {
		return &PromptLengthError{n, req.MaxPromptTokens}
	}
	return nil
}

// checkPromptTokens checks prompt i of a request's PromptTokens: ids of
// the model's vocabulary, at least one, within the lengths allowed.
func checkPromptTokens(m *Model, req *Request, ids []int, i int) error {
	if len(ids) == 0 {
		return &ParamError{"prompt", fmt.Sprintf("prompt %d has no tokens", i)}
	}
	v := m.Tokenizer.VocabSize()
	for k, id := range ids {
		if id < 0 || id >= v {
			return &ParamError{"prompt", fmt.Sprintf("token %d of prompt %d is %d, not an id of %s's vocabulary (0 to %d)", k, i, id, m.ID, v-1)}
		}
	}
	return checkPromptLength(m, req, len(ids))
}

func checkRequest(req *Request) error {
	s := req.Sampling
	switch {
	case len(req.Messages) == 0 && req.Messages != nil:
		return &ParamError{"messages", "at least one message is required"}
	case req.Prompts != nil && (req.Prompt != "" || req.Messages != nil):
		return &ParamError{"prompt", "a request has Prompts, or else a Prompt or Messages"}
	case len(req.Prompts) == 0 && req.Prompts != nil:
		return &ParamError{"prompt", "Prompts is empty"}
	case req.PromptTokens != nil && (req.Prompts != nil || req.Prompt != "" || req.Messages != nil):
		return &ParamError{"prompt", "a request has PromptTokens, or else Prompts, a Prompt or Messages"}
	case len(req.PromptTokens) == 0 && req.PromptTokens != nil:
		return &ParamError{"prompt", "PromptTokens is empty"}
	case s.Temperature < 0 || s.Temperature > MaxTemperature:
		return &ParamError{"temperature", fmt.Sprintf("%v is outside [0, %d]", s.Temperature, MaxTemperature)}
	case s.TopP < 0 || s.TopP > MaxTopP:
		return &ParamError{"top_p", fmt.Sprintf("%v is outside [0, %d]", s.TopP, MaxTopP)}
	case s.PresencePenalty < -MaxPenalty || s.PresencePenalty > MaxPenalty:
		return &ParamError{"presence_penalty", fmt.Sprintf("%v is outside [%d, %d]", s.PresencePenalty, -MaxPenalty, MaxPenalty)}
	case s.FrequencyPenalty < -MaxPenalty || s.FrequencyPenalty > MaxPenalty:
		return &ParamError{"frequency_penalty", fmt.Sprintf("%v is outside [%d, %d]", s.FrequencyPenalty, -MaxPenalty, MaxPenalty)}
	case req.N < 0 || req.N > MaxChoices:
		return &ParamError{"n", fmt.Sprintf("%d is outside [1, %d]", req.N, MaxChoices)}
	case req.MaxTokens < 0:
		return &ParamError{"max_tokens", fmt.Sprintf("%d is negative", req.MaxTokens)}
	case len(req.Stop) > MaxStops:
		return &ParamError{"stop", fmt.Sprintf("%d stop sequences, at most %d", len(req.Stop), MaxStops)}
	case req.TopLogprobs < 0 || req.TopLogprobs > MaxTopLogprobs:
		return &ParamError{"top_logprobs", fmt.Sprintf("%d is outside [0, %d]", req.TopLogprobs, MaxTopLogprobs)}
	case req.SaveState && req.Messages == nil:
		return &ParamError{"messages", "saving a conversation's state needs its messages"}
	case req.SaveState && req.N > 1:
		return &ParamError{"n", "saving a conversation's state needs one choice"}
	}
	for _, st := range req.Stop {
		if st == "" {
			return &ParamError{"stop", "empty stop sequence"}
		}
	}
	for id, b := range s.LogitBias {
		if b < -MaxLogitBias || b > MaxLogitBias {
			return &ParamError{"logit_bias", fmt.Sprintf("bias %v for token %d is outside [%d, %d]", b, id, -MaxLogitBias, MaxLogitBias)}
		}
	}
	return nil
}
