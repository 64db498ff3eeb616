use std::collections::BTreeMap;

use serde::Deserialize;

/// Which of the caller's requests a telemetry report covers. The default
/// covers all since the server started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TelemetryQuery {
    /// A Go duration: `90s`, `5m`, `1h`.
    pub window: Option<String>,
    /// Only this model's requests (an alias is resolved).
    pub model: Option<String>,
    /// Only this deployment's requests.
    pub deployment: Option<String>,
}

impl TelemetryQuery {
    /// Everything since the server started.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `window`.
    pub fn window(mut self, w: impl Into<String>) -> Self {
        self.window = Some(w.into());
        self
    }

    /// Sets `model`.
    pub fn model(mut self, m: impl Into<String>) -> Self {
        self.model = Some(m.into());
        self
    }

    /// Sets `deployment`.
    pub fn deployment(mut self, d: impl Into<String>) -> Self {
        self.deployment = Some(d.into());
        self
    }
}

/// The caller's own requests: counts, latency, tokens and the devices'
/// work, in total and by model and deployment.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TelemetryReport {
    pub object: String,
    pub window: Window,
    #[serde(flatten)]
    pub totals: TelemetryGroup,
    #[serde(default)]
    pub time_to_first_token_ms: Percentiles,
    #[serde(default)]
    pub by_model: BTreeMap<String, TelemetryGroup>,
    #[serde(default)]
    pub by_deployment: BTreeMap<String, TelemetryGroup>,
    /// Set when the window reaches past the oldest record the server keeps.
    #[serde(default)]
    pub truncated: bool,
    /// In a cluster, its nodes; one that is down has `up: false`.
    #[serde(default)]
    pub nodes: Vec<NodeStatus>,
}

/// The window of a report, in Unix seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct Window {
    pub start: i64,
    pub end: i64,
}

/// The figures of a set of requests.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct TelemetryGroup {
    #[serde(default)]
    pub requests: RequestCounts,
    #[serde(default)]
    pub latency_ms: Percentiles,
    #[serde(default)]
    pub tokens: TokenCounts,
    #[serde(default)]
    pub neuromorphic: NeuromorphicTotals,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RequestCounts {
    pub total: u64,
    pub errors: u64,
    /// By route template: `/v1/chat/completions`,
    /// `/v1/deployments/{deployment_id}/run`, ...
    #[serde(default)]
    pub by_endpoint: BTreeMap<String, u64>,
}

/// A distribution, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    #[serde(default)]
    pub mean: f64,
}

/// Tokens; `per_second` is completion tokens per second spent generating.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
pub struct TokenCounts {
    pub prompt: u64,
    pub completion: u64,
    #[serde(default)]
    pub per_second: f64,
}

/// What the devices did; `spike_rate` is the fraction of spiking neurons
/// that fired per timestep.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
pub struct NeuromorphicTotals {
    #[serde(default)]
    pub timesteps: u64,
    #[serde(default)]
    pub spikes: f64,
    #[serde(default)]
    pub synaptic_ops: f64,
    #[serde(default)]
    pub spike_rate: f64,
    #[serde(default)]
    pub energy_estimate_uj: f64,
}

/// A node of a cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct NodeStatus {
    pub name: String,
    pub up: bool,
    /// The node that answered.
    #[serde(default, rename = "self")]
    pub this: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report() {
        let t: TelemetryReport = serde_json::from_str(
            r#"{"object":"telemetry","window":{"start":1,"end":2},"requests":{"total":6,"errors":1,"by_endpoint":{"/v1/chat/completions":4}},
            "latency_ms":{"p50":1.9,"p95":362.3,"p99":362.3,"mean":78.8},"time_to_first_token_ms":{"p50":0.4,"p95":2.5,"p99":2.5,"mean":1.1},
            "tokens":{"prompt":26,"completion":4095,"per_second":8858.2},"neuromorphic":{"timesteps":4120,"spikes":1370270,"synaptic_ops":8411170640,
            "spike_rate":0.11,"energy_estimate_uj":16867.4},"by_model":{"neuro-1-heavy":{"requests":{"total":1,"errors":0,"by_endpoint":{}},
            "latency_ms":{"p50":1,"p95":1,"p99":1,"mean":1},"tokens":{"prompt":10,"completion":2038,"per_second":5663.3},
            "neuromorphic":{"timesteps":2048,"spikes":1,"synaptic_ops":1,"spike_rate":0.1,"energy_estimate_uj":1}}},"by_deployment":{}}"#,
        )
        .unwrap();
        assert_eq!((t.totals.requests.total, t.totals.tokens.completion, t.by_model["neuro-1-heavy"].tokens.completion), (6, 4095, 2038));
        assert_eq!(t.totals.requests.by_endpoint["/v1/chat/completions"], 4);
    }
}
