package client

import (
	"encoding/json"
	"errors"
)

// Ptr returns a pointer to v, for the optional fields of requests:
// Temperature: client.Ptr(0.0).
func Ptr[T any](v T) *T { return &v }

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
	// StreamOptions applies to ChatCompletionStream only.
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	// Stream is set by the client: false for ChatCompletion, true for
	// ChatCompletionStream.
	Stream bool `json:"stream,omitempty"`
}

// Usage counts the tokens of a request.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// ChatCompletion is the result of a chat completion.
type ChatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
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

// TokenLogprob is a token, its log-probability and its UTF-8 bytes, with
// the most likely alternatives at its position when they were asked for.
type TokenLogprob struct {
	Token       string         `json:"token"`
	Logprob     float64        `json:"logprob"`
	Bytes       []int          `json:"bytes"`
	TopLogprobs []TokenLogprob `json:"top_logprobs,omitempty"`
}

// ChatCompletionChunk is one event of a streamed chat completion. The
// first chunk of each choice carries Delta.Role; the last chunk of a
// stream with StreamOptions.IncludeUsage has no choices and a Usage.
type ChatCompletionChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []ChatChunkChoice `json:"choices"`
	Usage   *Usage            `json:"usage,omitempty"`
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

// CompletionRequest is the body of POST /v1/completions. Give Prompt, or
// Prompts for one set of choices per prompt.
type CompletionRequest struct {
	Model   string
	Prompt  string
	Prompts []string
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
	// Stream is set by the client.
	Stream bool
}

var errPrompts = errors.New("client: CompletionRequest: give Prompt or Prompts, not both")

// MarshalJSON writes prompt as a string, or as an array for Prompts.
func (r *CompletionRequest) MarshalJSON() ([]byte, error) {
	if r.Prompt != "" && len(r.Prompts) > 0 {
		return nil, errPrompts
	}
	var prompt any = r.Prompt
	if len(r.Prompts) > 0 {
		prompt = r.Prompts
	}
	return json.Marshal(struct {
		Model  string `json:"model"`
		Prompt any    `json:"prompt"`
		Sampling
		MaxTokens *int `json:"max_tokens,omitempty"`
		Logprobs  *int `json:"logprobs,omitempty"`
		Echo      bool `json:"echo,omitempty"`
		Stream    bool `json:"stream,omitempty"`
	}{r.Model, prompt, r.Sampling, r.MaxTokens, r.Logprobs, r.Echo, r.Stream})
}

// Completion is the result of a text completion, and also each chunk of
// a streamed one.
type Completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []CompletionChoice `json:"choices"`
	Usage   *Usage             `json:"usage,omitempty"`
}

// CompletionChoice is one choice. With several prompts, Index counts
// across them: prompt p's choices are p*n .. p*n+n-1.
type CompletionChoice struct {
	Text         string              `json:"text"`
	Index        int                 `json:"index"`
	Logprobs     *CompletionLogprobs `json:"logprobs"`
	FinishReason string              `json:"finish_reason"`
}

// CompletionLogprobs is the legacy completions format. A nil entry of
// TokenLogprobs (and TopLogprobs) is the first token of an echoed
// prompt, which has no context to be predicted from.
type CompletionLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// Model describes a model: a built-in language model or a network
// compiled through Compile.
type Model struct {
	ID           string        `json:"id"`
	Object       string        `json:"object"`
	Created      int64         `json:"created"`
	OwnedBy      string        `json:"owned_by"`
	Capabilities Capabilities  `json:"capabilities"`
	Neuromorphic *Neuromorphic `json:"neuromorphic"`
	Description  string        `json:"description,omitempty"`
}

// Capabilities says what a model can serve.
type Capabilities struct {
	Chat        bool `json:"chat"`
	Completions bool `json:"completions"`
	Streaming   bool `json:"streaming"`
	Logprobs    bool `json:"logprobs"`
}

