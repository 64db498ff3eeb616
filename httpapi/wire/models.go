package wire

// List is the answer of a listing (GET /v1/models, /v1/deployments).
type List[T any] struct {
	Object string `json:"object"` // "list"
	Data   []T    `json:"data"`
}

// Model describes a model: a built-in language model or a network
// compiled through /v1/compile.
type Model struct {
	ID           string        `json:"id"`
	Object       string        `json:"object"` // "model"
	Created      int64         `json:"created"`
	OwnedBy      string        `json:"owned_by"`
	Capabilities Capabilities  `json:"capabilities"`
	Neuromorphic *Neuromorphic `json:"neuromorphic"`
	Description  string        `json:"description,omitempty"`
	// Card is the model card, for models that have one.
	Card *Card `json:"card,omitempty"`
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

// Card describes a model for people: what it is, how it was made, how
// good it is.
type Card struct {
	Description  string `json:"description,omitempty"`
	Architecture string `json:"architecture,omitempty"`
	Parameters   int    `json:"parameters,omitempty"`
	Neurons      int    `json:"neurons,omitempty"`
	Synapses     int    `json:"synapses,omitempty"`
	Training     string `json:"training,omitempty"`
	License      string `json:"license,omitempty"`
	// Quality holds the measured figures (held-out bits per byte,
	// spiking cost, accuracy), named by what they measure.
	Quality map[string]float64 `json:"quality,omitempty"`
	// Extra holds the rest: numbers, lists, and prose that says how a
	// figure was measured and on which machine.
	Extra map[string]any `json:"extra,omitempty"`
}

// Deployment is a model placed on a device.
type Deployment struct {
	ID           string         `json:"id"`
	Object       string         `json:"object"` // "deployment"
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
	// Node is the cluster node that runs it (a cluster only).
	Node string `json:"node,omitempty"`
	// Waiting says what a deployment that runs on no node waits for.
	Waiting string `json:"waiting,omitempty"`
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
	// Node places the deployment on a named node of a cluster.
	Node string `json:"node,omitempty"`
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

// Deleted answers a DELETE.
type Deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}
