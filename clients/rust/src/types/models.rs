use serde::Deserialize;

/// A model: a built-in language model, or a network the caller compiled
/// (`net-…`, owned by the caller).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Model {
    pub id: String,
    pub object: String,
    pub created: i64,
    /// `neuro` for the built-in models, the caller's principal for its
    /// compiled networks.
    pub owned_by: String,
    #[serde(default)]
    pub capabilities: Capabilities,
    #[serde(default)]
    pub neuromorphic: Option<NetworkInfo>,
    #[serde(default)]
    pub description: Option<String>,
    /// The model card (architecture, training, license, quality figures)
    /// where the model has one; its fields are open-ended.
    #[serde(default)]
    pub card: Option<serde_json::Value>,
}

/// What a model can serve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct Capabilities {
    #[serde(default)]
    pub chat: bool,
    #[serde(default)]
    pub completions: bool,
    #[serde(default)]
    pub streaming: bool,
    #[serde(default)]
    pub logprobs: bool,
}

/// The network behind a model.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct NetworkInfo {
    #[serde(default)]
    pub neurons: u64,
    #[serde(default)]
    pub synapses: u64,
    #[serde(default)]
    pub layers: u32,
    #[serde(default)]
    pub parameters: u64,
    /// Language models: timesteps per token.
    #[serde(default)]
    pub timesteps_per_token: Option<u32>,
    /// Compiled networks: the default timesteps of a run.
    #[serde(default)]
    pub timesteps_per_sample: Option<u32>,
    #[serde(default)]
    pub context: Option<ContextInfo>,
    /// The devices it is deployed on and those it fits.
    #[serde(default)]
    pub devices: Vec<String>,
}

/// How a model holds its context; `length` 0 is unbounded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ContextInfo {
    #[serde(default)]
    pub handling: String,
    #[serde(default)]
    pub length: u64,
}

/// The answer of a DELETE.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Deleted {
    pub id: String,
    pub object: String,
    pub deleted: bool,
}

/// `{"object":"list","data":[...]}`.
#[derive(Deserialize)]
pub(crate) struct List<T> {
    pub(crate) data: Vec<T>,
}
