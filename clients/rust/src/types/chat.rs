use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    System,
    /// Treated as `system`.
    Developer,
    User,
    Assistant,
    /// A role this version of the client does not know.
    #[serde(other)]
    Unknown,
}

/// One turn of a chat: the messages of a request, and the answer of a
/// choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    /// The text; None only in an assistant turn that called tools.
    #[serde(default)]
    pub content: Option<String>,
}

impl Message {
    /// A message with a role and a text.
    pub fn new(role: Role, content: impl Into<String>) -> Message {
        Message { role, content: Some(content.into()) }
    }

    /// A message with the role `system`.
    pub fn system(content: impl Into<String>) -> Message {
        Message::new(Role::System, content)
    }

    /// A message with the role `developer`.
    pub fn developer(content: impl Into<String>) -> Message {
        Message::new(Role::Developer, content)
    }

    /// A message with the role `user`.
    pub fn user(content: impl Into<String>) -> Message {
        Message::new(Role::User, content)
    }

    /// A message with the role `assistant`.
    pub fn assistant(content: impl Into<String>) -> Message {
        Message::new(Role::Assistant, content)
    }
}

/// Asks for the spiking activity of each streamed token (the `neuro`
/// extension; streams only).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NeuroOptions {
    pub activity: bool,
}

/// The body of a chat completion. Fields left None take the server's
/// defaults; the builder methods set them.
///
/// ```
/// use neuro_client::{ChatCompletionRequest, Message};
/// let req = ChatCompletionRequest::new("neuro-1-lite", vec![Message::user("Hi")]).max_tokens(32).temperature(0.0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChatCompletionRequest {
    /// A model id or alias; may be empty when `deployment` is set.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub model: String,
    pub messages: Vec<Message>,
    /// 0..2, default 1; 0 is greedy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// 0..1, default 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Choices, 1..8, default 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    /// Up to 4 strings that end a choice; they are left out of its text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    /// The same seed, request and deployment give the same output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// -2..2, default 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    /// -2..2, default 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    /// Token id to a bias of -100..100 added to its logit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logit_bias: Option<BTreeMap<u32, f64>>,
    /// Bounds the completion; None lets the model run to its end or the
    /// server's limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The newer name of `max_tokens`; give one of the two.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    /// Asks for each token's log-probability.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<bool>,
    /// 0..20 alternatives per position (needs `logprobs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<u32>,
    /// Identifies the end user (accepted, not stored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The `neuro` extension (spiking activity; streams only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub neuro: Option<NeuroOptions>,
    /// Streams only: one last chunk, with no choices, carries the usage.
    #[serde(skip)]
    pub include_usage: bool,
    /// Sends the request through this deployment
    /// (`/v1/deployments/{id}/chat/completions`) instead of `/v1/chat/completions`.
    #[serde(skip)]
    pub deployment: Option<String>,
}

impl ChatCompletionRequest {
    /// A request with the required fields; the rest take the defaults.
    pub fn new(model: impl Into<String>, messages: Vec<Message>) -> Self {
        ChatCompletionRequest { model: model.into(), messages, ..Default::default() }
    }

    /// Sets `temperature`.
    pub fn temperature(mut self, t: f64) -> Self {
        self.temperature = Some(t);
        self
    }

    /// Sets `top_p`.
    pub fn top_p(mut self, p: f64) -> Self {
        self.top_p = Some(p);
        self
    }

    /// Sets `n`.
    pub fn n(mut self, n: u32) -> Self {
        self.n = Some(n);
        self
    }

    pub fn stop<S: Into<String>>(mut self, stop: impl IntoIterator<Item = S>) -> Self {
        self.stop = Some(stop.into_iter().map(Into::into).collect());
        self
    }

    /// Sets `seed`.
    pub fn seed(mut self, seed: i64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Sets `presence_penalty`.
    pub fn presence_penalty(mut self, p: f64) -> Self {
        self.presence_penalty = Some(p);
        self
    }

    /// Sets `frequency_penalty`.
    pub fn frequency_penalty(mut self, p: f64) -> Self {
        self.frequency_penalty = Some(p);
        self
    }

    /// Adds `bias` to the logit of `token`.
    pub fn logit_bias(mut self, token: u32, bias: f64) -> Self {
        self.logit_bias.get_or_insert_with(BTreeMap::new).insert(token, bias);
        self
    }

    /// Sets `max_tokens`.
    pub fn max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = Some(n);
        self
    }

    /// Asks for log-probabilities, with `top` alternatives per position.
    pub fn logprobs(mut self, top: u32) -> Self {
        self.logprobs = Some(true);
        self.top_logprobs = Some(top);
        self
    }

    /// Sets `user`.
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// Streams only: each content chunk carries the neurons that fired.
    pub fn activity(mut self, on: bool) -> Self {
        self.neuro = on.then_some(NeuroOptions { activity: true });
        self
    }

    /// Streams only: a last chunk carries the usage.
    pub fn include_usage(mut self, on: bool) -> Self {
        self.include_usage = on;
        self
    }

    /// Sends the request through a deployment; `model` may then be empty.
    pub fn deployment(mut self, id: impl Into<String>) -> Self {
        self.deployment = Some(id.into());
        self
    }
}

/// Why a choice ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// The model ended, or a stop sequence matched.
    Stop,
    /// `max_tokens` or the context limit was reached.
    Length,
    /// A reason this version of the client does not know.
    #[serde(other)]
    Other,
}

