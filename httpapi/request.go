package httpapi

import (
	"encoding/json"
	"math"

	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/tokenizer"
)

// rawGen is a chat or text completion body with every known field kept
// raw, so that each is checked on its own and a wrong one is named in
// param. Unknown fields are ignored.
type rawGen struct {
	Model               json.RawMessage `json:"model"`
	Messages            json.RawMessage `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	Temperature         json.RawMessage `json:"temperature"`
	TopP                json.RawMessage `json:"top_p"`
	MaxTokens           json.RawMessage `json:"max_tokens"`
	MaxCompletionTokens json.RawMessage `json:"max_completion_tokens"`
	Stream              json.RawMessage `json:"stream"`
	StreamOptions       json.RawMessage `json:"stream_options"`
	Neuro               json.RawMessage `json:"neuro"`
	N                   json.RawMessage `json:"n"`
	Stop                json.RawMessage `json:"stop"`
	Seed                json.RawMessage `json:"seed"`
	PresencePenalty     json.RawMessage `json:"presence_penalty"`
	FrequencyPenalty    json.RawMessage `json:"frequency_penalty"`
	LogitBias           json.RawMessage `json:"logit_bias"`
	Logprobs            json.RawMessage `json:"logprobs"`
	TopLogprobs         json.RawMessage `json:"top_logprobs"`
	Echo                json.RawMessage `json:"echo"`
	Suffix              json.RawMessage `json:"suffix"`
	User                json.RawMessage `json:"user"`
}

// genRequest is a validated chat or text completion request.
type genRequest struct {
	chat         bool
	model        string
	messages     []tokenizer.Message
	prompts      []string
	promptTokens [][]int // the prompts, when sent as token ids
	temperature  float64
	topP         float64
	maxTokens    int // 0: not given
	maxSet       bool
	stream       bool
	includeUsage bool
	n            int
	stop         []string
	seed         *int64
	presence     float64
	frequency    float64
	logitBias    map[int]float64
	logprobs     bool
	topLogprobs  int
	echo         bool
	// activity asks for the spiking activity behind each streamed token
	// (the "neuro" extension).
	activity bool
}

// parseGen validates a body. maxTokens is the server's bound on
// max_tokens.
func parseGen(body []byte, chat bool, maxTokens int) (*genRequest, *Error) {
	var raw rawGen
	if e := decodeObject(body, &raw); e != nil {
		return nil, e
	}
	g := &genRequest{chat: chat}
	var e *Error
	if g.model, e = parseString(raw.Model, "model"); e != nil {
		return nil, e
	}
	if chat {
		if g.messages, e = parseMessages(raw.Messages); e != nil {
			return nil, e
		}
	} else {
		if g.prompts, g.promptTokens, e = parsePrompt(raw.Prompt); e != nil {
			return nil, e
		}
		if s, e := parseString(raw.Suffix, "suffix"); e != nil {
			return nil, e
		} else if s != "" {
			return nil, invalid("suffix", "unsupported_parameter", "suffix is not supported")
		}
		if g.echo, e = parseBool(raw.Echo, "echo"); e != nil {
			return nil, e
		}
	}
	if g.temperature, e = parseNumber(raw.Temperature, "temperature", 0, runtime.MaxTemperature, 1); e != nil {
		return nil, e
	}
	if g.topP, e = parseNumber(raw.TopP, "top_p", 0, runtime.MaxTopP, 1); e != nil {
		return nil, e
	}
	if g.presence, e = parseNumber(raw.PresencePenalty, "presence_penalty", -runtime.MaxPenalty, runtime.MaxPenalty, 0); e != nil {
		return nil, e
	}
	if g.frequency, e = parseNumber(raw.FrequencyPenalty, "frequency_penalty", -runtime.MaxPenalty, runtime.MaxPenalty, 0); e != nil {
		return nil, e
	}
	// max_tokens >= 1 for chat; a text completion may ask for 0 tokens
	// (with echo, to score the prompt).
	minTokens := int64(1)
	if !chat {
		minTokens = 0
	}
	mt, mtSet, e := parseInt(raw.MaxTokens, "max_tokens", minTokens, int64(maxTokens))
	if e != nil {
		return nil, e
	}
	mct, mctSet, e := parseInt(raw.MaxCompletionTokens, "max_completion_tokens", minTokens, int64(maxTokens))
	if e != nil {
		return nil, e
	}
	switch {
	case mtSet && mctSet && mt != mct:
		return nil, invalid("max_completion_tokens", "invalid_value", "max_completion_tokens (%d) and max_tokens (%d) disagree; give one", mct, mt)
	case mctSet:
		mt, mtSet = mct, true
	}
	g.maxTokens, g.maxSet = int(mt), mtSet
	if g.stream, e = parseBool(raw.Stream, "stream"); e != nil {
		return nil, e
	}
	if !absent(raw.StreamOptions) {
		if raw.StreamOptions[0] != '{' {
			return nil, invalid("stream_options", "invalid_type", "stream_options must be an object, not %s", kindOf(raw.StreamOptions))
		}
		if !g.stream {
			return nil, invalid("stream_options", "invalid_value", "stream_options is only allowed with stream: true")
		}
		var so struct {
			IncludeUsage json.RawMessage `json:"include_usage"`
		}
		if err := json.Unmarshal(raw.StreamOptions, &so); err != nil {
			return nil, invalid("stream_options", "invalid_type", "stream_options must be an object")
		}
		if g.includeUsage, e = parseBool(so.IncludeUsage, "stream_options.include_usage"); e != nil {
			return nil, e
		}
	}
	if g.activity, e = parseNeuroActivity(raw.Neuro, g.stream); e != nil {
		return nil, e
	}
	n, nSet, e := parseInt(raw.N, "n", 1, runtime.MaxChoices)
	if e != nil {
		return nil, e
	}
	g.n = 1
	if nSet {
		g.n = int(n)
	}
	if g.stop, e = parseStop(raw.Stop); e != nil {
		return nil, e
	}
	if seed, set, e := parseInt(raw.Seed, "seed", math.MinInt64, math.MaxInt64); e != nil {
		return nil, e
	} else if set {
		g.seed = &seed
	}
	if g.logitBias, e = parseLogitBias(raw.LogitBias); e != nil {
		return nil, e
	}
	if chat {
		if g.logprobs, e = parseBool(raw.Logprobs, "logprobs"); e != nil {
			return nil, e
		}
		top, topSet, e := parseInt(raw.TopLogprobs, "top_logprobs", 0, runtime.MaxTopLogprobs)
		if e != nil {
			return nil, e
		}
		if topSet && top > 0 && !g.logprobs {
			return nil, invalid("top_logprobs", "invalid_value", "top_logprobs needs logprobs: true")
		}
		g.topLogprobs = int(top)
	} else {
		// The legacy API's logprobs is the number of alternatives: 0
		// asks for the chosen tokens' log-probabilities alone.
		top, set, e := parseInt(raw.Logprobs, "logprobs", 0, 5)
		if e != nil {
			return nil, e
		}
		g.logprobs, g.topLogprobs = set, int(top)
	}
	if _, e := parseString(raw.User, "user"); e != nil {
		return nil, e
	}
	return g, nil
}

// parseNeuroActivity reads the "neuro" extension of a generation request:
// {"activity": true} asks for the spiking activity on each streamed
// chunk, so it needs stream.
func parseNeuroActivity(raw json.RawMessage, stream bool) (bool, *Error) {
	if absent(raw) {
		return false, nil
	}
	var nx struct {
		Activity json.RawMessage `json:"activity"`
	}
	if raw[0] != '{' || json.Unmarshal(raw, &nx) != nil {
		return false, invalid("neuro", "invalid_type", `neuro must be an object such as {"activity": true}, not %s`, kindOf(raw))
	}
	activity, e := parseBool(nx.Activity, "neuro.activity")
	if e != nil {
		return false, e
	}
	if activity && !stream {
		return false, invalid("neuro.activity", "invalid_value", "neuro.activity is sent on stream chunks: it needs stream: true")
	}
	return activity, nil
}
