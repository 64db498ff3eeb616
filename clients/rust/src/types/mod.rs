//! The request and answer types of the API, one file per endpoint group.

mod chat;
mod compile;
mod completions;
mod deployments;
mod health;
mod models;
mod responses;
mod runs;
mod telemetry;

pub use chat::*;
pub use compile::*;
pub use completions::*;
pub use deployments::*;
pub use health::*;
pub(crate) use models::List;
pub use models::{Capabilities, ContextInfo, Deleted, Model, NetworkInfo};
pub use responses::*;
pub use runs::*;
pub use telemetry::*;