// Neuromorphic describes a model's network.
type Neuromorphic struct {
	Neurons            int      `json:"neurons"`
	Synapses           int      `json:"synapses"`
	Layers             int      `json:"layers"`
	Parameters         int      `json:"parameters"`
	TimestepsPerToken  int      `json:"timesteps_per_token,omitempty"`
	TimestepsPerSample int      `json:"timesteps_per_sample,omitempty"`
	Context            Context  `json:"context"`
	Devices            []string `json:"devices"`
	Mock               bool     `json:"mock,omitempty"`
}

// Context is how a model holds its context; Length 0 is unbounded.
type Context struct {
	Handling string `json:"handling"`
	Length   int    `json:"length"`
}

// Deployment is a model placed on a device.
type Deployment struct {
	ID           string         `json:"id"`
	Object       string         `json:"object"`
	Model        string         `json:"model"`
	Device       Device         `json:"device"`
	Status       string         `json:"status"` // "ready", "loading" or "failed"
	Created      int64          `json:"created"`
	Replicas     int            `json:"replicas"`
	MaxBatchSize int            `json:"max_batch_size"`
	Load         DeploymentLoad `json:"load"`
	Failure      string         `json:"failure,omitempty"`
	// OwnedBy is the caller that created it, or "system" for the
	// server's own.
	OwnedBy string `json:"owned_by"`
}

// CreateDeploymentRequest places a model on a device (POST
// /v1/deployments). Zero fields take the server's defaults.
type CreateDeploymentRequest struct {
	Model        string `json:"model"`
	Device       string `json:"device,omitempty"`
	ID           string `json:"id,omitempty"`
	Replicas     int    `json:"replicas,omitempty"`
	MaxBatchSize int    `json:"max_batch_size,omitempty"`
	// Precision is the cpu simulator's weight precision: "float32" (the
	// default, exact), "bfloat16" or "int8".
	Precision string `json:"precision,omitempty"`
}

// Deleted answers a DELETE.
type Deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// RunRequest runs samples through a network's deployment. Each sample is
// one of: a vector presented at every step ([]float32), a matrix of one
// row per step ([][]float32), or an EventSample.
type RunRequest struct {
	Inputs    []any    `json:"inputs"`
	Timesteps int      `json:"timesteps,omitempty"`
	Record    []string `json:"record,omitempty"` // "spikes", "membrane"
	Model     string   `json:"model,omitempty"`
	Seed      int64    `json:"seed,omitempty"`
}

// EventSample is sparse input: Events[k] = [t, i], input i spikes at
// step t.
type EventSample struct {
	Events    [][2]int `json:"events"`
	Timesteps int      `json:"timesteps"`
}

// Run is the result of a run.
type Run struct {
	ID         string      `json:"id"`
	Object     string      `json:"object"`
	Created    int64       `json:"created"`
	Model      string      `json:"model"`
	Deployment string      `json:"deployment"`
	Outputs    []RunOutput `json:"outputs"`
	Usage      RunUsage    `json:"usage"`
	Warnings   []string    `json:"warnings"`
}

// RunOutput is one sample's result.
type RunOutput struct {
	Index       int         `json:"index"`
	SpikeCounts []float32   `json:"spike_counts"`
	Prediction  int         `json:"prediction"`
	FinalState  []float32   `json:"final_state"`
	Spikes      [][2]int    `json:"spikes,omitempty"`
	Membrane    [][]float32 `json:"membrane,omitempty"`
}

// RunUsage is what a run cost.
type RunUsage struct {
	Samples     int     `json:"samples"`
	Timesteps   int64   `json:"timesteps"`
	Spikes      float64 `json:"spikes"`
	SynapticOps float64 `json:"synaptic_ops"`
	EnergyUJ    float64 `json:"energy_uj"`
	DeviceMS    float64 `json:"device_ms"`
}

// Device is where a deployment runs. Kind is "cpu", "emulator" or
// "hardware".
type Device struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Vendor string `json:"vendor,omitempty"`
	Model  string `json:"model,omitempty"`
}

// DeploymentLoad is the sequences a deployment is stepping and those
// waiting for a slot.
type DeploymentLoad struct {
	Active int `json:"active"`
	Queued int `json:"queued"`
}

