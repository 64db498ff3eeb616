package wire

import "encoding/json"

// TelemetryQuery selects the caller's requests to report (the query of
// GET /v1/telemetry). The zero value reports everything the server holds.
type TelemetryQuery struct {
	// Window keeps the last Window of requests (a Go duration, "5m");
	// empty keeps all.
	Window     string
	Model      string
	Deployment string
}

// Telemetry reports the caller's own requests.
type Telemetry struct {
	Object string `json:"object"` // "telemetry"
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
	// Nodes are a cluster's nodes, up or not.
	Nodes []NodeStatus `json:"nodes,omitempty"`
}

// MarshalJSON writes the report with time_to_first_token_ms beside
// latency_ms, where API.md lists it.
func (t Telemetry) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Object             string                     `json:"object"`
		Window             any                        `json:"window"`
		Requests           RequestCounts              `json:"requests"`
		LatencyMS          Percentiles                `json:"latency_ms"`
		TimeToFirstTokenMS Percentiles                `json:"time_to_first_token_ms"`
		Tokens             TokenCounts                `json:"tokens"`
		Neuromorphic       NeuromorphicWork           `json:"neuromorphic"`
		ByModel            map[string]*TelemetryGroup `json:"by_model"`
		ByDeployment       map[string]*TelemetryGroup `json:"by_deployment"`
		Truncated          bool                       `json:"truncated,omitempty"`
		Nodes              []NodeStatus               `json:"nodes,omitempty"`
	}{t.Object, t.Window, t.Requests, t.LatencyMS, t.TimeToFirstTokenMS, t.Tokens, t.Neuromorphic, t.ByModel, t.ByDeployment, t.Truncated, t.Nodes})
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

// TokenCounts counts tokens; PerSecond is completion tokens per second
// spent generating them. Cached are the prompt tokens resumed from a
// saved state instead of read, and CacheHits the requests that resumed
// any.
type TokenCounts struct {
	Prompt     int     `json:"prompt"`
	Completion int     `json:"completion"`
	Cached     int     `json:"cached"`
	CacheHits  int     `json:"cache_hits"`
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

// NodeStatus is one node of a cluster as /v1/telemetry and /health
// report it.
type NodeStatus struct {
	Name string `json:"name"`
	// Up is false for a node that has joined and is not answering now:
	// the records it made before are in the totals, its later ones not.
	Up bool `json:"up"`
	// Self marks the node that answers.
	Self bool `json:"self,omitempty"`
}

// Health is the server's health (GET /health). Status is "ok", or
// "unavailable" with a Reason and an Error (the answer is then a 503).
type Health struct {
	Status      string             `json:"status"`
	Reason      string             `json:"reason,omitempty"`
	Mock        bool               `json:"mock"`
	Deployments []DeploymentHealth `json:"deployments"`
	// Node is the node that answers, and Nodes all of them (a cluster).
	Node  string       `json:"node,omitempty"`
	Nodes []NodeStatus `json:"nodes,omitempty"`
	Error *ErrorBody   `json:"error,omitempty"`
}

// DeploymentHealth is one deployment's status in a health report.
type DeploymentHealth struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}