/// The answer of a chat completion.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ChatCompletion {
    pub id: String,
    pub object: String,
    pub created: i64,
    pub model: String,
    pub choices: Vec<ChatChoice>,
    #[serde(default)]
    pub usage: Usage,
}

impl ChatCompletion {
    /// The first choice's text ("" without one).
    pub fn content(&self) -> &str {
        self.choices.first().and_then(|c| c.message.content.as_deref()).unwrap_or("")
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ChatChoice {
    pub index: u32,
    pub message: Message,
    #[serde(default)]
    pub logprobs: Option<ChatLogprobs>,
    #[serde(default)]
    pub finish_reason: Option<FinishReason>,
}

/// The log-probabilities of a choice's tokens.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ChatLogprobs {
    #[serde(default)]
    pub content: Vec<TokenLogprob>,
}

/// A token with its log-probability (minus infinity is sent as -9999)
/// and its UTF-8 bytes (`token` is U+FFFD for part of a character).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TokenLogprob {
    pub token: String,
    pub logprob: f64,
    #[serde(default)]
    pub bytes: Option<Vec<u8>>,
    #[serde(default)]
    pub top_logprobs: Vec<TokenLogprob>,
}

/// Tokens a request used, and what its answer cost the device.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub total_tokens: u32,
    /// `cached_tokens`: the prompt tokens resumed from an earlier request's
    /// state instead of recomputed (0 on a miss); None from a server that
    /// does not report it.
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
    #[serde(default)]
    pub neuromorphic: Option<NeuromorphicUsage>,
}

/// The prompt tokens resumed from an earlier request's state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct PromptTokensDetails {
    #[serde(default)]
    pub cached_tokens: u32,
}

/// The device's work for an answer.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct NeuromorphicUsage {
    #[serde(default)]
    pub timesteps: u64,
    #[serde(default)]
    pub spikes: f64,
    #[serde(default)]
    pub synaptic_ops: f64,
    #[serde(default)]
    pub energy_uj: f64,
}

/// One event of a streamed chat completion. The first chunk of a choice
/// carries `delta.role`, its last the `finish_reason`; with
/// `include_usage`, a last chunk has no choices and the `usage`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ChatCompletionChunk {
    pub id: String,
    pub object: String,
    pub created: i64,
    pub model: String,
    pub choices: Vec<ChunkChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
    /// The spiking activity behind this chunk's tokens, when asked for.
    #[serde(default)]
    pub neuro: Option<ChunkActivity>,
}

impl ChatCompletionChunk {
    /// The first choice's new text ("" without one).
    pub fn content(&self) -> &str {
        self.choices.first().and_then(|c| c.delta.content.as_deref()).unwrap_or("")
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ChunkChoice {
    pub index: u32,
    pub delta: Delta,
    #[serde(default)]
    pub logprobs: Option<ChatLogprobs>,
    #[serde(default)]
    pub finish_reason: Option<FinishReason>,
}

/// New text of a choice.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Delta {
    #[serde(default)]
    pub role: Option<Role>,
    #[serde(default)]
    pub content: Option<String>,
}

/// The neurons that fired while a chunk's tokens were computed.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ChunkActivity {
    #[serde(default)]
    pub activity: Vec<LayerActivity>,
}

/// One spiking layer's activity: its size and the indices that fired (at
/// most 512 per token).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct LayerActivity {
    pub layer: String,
    pub neurons: u32,
    #[serde(default)]
    pub spikes: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_body() {
        let req = ChatCompletionRequest::new("neuro-1-lite", vec![Message::system("Be brief."), Message::user("Hi")])
            .max_tokens(8)
            .temperature(0.0)
            .stop(["\n"])
            .logit_bias(4, -100.0)
            .include_usage(true)
            .deployment("d");
        let v = serde_json::to_value(&req).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"model":"neuro-1-lite","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],
                "temperature":0.0,"stop":["\n"],"logit_bias":{"4":-100.0},"max_tokens":8})
        );
        let through = ChatCompletionRequest { model: String::new(), ..req };
        assert!(serde_json::to_value(&through).unwrap().get("model").is_none());
    }

    #[test]
    fn answer_and_chunk() {
        let c: ChatCompletion = serde_json::from_str(
            r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"neuro-1-lite",
            "choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"logprobs":null,"finish_reason":"stop"}],
            "usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10,"prompt_tokens_details":{"cached_tokens":6},"neuromorphic":{"timesteps":10,"spikes":5,"synaptic_ops":7,"energy_uj":0.5}}}"#,
        )
        .unwrap();
        assert_eq!((c.content(), c.choices[0].finish_reason, c.usage.total_tokens), ("Hello", Some(FinishReason::Stop), 10));
        assert_eq!(c.usage.prompt_tokens_details.as_ref().map(|d| d.cached_tokens), Some(6));
        let k: ChatCompletionChunk = serde_json::from_str(
            r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" hi"},
            "logprobs":null,"finish_reason":null}],"neuro":{"activity":[{"layer":"lif1","neurons":373,"spikes":[3,9]}]}}"#,
        )
        .unwrap();
        assert_eq!(k.content(), " hi");
        assert_eq!(k.neuro.unwrap().activity[0].spikes, [3, 9]);
        let r: FinishReason = serde_json::from_str(r#""content_filter""#).unwrap();
        assert_eq!(r, FinishReason::Other);
    }
}