// CompileRequest asks the server to compile a spiking network.
type CompileRequest struct {
	// Format is "pytorch" (also "torchscript") or "onnx".
	Format string
	// File is the model file; the client base64-encodes it.
	File []byte
	// Name names the compiled network; default the server's choice.
	Name string
	// Target is a device name; default the CPU simulator.
	Target string
	// Options are compiler options (weight bits, timesteps, calibration,
	// ranges), passed through as JSON.
	Options map[string]any
}

// CompiledNetwork is the result of Compile.
type CompiledNetwork struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	Created   int64           `json:"created"`
	Name      string          `json:"name"`
	Status    string          `json:"status"`
	Source    CompileSource   `json:"source"`
	Network   NetworkReport   `json:"network"`
	Target    TargetReport    `json:"target"`
	Estimates json.RawMessage `json:"estimates"`
	Warnings  []string        `json:"warnings"`
	OwnedBy   string          `json:"owned_by"`
}

// NetworkReport counts what a compiled network holds.
type NetworkReport struct {
	Inputs     int `json:"inputs"`
	Outputs    int `json:"outputs"`
	Layers     int `json:"layers"`
	Neurons    int `json:"neurons"`
	Synapses   int `json:"synapses"`
	Parameters int `json:"parameters"`
}

// TargetReport says how a compiled network sits on its target device.
type TargetReport struct {
	Device      string  `json:"device"`
	CoresUsed   int     `json:"cores_used"`
	Utilisation float64 `json:"utilisation"`
	Fits        bool    `json:"fits"`
}

// CompileSource describes the uploaded file.
type CompileSource struct {
	Format string `json:"format"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// TelemetryQuery selects the caller's requests to report. The zero value
// reports everything since the server started.
type TelemetryQuery struct {
	// Window keeps the last Window of requests; 0 keeps all.
	Window     string
	Model      string
	Deployment string
}

// Telemetry reports the caller's own requests.
type Telemetry struct {
	Object string `json:"object"`
	Window struct {
		Start int64 `json:"start"`
		End   int64 `json:"end"`
	} `json:"window"`
	TelemetryGroup
	TimeToFirstTokenMS Percentiles                `json:"time_to_first_token_ms"`
	ByModel            map[string]*TelemetryGroup `json:"by_model"`
	ByDeployment       map[string]*TelemetryGroup `json:"by_deployment"`
	// Truncated is set when the window reaches past the oldest record
	// the server still holds.
	Truncated bool `json:"truncated,omitempty"`
}

// TelemetryGroup is the part of a report for a set of requests.
type TelemetryGroup struct {
	Requests     RequestCounts    `json:"requests"`
	LatencyMS    Percentiles      `json:"latency_ms"`
	Tokens       TokenCounts      `json:"tokens"`
	Neuromorphic NeuromorphicWork `json:"neuromorphic"`
}

// RequestCounts counts requests.
type RequestCounts struct {
	Total      int            `json:"total"`
	Errors     int            `json:"errors"`
	ByEndpoint map[string]int `json:"by_endpoint"`
}

// Percentiles of a distribution, in milliseconds.
type Percentiles struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
}

// TokenCounts counts tokens; PerSecond is completion tokens per second of
// the window.
type TokenCounts struct {
	Prompt     int     `json:"prompt"`
	Completion int     `json:"completion"`
	PerSecond  float64 `json:"per_second"`
}

// NeuromorphicWork is what the networks did for the requests.
type NeuromorphicWork struct {
	Timesteps        int64   `json:"timesteps"`
	Spikes           float64 `json:"spikes"`
	SynapticOps      float64 `json:"synaptic_ops"`
	SpikeRate        float64 `json:"spike_rate"`
	EnergyEstimateUJ float64 `json:"energy_estimate_uj"`
}

// Health is the server's health. Status is "ok", or "unavailable" with a
// Reason (then Health also returns an *APIError for the 503).
type Health struct {
	Status      string             `json:"status"`
	Reason      string             `json:"reason,omitempty"`
	Mock        bool               `json:"mock"`
	Deployments []DeploymentHealth `json:"deployments"`
}

// DeploymentHealth is one deployment's status in a health report.
type DeploymentHealth struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}
