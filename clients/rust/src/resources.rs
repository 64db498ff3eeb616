//! The endpoint groups, as the OpenAI SDKs arrange them:
//! `client.chat().create(..)`, `client.deployments().run(..)`.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::client::Request;
use crate::encode::{base64_into, path_segment};
use crate::sse::Stream;
use crate::types::{
    ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, CompileOptions, CompiledNetwork, Completion, CompletionRequest, Deleted,
    Deployment, DeploymentRequest, DeploymentStatus, Format, List, Model, Response, ResponseRequest, ResponseStreamEvent, Run, RunRequest,
    TelemetryQuery, TelemetryReport,
};
use crate::{Client, Error, Result};

/// `stream: true` and its options, added to a request's own fields.
#[derive(Serialize)]
struct Streamed<'a, T> {
    #[serde(flatten)]
    req: &'a T,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

impl<'a, T> Streamed<'a, T> {
    fn new(req: &'a T, include_usage: bool) -> Self {
        Streamed { req, stream: true, stream_options: include_usage.then_some(StreamOptions { include_usage: true }) }
    }
}

/// The path of a resource: `prefix/{id}` and what follows, with the id
/// escaped.
fn path(prefix: &str, id: &str, rest: &str) -> Result<String> {
    if id.is_empty() {
        return Err(Error::InvalidArgument(format!("{prefix}: empty id")));
    }
    Ok(format!("{prefix}/{}{rest}", path_segment(id)))
}

/// Chat completions: `POST /v1/chat/completions`, or through a deployment.
#[derive(Debug, Clone, Copy)]
pub struct Chat<'a> {
    pub(crate) client: &'a Client,
}

impl Chat<'_> {
    /// Asks for a chat completion.
    pub fn create(&self, req: &ChatCompletionRequest) -> Result<ChatCompletion> {
        self.client.json(&Request::post(chat_path(req)?, req)?)
    }

    /// Streams a chat completion: an iterator of chunks, which ends after
    /// the last one. Dropping it closes the connection and the server
    /// stops generating.
    pub fn stream(&self, req: &ChatCompletionRequest) -> Result<Stream<ChatCompletionChunk>> {
        self.client.stream(&Request::post(chat_path(req)?, &Streamed::new(req, req.include_usage))?)
    }
}

fn chat_path(req: &ChatCompletionRequest) -> Result<String> {
    match &req.deployment {
        Some(id) => path("/v1/deployments", id, "/chat/completions"),
        None => Ok("/v1/chat/completions".to_string()),
    }
}

/// Text completions: `POST /v1/completions`.
#[derive(Debug, Clone, Copy)]
pub struct Completions<'a> {
    pub(crate) client: &'a Client,
}

impl Completions<'_> {
    /// Asks for a text completion.
    pub fn create(&self, req: &CompletionRequest) -> Result<Completion> {
        self.client.json(&Request::post("/v1/completions".into(), req)?)
    }

    /// Streams a text completion: each chunk holds new text of one choice.
    /// (A server in mock mode answers 400 `stream_not_supported`.)
    pub fn stream(&self, req: &CompletionRequest) -> Result<Stream<Completion>> {
        self.client.stream(&Request::post("/v1/completions".into(), &Streamed::new(req, req.include_usage))?)
    }
}

/// Responses, OpenAI's stateful conversations: `/v1/responses`.
#[derive(Debug, Clone, Copy)]
pub struct Responses<'a> {
    pub(crate) client: &'a Client,
}

impl Responses<'_> {
    /// Makes a response, one turn of a conversation that the server stores
    /// (unless `store(false)`); `previous_response_id` continues an earlier
    /// one.
    pub fn create(&self, req: &ResponseRequest) -> Result<Response> {
        self.client.json(&Request::post("/v1/responses".into(), req)?)
    }

    /// Streams a response: an iterator of typed events, which ends after
    /// `Completed`, `Incomplete` or `Failed`. Dropping it closes the
    /// connection and the server stops generating.
    pub fn stream(&self, req: &ResponseRequest) -> Result<Stream<ResponseStreamEvent>> {
        let s: Stream<ResponseStreamEvent> = self.client.stream(&Request::post("/v1/responses".into(), &Streamed::new(req, false))?)?;
        Ok(s.ending_after(ResponseStreamEvent::is_last))
    }

    /// A stored response: 404 `response_not_found` for an unknown, expired,
    /// unstored or another key's one.
    pub fn retrieve(&self, id: &str) -> Result<Response> {
        self.client.json(&Request::get(path("/v1/responses", id, "")?))
    }

    /// Deletes a stored response.
    pub fn delete(&self, id: &str) -> Result<Deleted> {
        self.client.json(&Request::delete(path("/v1/responses", id, "")?))
    }
}

/// Models: `/v1/models`.
#[derive(Debug, Clone, Copy)]
pub struct Models<'a> {
    pub(crate) client: &'a Client,
}

