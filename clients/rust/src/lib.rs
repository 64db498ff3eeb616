//! A blocking client for the Neuro REST API: the OpenAI-style half (chat
//! and text completions, models) and the neuromorphic half (compile,
//! deployments, runs, telemetry).
//!
//! # Overview
//!
//! ```no_run
//! use neuro_client::{ChatCompletionRequest, Client, DeploymentRequest, Format, Message, RunRequest};
//! use std::time::Duration;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::new("http://127.0.0.1:8080", "sk-local-1")?; // or Client::from_env()?
//!
//! let req = ChatCompletionRequest::new("neuro-1-lite", vec![Message::user("Hi")]).max_tokens(32);
//! println!("{}", client.chat().create(&req)?.content());
//! for chunk in client.chat().stream(&req)? {
//!     print!("{}", chunk?.content());
//! }
//!
//! let net = client.networks().compile(&std::fs::read("net.pt")?, Format::PyTorch, None)?;
//! let dep = client.deployments().create(&DeploymentRequest::new(&net.id, "cpu"))?;
//! client.deployments().wait(&dep.id, Duration::from_secs(60))?;
//! let out = client.deployments().run(&dep.id, &RunRequest::new(vec![vec![0.5f32; 8]]))?;
//! println!("{:?}", out.outputs[0].spike_counts);
//! # Ok(()) }
//! ```
//!
//! Every call returns [`Result`]; an [`Error::Api`] carries the server's
//! `status`, `type`, `code`, `param` and `message`, and a
//! [`kind`](ApiErrorKind) per status.
//!
//! # Invariants
//!
//! - A [`Client`] holds no per-call state: clones share its connections,
//!   and it may be used from several threads at once.
//! - A call that failed with a connection error, a 429 or a 503 is sent
//!   again, up to `max_retries` times (default 2), after the server's
//!   `Retry-After` or an exponential backoff with jitter. Nothing else is
//!   retried, and a POST that may have reached the server is not retried
//!   unless [`ClientBuilder::retry_non_idempotent`] asks for it.
//! - A stream is read as it arrives, one event at a time; dropping it
//!   closes the connection, which makes the server stop generating.
//! - The API key is sent only in the `Authorization` header of `/v1`
//!   calls, and never appears in an error or in `Debug` output.

#![forbid(unsafe_code)]
// Error::Api is a struct variant that callers match field by field; its
// size on the (cold) error path matters less.
#![allow(clippy::result_large_err)]
#![warn(missing_debug_implementations)]

mod client;
mod encode;
mod error;
mod resources;
mod retry;
mod sse;
mod types;

pub use client::{Client, ClientBuilder, DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT};
pub use error::{ApiErrorKind, DecodeError, Error, Result, TransportError};
pub use resources::{Chat, Completions, Deployments, Models, Networks, Responses, Telemetry};
pub use sse::Stream;
pub use types::*;

// The README's examples are compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
