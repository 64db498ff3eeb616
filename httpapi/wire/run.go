package wire

// RunRequest runs samples through a network's deployment (POST
// /v1/deployments/{id}/run). Each sample is one of: a vector presented
// at every step ([]float32), a matrix of one row per step
// ([][]float32), or an EventSample.
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
	Object     string      `json:"object"` // "network.run"
	Created    int64       `json:"created"`
	Model      string      `json:"model"`
	Deployment string      `json:"deployment"`
	Outputs    []RunOutput `json:"outputs"`
	Usage      RunUsage    `json:"usage"`
	Warnings   []string    `json:"warnings"`
}

// RunOutput is one sample's result. Spikes and Membrane are nil unless
// they were recorded; recorded spikes may be an empty list.
type RunOutput struct {
	Index       int         `json:"index"`
	SpikeCounts []float32   `json:"spike_counts"`
	Prediction  int         `json:"prediction"`
	FinalState  []float32   `json:"final_state"`
	Spikes      [][2]int    `json:"spikes,omitzero"`
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