impl Models<'_> {
    /// The built-in language models and the caller's compiled networks.
    pub fn list(&self) -> Result<Vec<Model>> {
        let l: List<Model> = self.client.json(&Request::get("/v1/models".into()))?;
        Ok(l.data)
    }

    /// One model (`neuro-1` is answered as `neuro-1-standard`).
    pub fn retrieve(&self, id: &str) -> Result<Model> {
        self.client.json(&Request::get(path("/v1/models", id, "")?))
    }

    /// Deletes one of the caller's compiled networks: 409 while a
    /// deployment uses it, 403 for a built-in model.
    pub fn delete(&self, id: &str) -> Result<Deleted> {
        self.client.json(&Request::delete(path("/v1/models", id, "")?))
    }
}

/// Compiling spiking networks: `POST /v1/compile`.
#[derive(Debug, Clone, Copy)]
pub struct Networks<'a> {
    pub(crate) client: &'a Client,
}

#[derive(Serialize)]
struct CompileBody<'a> {
    model_format: &'static str,
    model_file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    options: Option<&'a CompileOptions>,
}

impl Networks<'_> {
    /// Uploads a network file (base64 on the wire) and compiles it. The
    /// network is stored and listed among the caller's models; its `id`
    /// is the model to deploy.
    pub fn compile(&self, file: &[u8], format: Format, options: Option<&CompileOptions>) -> Result<CompiledNetwork> {
        let mut model_file = String::new();
        base64_into(&mut model_file, file);
        let body = CompileBody {
            model_format: format.as_str(),
            model_file,
            name: options.and_then(|o| o.name.as_deref()),
            target: options.and_then(|o| o.target.as_deref()),
            options: options.filter(|o| o.has_options()),
        };
        self.client.json(&Request::post("/v1/compile".into(), &body)?)
    }
}

/// Deployments: `/v1/deployments`, and running networks on them.
#[derive(Debug, Clone, Copy)]
pub struct Deployments<'a> {
    pub(crate) client: &'a Client,
}

impl Deployments<'_> {
    /// The server's deployments and the caller's own.
    pub fn list(&self) -> Result<Vec<Deployment>> {
        let l: List<Deployment> = self.client.json(&Request::get("/v1/deployments".into()))?;
        Ok(l.data)
    }

    /// One deployment, with its current load.
    pub fn retrieve(&self, id: &str) -> Result<Deployment> {
        self.client.json(&Request::get(path("/v1/deployments", id, "")?))
    }

    /// Places a model on a device. The server waits a while for it to
    /// load; a longer load answers with status `loading`: see
    /// [`wait`](Self::wait).
    pub fn create(&self, req: &DeploymentRequest) -> Result<Deployment> {
        self.client.json(&Request::post("/v1/deployments".into(), req)?)
    }

    /// Polls a deployment until it is no longer loading: returns it when
    /// ready, [`Error::DeploymentFailed`] when it failed, [`Error::Timeout`]
    /// when `timeout` passed first.
    pub fn wait(&self, id: &str, timeout: Duration) -> Result<Deployment> {
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_millis(50);
        loop {
            let d = self.retrieve(id)?;
            match d.status {
                DeploymentStatus::Ready => return Ok(d),
                DeploymentStatus::Failed => {
                    return Err(Error::DeploymentFailed { id: d.id, failure: d.failure.unwrap_or_default() });
                }
                _ => {}
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::Timeout);
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    /// Deletes one of the caller's deployments; requests already running
    /// on it finish. The server's own: 403.
    pub fn delete(&self, id: &str) -> Result<Deleted> {
        self.client.json(&Request::delete(path("/v1/deployments", id, "")?))
    }

    /// Runs samples through a network's deployment.
    pub fn run(&self, id: &str, req: &RunRequest) -> Result<Run> {
        self.client.json(&Request::post(path("/v1/deployments", id, "/run")?, req)?)
    }
}

/// The caller's telemetry: `GET /v1/telemetry`.
#[derive(Debug, Clone, Copy)]
pub struct Telemetry<'a> {
    pub(crate) client: &'a Client,
}

impl Telemetry<'_> {
    /// Reports the caller's own requests that `query` selects.
    pub fn retrieve(&self, query: &TelemetryQuery) -> Result<TelemetryReport> {
        let mut req = Request::get("/v1/telemetry".into());
        for (k, v) in [("window", &query.window), ("model", &query.model), ("deployment", &query.deployment)] {
            if let Some(v) = v {
                req.query.push((k, v.clone()));
            }
        }
        self.client.json(&req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Message;

    #[test]
    fn stream_body_adds_stream_fields() {
        let req = ChatCompletionRequest::new("m", vec![Message::user("Hi")]).max_tokens(3).include_usage(true);
        let v = serde_json::to_value(Streamed::new(&req, req.include_usage)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"model":"m","messages":[{"role":"user","content":"Hi"}],"max_tokens":3,"stream":true,"stream_options":{"include_usage":true}})
        );
        let v = serde_json::to_value(Streamed::new(&req, false)).unwrap();
        assert!(v.get("stream_options").is_none());
    }

    #[test]
    fn paths() {
        assert_eq!(path("/v1/deployments", "a b", "/run").unwrap(), "/v1/deployments/a%20b/run");
        assert!(matches!(path("/v1/models", "", ""), Err(Error::InvalidArgument(_))));
        let req = ChatCompletionRequest::new("", vec![]).deployment("neuro-1-lite-loihi");
        assert_eq!(chat_path(&req).unwrap(), "/v1/deployments/neuro-1-lite-loihi/chat/completions");
    }
}
