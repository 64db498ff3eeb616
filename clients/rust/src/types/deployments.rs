use serde::{Deserialize, Serialize};

/// A model placed on a device.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Deployment {
    pub id: String,
    pub object: String,
    pub model: String,
    pub device: Device,
    pub status: DeploymentStatus,
    pub created: i64,
    #[serde(default)]
    pub replicas: u32,
    #[serde(default)]
    pub max_batch_size: u32,
    #[serde(default)]
    pub load: Load,
    /// Why a failed deployment failed.
    #[serde(default)]
    pub failure: Option<String>,
    /// The caller that created it, or `system` for the server's own.
    #[serde(default)]
    pub owned_by: String,
    /// In a cluster, the node that runs it.
    #[serde(default)]
    pub node: Option<String>,
}

/// Where a deployment stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum DeploymentStatus {
    Ready,
    Loading,
    Failed,
    /// A status this version of the client does not know.
    #[serde(other)]
    Unknown,
}

/// The device of a deployment. `kind` is `cpu`, `emulator` or `hardware`;
/// `model` names the simulator or chip (`int8 simulator`, say).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Device {
    pub name: String,
    pub kind: String,
    #[serde(default)]
    pub vendor: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
}

/// The sequences (or samples) a deployment is stepping, and those
/// waiting for a slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct Load {
    pub active: u32,
    pub queued: u32,
}

/// The body of `POST /v1/deployments`. Fields left None take the
/// server's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DeploymentRequest {
    /// A built-in model id (or alias) or one of the caller's networks.
    pub model: String,
    /// A registered device: `cpu`, `loihi`, `xylo`.
    pub device: String,
    /// 1-64 of `[A-Za-z0-9._-]`; default `dep-` and random characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_batch_size: Option<u32>,
    /// cpu only: `float32` (the default, exact), `bfloat16` or `int8`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<String>,
    /// In a cluster, the node to place it on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl DeploymentRequest {
    /// A request with the required fields; the rest take the defaults.
    pub fn new(model: impl Into<String>, device: impl Into<String>) -> Self {
        DeploymentRequest { model: model.into(), device: device.into(), ..Default::default() }
    }

    /// Sets `id`.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets `replicas`.
    pub fn replicas(mut self, n: u32) -> Self {
        self.replicas = Some(n);
        self
    }

    /// Sets `max_batch_size`.
    pub fn max_batch_size(mut self, n: u32) -> Self {
        self.max_batch_size = Some(n);
        self
    }

    /// Sets `precision`.
    pub fn precision(mut self, p: impl Into<String>) -> Self {
        self.precision = Some(p.into());
        self
    }

    /// Sets `node`.
    pub fn node(mut self, node: impl Into<String>) -> Self {
        self.node = Some(node.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record() {
        let d: Deployment = serde_json::from_str(
            r#"{"id":"neuro-1-digits-cpu","object":"deployment","model":"neuro-1-digits","device":{"name":"cpu","kind":"cpu",
            "vendor":"Neuro","model":"float32 simulator"},"status":"ready","created":1,"replicas":1,"max_batch_size":8,
            "load":{"active":0,"queued":0},"owned_by":"system"}"#,
        )
        .unwrap();
        assert_eq!((d.status, d.device.model.as_deref(), d.max_batch_size), (DeploymentStatus::Ready, Some("float32 simulator"), 8));
        let s: DeploymentStatus = serde_json::from_str(r#""migrating""#).unwrap();
        assert_eq!(s, DeploymentStatus::Unknown);
    }

    #[test]
    fn request_body() {
        let v = serde_json::to_value(DeploymentRequest::new("net-1", "loihi").id("mine")).unwrap();
        assert_eq!(v, serde_json::json!({"model":"net-1","device":"loihi","id":"mine"}));
    }
}
