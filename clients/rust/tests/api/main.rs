//! The client against real `examples/server` processes, in mock and real
//! mode, and against a scripted stub for what a server does not do on
//! demand.

#[path = "../support/server.rs"]
mod server;

mod endpoints;
mod errors;
mod responses;
mod responses_stub;
mod retries;
mod snn;
mod streams;
mod stub;

use std::time::Duration;

use neuro_client::Client;

/// A client of `srv` with the key named `key` (see server::KEY_NAMES).
pub fn client(srv: &server::Server, key: &str) -> Client {
    Client::builder().base_url(&srv.url).api_key(server::key(key)).timeout(Duration::from_secs(60)).build().unwrap()
}

/// Both servers, for tests that hold in either mode.
pub fn both() -> [std::sync::Arc<server::Server>; 2] {
    [server::mock(), server::real()]
}

/// Bans the end tokens, so that a request runs to its max_tokens or the
/// context's end: the project's tokenizers put their special tokens
/// (<|endoftext|>, the turn markers and <|end|>) at ids 0 to 4.
pub fn endless(req: neuro_client::ChatCompletionRequest) -> neuro_client::ChatCompletionRequest {
    (0..=4).fold(req, |r, id| r.logit_bias(id, -100.0))
}
