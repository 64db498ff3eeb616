package wire

import "encoding/json"

// CompileRequest asks the server to compile a spiking network (POST
// /v1/compile). Its body is {"model_format", "model_file" (base64),
// "name", "target", "options"}.
type CompileRequest struct {
	// Format is "pytorch" (also "torchscript"), "onnx" or "nir".
	Format string
	// File is the model file; it travels base64-encoded.
	File []byte
	// Name names the compiled network; default the server's choice.
	Name string
	// Target is a device name; default the CPU simulator.
	Target string
	// Options are compiler options (weight bits, timesteps, calibration,
	// ranges, layers), passed through as JSON.
	Options map[string]any
}

// CompiledNetwork is the result of a compile: a network stored as a
// model its caller owns.
type CompiledNetwork struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"` // "compiled_network"
	Created int64         `json:"created"`
	Name    string        `json:"name"`
	Status  string        `json:"status"`
	Source  CompileSource `json:"source"`
	Network NetworkReport `json:"network"`
	Target  TargetReport  `json:"target"`
	// Estimates are per timestep, from the target's cost model
	// (energy_per_timestep_nj, latency_per_timestep_us, basis, …).
	Estimates json.RawMessage `json:"estimates"`
	Warnings  []string        `json:"warnings"`
	OwnedBy   string          `json:"owned_by"`
	// LanguageModel is set for a network compiled with options.task
	// "causal-lm".
	LanguageModel *LanguageModelReport `json:"language_model,omitempty"`
}

// LanguageModelReport describes a network compiled as a language model.
type LanguageModelReport struct {
	Tokenizer     string `json:"tokenizer"` // its name, or "custom" for options.tokenizer_file
	VocabSize     int    `json:"vocab_size"`
	ChatTemplate  string `json:"chat_template,omitempty"`
	ContextLength int    `json:"context_length"`
	// StateBytes is one sequence's saved state: what a stored
	// conversation costs, whatever its length.
	StateBytes int `json:"state_bytes"`
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
