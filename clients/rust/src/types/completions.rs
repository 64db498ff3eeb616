use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::chat::{FinishReason, NeuroOptions, Usage};

/// The prompt of a text completion: one string, or up to 16, each with
/// its own choices.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Prompt {
    Text(String),
    Batch(Vec<String>),
}

impl Default for Prompt {
    fn default() -> Self {
        Prompt::Text(String::new())
    }
}

impl From<&str> for Prompt {
    fn from(s: &str) -> Self {
        Prompt::Text(s.to_string())
    }
}

impl From<String> for Prompt {
    fn from(s: String) -> Self {
        Prompt::Text(s)
    }
}

impl From<Vec<String>> for Prompt {
    fn from(v: Vec<String>) -> Self {
        Prompt::Batch(v)
    }
}

impl From<Vec<&str>> for Prompt {
    fn from(v: Vec<&str>) -> Self {
        Prompt::Batch(v.into_iter().map(str::to_string).collect())
    }
}

/// The body of a text completion. Fields left None take the server's
/// defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CompletionRequest {
    pub model: String,
    pub prompt: Prompt,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Choices per prompt; a choice's `index` is `prompt_index * n + choice`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logit_bias: Option<BTreeMap<u32, f64>>,
    /// May be 0 here (with `echo` and `logprobs`, to score the prompt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// 0..5: log-probabilities with that many alternatives per position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<u32>,
    /// Puts the prompt before each choice's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub echo: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub neuro: Option<NeuroOptions>,
    /// Streams only: one last chunk, with no choices, carries the usage.
    #[serde(skip)]
    pub include_usage: bool,
}

impl CompletionRequest {
    /// A request with the required fields; the rest take the defaults.
    pub fn new(model: impl Into<String>, prompt: impl Into<Prompt>) -> Self {
        CompletionRequest { model: model.into(), prompt: prompt.into(), ..Default::default() }
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
        self.logprobs = Some(top);
        self
    }

    /// Sets `echo`.
    pub fn echo(mut self, on: bool) -> Self {
        self.echo = Some(on);
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
}

/// The answer of a text completion, and each chunk of a streamed one.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Completion {
    pub id: String,
    pub object: String,
    pub created: i64,
    pub model: String,
    pub choices: Vec<CompletionChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

impl Completion {
    /// The first choice's text ("" without one).
    pub fn text(&self) -> &str {
        self.choices.first().map(|c| c.text.as_str()).unwrap_or("")
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CompletionChoice {
    pub text: String,
    pub index: u32,
    #[serde(default)]
    pub logprobs: Option<CompletionLogprobs>,
    #[serde(default)]
    pub finish_reason: Option<FinishReason>,
}

/// The legacy completions format. A None in `token_logprobs` (and
/// `top_logprobs`) is the first token of an echoed prompt, which has no
/// context to be predicted from.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CompletionLogprobs {
    #[serde(default)]
    pub tokens: Vec<String>,
    #[serde(default)]
    pub token_logprobs: Vec<Option<f64>>,
    #[serde(default)]
    pub top_logprobs: Vec<Option<BTreeMap<String, f64>>>,
    #[serde(default)]
    pub text_offset: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts() {
        let one = serde_json::to_value(CompletionRequest::new("m", "Once").max_tokens(0).echo(true)).unwrap();
        assert_eq!(one, serde_json::json!({"model":"m","prompt":"Once","max_tokens":0,"echo":true}));
        let two = serde_json::to_value(CompletionRequest::new("m", vec!["a", "b"])).unwrap();
        assert_eq!(two, serde_json::json!({"model":"m","prompt":["a","b"]}));
    }
}
