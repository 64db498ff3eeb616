use serde::Deserialize;

use super::telemetry::NodeStatus;

/// The server's health.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Health {
    /// `ok`, or `unavailable` with a `reason`.
    pub status: String,
    #[serde(default)]
    pub reason: Option<String>,
    /// Whether the server runs in mock mode.
    #[serde(default)]
    pub mock: bool,
    /// The server's own deployments.
    #[serde(default)]
    pub deployments: Vec<DeploymentHealth>,
    /// In a cluster, the node that answered and all the nodes.
    #[serde(default)]
    pub node: Option<String>,
    #[serde(default)]
    pub nodes: Vec<NodeStatus>,
}

impl Health {
    /// Whether the server can serve.
    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }
}

/// One deployment in a health report.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DeploymentHealth {
    pub id: String,
    pub status: String,
}
