use std::error::Error as StdError;
use std::fmt;
use std::io::{self, Read};
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{api_error, DecodeError, TransportError};
use crate::resources::{Chat, Completions, Deployments, Models, Networks, Responses, Telemetry};
use crate::retry::{parse_retry_after, Failure, RetryPolicy};
use crate::sse::Stream;
use crate::types::Health;
use crate::{Error, Result};

/// The server root when neither an argument nor `NEURO_BASE_URL` gives
/// one: where `examples/server` listens by default.
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:8080";

/// The longest a call may take, by default (as the OpenAI SDKs).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Retries after a failed attempt, by default.
pub const DEFAULT_MAX_RETRIES: u32 = 2;

/// How much of an error body is read: a misbehaving proxy cannot make the
/// client buffer without limit.
const MAX_ERROR_BODY: u64 = 1 << 20;

/// A client of one Neuro server. Cloning is cheap and clones share their
/// connections; a client is safe to use from several threads.
///
/// ```no_run
/// # fn main() -> neuro_client::Result<()> {
/// let client = neuro_client::Client::new("http://127.0.0.1:8080", "sk-local-1")?;
/// println!("{:?}", client.health()?.status);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    base: String,
    auth: Option<String>,
    agent: ureq::Agent,
    stream_agent: ureq::Agent,
    timeout: Duration,
    connect_timeout: Duration,
    user_agent: String,
    retry: RetryPolicy,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key.
        f.debug_struct("Client")
            .field("base_url", &self.inner.base)
            .field("timeout", &self.inner.timeout)
            .field("max_retries", &self.inner.retry.max_retries)
            .finish()
    }
}

/// Configures a [`Client`]. A setting left alone takes its default; the
/// base URL and the key then come from the environment.
#[derive(Clone)]
pub struct ClientBuilder {
    base_url: Option<String>,
    api_key: Option<String>,
    timeout: Duration,
    connect_timeout: Duration,
    user_agent: Option<String>,
    retry: RetryPolicy,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            base_url: None,
            api_key: None,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: Duration::from_secs(10),
            user_agent: None,
            retry: RetryPolicy::default(),
        }
    }
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder").field("base_url", &self.base_url).field("timeout", &self.timeout).finish()
    }
}

impl ClientBuilder {
    /// The server's root (`http://127.0.0.1:8080`), or its `/v1` as the
    /// OpenAI SDKs take it; a server mounted under a prefix is reached
    /// through it (`https://example.com/neuro`). Default: `NEURO_BASE_URL`,
    /// else [`DEFAULT_BASE_URL`].
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The API key, sent as `Authorization: Bearer <key>` on every `/v1`
    /// call. Default: `NEURO_API_KEY`, else none (only `/health` and
    /// `/metrics` answer then).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The longest a call may take, from connecting to the end of its
    /// answer; for a stream, which may last long, the longest wait for its
    /// next bytes. Past it the call fails with [`Error::Timeout`]. Default
    /// 10 minutes.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The longest wait for a connection (never longer than `timeout`).
    /// Default 10 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How many times a failed call is sent again: after a connection
    /// error, a 429 or a 503 (never another status). Default 2.
    pub fn max_retries(mut self, n: u32) -> Self {
        self.retry.max_retries = n;
        self
    }

    /// The first wait between retries when the server gives no
    /// `Retry-After`; it doubles at each retry up to `max`, less up to a
    /// quarter at random. Default 0.5 s and 8 s.
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.retry.initial_backoff = initial;
        self.retry.max_backoff = max;
        self
    }

    /// The longest `Retry-After` the client waits for; when the server asks
    /// for longer, its 429 or 503 is returned at once. Default 60 s.
    pub fn max_retry_after(mut self, max: Duration) -> Self {
        self.retry.max_retry_after = max;
        self
    }

    /// Also retry a POST whose connection failed after it was sent. The
    /// server may have run it, so a compile or a run may happen twice and
    /// a deployment be created twice. Default false: such a POST fails
    /// with [`Error::Transport`], and [`TransportError::request_sent`] is
    /// true.
    pub fn retry_non_idempotent(mut self, yes: bool) -> Self {
        self.retry.non_idempotent = yes;
        self
    }

    /// The User-Agent. Default `neuro-client-rust/<version>`.
    pub fn user_agent(mut self, ua: impl Into<String>) -> Self {
        self.user_agent = Some(ua.into());
        self
    }

    /// Builds the client, reading `NEURO_BASE_URL` and `NEURO_API_KEY` for
    /// what was not set.
    pub fn build(self) -> Result<Client> {
        self.build_with_env(|name| std::env::var(name).ok())
    }

    fn build_with_env(self, env: impl Fn(&str) -> Option<String>) -> Result<Client> {
        let base = match self.base_url {
            Some(u) => u,
            None => env("NEURO_BASE_URL").filter(|u| !u.trim().is_empty()).unwrap_or_else(|| DEFAULT_BASE_URL.to_string()),
        };
        let base = normalize_base_url(&base)?;
        let key = match self.api_key {
            Some(k) => k,
            None => env("NEURO_API_KEY").unwrap_or_default(),
        };
        let key = key.trim();
        if key.contains(|c: char| c.is_control()) {
            return Err(Error::InvalidArgument("API key holds a control character".into()));
        }
        if self.timeout.is_zero() {
            return Err(Error::InvalidArgument("timeout must be more than zero".into()));
        }
        let user_agent = self.user_agent.unwrap_or_else(|| format!("neuro-client-rust/{}", env!("CARGO_PKG_VERSION")));
        let connect_timeout = self.connect_timeout.min(self.timeout);
        let (agent, stream_agent) = agents(self.timeout, connect_timeout, &user_agent);
        Ok(Client {
            inner: Arc::new(Inner {
                base,
                auth: (!key.is_empty()).then(|| format!("Bearer {key}")),
                agent,
                stream_agent,
                timeout: self.timeout,
                connect_timeout,
                user_agent,
                retry: self.retry,
            }),
        })
    }
}

/// The agents of ordinary calls and of streams.
///
/// An ordinary call has a deadline of its own, which ureq applies to every
/// read, on a new connection or one from the pool. A stream has a timeout
/// per read instead; ureq sets that on a socket only when it connects (a
/// pooled one has none until its headers are read, and a stream's headers
/// come with its first token, after any queueing), so streams take a new
/// connection each, which costs little beside a stream.
fn agents(timeout: Duration, connect: Duration, user_agent: &str) -> (ureq::Agent, ureq::Agent) {
    let agent = ureq::AgentBuilder::new().timeout_connect(connect).user_agent(user_agent).build();
    let stream_agent = ureq::AgentBuilder::new()
        .timeout_connect(connect)
        .timeout_read(timeout)
        .timeout_write(timeout)
        .max_idle_connections(0)
        .user_agent(user_agent)
        .build();
    (agent, stream_agent)
}

/// Checks a base URL and returns it without a trailing "/" or "/v1".
fn normalize_base_url(url: &str) -> Result<String> {
    let u = url.trim();
    let bad = |why: &str| Error::InvalidArgument(format!("base URL {url:?}: {why}"));
    let rest =
        u.strip_prefix("http://").or_else(|| u.strip_prefix("https://")).ok_or_else(|| bad("want http(s)://host[:port][/prefix]"))?;
    let host = rest.split('/').next().unwrap_or("");
    if host.is_empty() {
        return Err(bad("no host"));
    }
    if rest.contains(['?', '#']) || host.contains('@') {
        return Err(bad("no query, fragment or user info"));
    }
    let mut base = u.trim_end_matches('/');
    if let Some(b) = base.strip_suffix("/v1") {
        if b.len() > u.len() - rest.len() {
            base = b;
        }
    }
    Ok(base.trim_end_matches('/').to_string())
}

impl Client {
    /// A client for the server at `base_url` with `api_key`, and the
    /// default timeout and retries. See [`ClientBuilder`] for the rest.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>) -> Result<Client> {
        Client::builder().base_url(base_url).api_key(api_key).build()
    }

    /// A client for `NEURO_BASE_URL` (default [`DEFAULT_BASE_URL`]) with
    /// the key `NEURO_API_KEY`.
    pub fn from_env() -> Result<Client> {
        Client::builder().build()
    }

    /// A builder, for the timeout, the retries and the rest.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client like this one, sharing its connections, with another
    /// retry count (0: no retry).
    pub fn with_max_retries(&self, n: u32) -> Client {
        let mut inner = self.inner.copy();
        inner.retry.max_retries = n;
        Client { inner: Arc::new(inner) }
    }

    /// A client like this one, sharing its pooled connections, with
    /// another timeout (zero leaves it as it is).
    pub fn with_timeout(&self, timeout: Duration) -> Client {
        let mut inner = self.inner.copy();
        if !timeout.is_zero() {
            // An ordinary call's deadline bounds its connecting too: only
            // the stream agent's timeouts change.
            inner.timeout = timeout;
            inner.connect_timeout = inner.connect_timeout.min(timeout);
            inner.stream_agent = agents(timeout, inner.connect_timeout, &inner.user_agent).1;
        }
        Client { inner: Arc::new(inner) }
    }

    /// The server root the client calls, without a trailing `/v1`.
    pub fn base_url(&self) -> &str {
        &self.inner.base
    }

    /// Chat completions.
    pub fn chat(&self) -> Chat<'_> {
        Chat { client: self }
    }

    /// Text completions.
    pub fn completions(&self) -> Completions<'_> {
        Completions { client: self }
    }

    /// Responses: conversations the server stores, continued by
    /// `previous_response_id`.
    pub fn responses(&self) -> Responses<'_> {
        Responses { client: self }
    }

    /// Models: the built-in language models and the caller's compiled
    /// networks.
    pub fn models(&self) -> Models<'_> {
        Models { client: self }
    }

    /// Compiling spiking networks.
    pub fn networks(&self) -> Networks<'_> {
        Networks { client: self }
    }

    /// Deployments: models placed on devices, and running networks on them.
    pub fn deployments(&self) -> Deployments<'_> {
        Deployments { client: self }
    }

    /// The caller's own latency, usage and spiking figures.
    pub fn telemetry(&self) -> Telemetry<'_> {
        Telemetry { client: self }
    }

    /// Whether the server can serve. A server that cannot (503, while a
    /// deployment loads or after one failed) still gives its report, with
    /// `status` "unavailable" and the `reason`; it is not retried.
    pub fn health(&self) -> Result<Health> {
        let req = Request { health: true, auth: false, ..Request::get("/health".into()) };
        let (status, body) = self.exchange_body(&req)?;
        decode(status, &body)
    }

    /// The server's Prometheus metrics, as text (`GET /metrics`).
    pub fn metrics(&self) -> Result<String> {
        let req = Request { auth: false, accept: "text/plain", ..Request::get("/metrics".into()) };
        let (status, body) = self.exchange_body(&req)?;
        String::from_utf8(body).map_err(|e| Error::Decode(DecodeError::new(status, e.as_bytes(), e.utf8_error())))
    }

    /// Sends a JSON request and decodes the JSON answer.
    pub(crate) fn json<T: DeserializeOwned>(&self, req: &Request) -> Result<T> {
        let (status, body) = self.exchange_body(req)?;
        decode(status, &body)
    }

    /// Sends a request that answers with server-sent events.
    pub(crate) fn stream<T: DeserializeOwned>(&self, req: &Request) -> Result<Stream<T>> {
        let req = Request { stream: true, accept: "text/event-stream", ..req.clone() };
        match self.exchange(&req)? {
            Answer::Stream(resp) => {
                let status = resp.status();
                let request_id = resp.header("x-request-id").map(str::to_string);
                if resp.content_type() != "text/event-stream" {
                    let mut body = Vec::new();
                    let _ = resp.into_reader().take(MAX_ERROR_BODY).read_to_end(&mut body);
                    return Err(Error::Decode(DecodeError::new(status, &body, "not an event stream")));
                }
                Ok(Stream::new(resp.into_reader(), status, request_id))
            }
            Answer::Body(..) => unreachable!("a stream request answers with a stream"),
        }
    }

    fn exchange_body(&self, req: &Request) -> Result<(u16, Vec<u8>)> {
        match self.exchange(req)? {
            Answer::Body(status, body) => Ok((status, body)),
            Answer::Stream(_) => unreachable!("an ordinary request answers with a body"),
        }
    }

    /// Sends req, and sends it again after the failures the retry policy
    /// allows.
    fn exchange(&self, req: &Request) -> Result<Answer> {
        let mut retry = 0;
        loop {
            let (err, failure) = match self.attempt(req) {
                Ok(answer) => return Ok(answer),
                Err(e) => e,
            };
            match self.inner.retry.delay(retry, req.idempotent(), failure) {
                Some(wait) => std::thread::sleep(wait),
                None => return Err(err),
            }
            retry += 1;
        }
    }

    /// Sends req once and, unless it is a stream, reads the whole answer.
    fn attempt(&self, req: &Request) -> std::result::Result<Answer, (Error, Failure)> {
        let inner = &*self.inner;
        let mut url = String::with_capacity(inner.base.len() + req.path.len());
        url.push_str(&inner.base);
        url.push_str(&req.path);
        let agent = if req.stream { &inner.stream_agent } else { &inner.agent };
        let mut r = agent.request(req.method, &url).set("Accept", req.accept);
        if !req.stream {
            r = r.timeout(inner.timeout);
        }
        if let (true, Some(auth)) = (req.auth, &inner.auth) {
            r = r.set("Authorization", auth);
        }
        for (k, v) in &req.query {
            r = r.query(k, v);
        }
        let result = match &req.body {
            Some(body) => r.set("Content-Type", "application/json").send_bytes(body),
            None => r.call(),
        };
        let resp = match result {
            Ok(resp) => resp,
            Err(ureq::Error::Status(_, resp)) => resp,
            Err(ureq::Error::Transport(t)) => return Err(transport_failure(t)),
        };
        let status = resp.status();
        let success = (200..300).contains(&status) || (req.health && status == 503);
        if !success {
            return Err(status_failure(resp));
        }
        if req.stream {
            return Ok(Answer::Stream(Box::new(resp)));
        }
        let mut body = Vec::with_capacity(resp.header("content-length").and_then(|n| n.parse().ok()).unwrap_or(4096).min(1 << 20));
        match resp.into_reader().read_to_end(&mut body) {
            Ok(_) => Ok(Answer::Body(status, body)),
            Err(e) => Err((read_error(e), Failure::Connection { sent: true, permanent: false })),
        }
    }
}

impl Inner {
    fn copy(&self) -> Inner {
        Inner {
            base: self.base.clone(),
            auth: self.auth.clone(),
            agent: self.agent.clone(),
            stream_agent: self.stream_agent.clone(),
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            user_agent: self.user_agent.clone(),
            retry: self.retry.clone(),
        }
    }
}

/// One call to make.
#[derive(Clone)]
pub(crate) struct Request {
    pub(crate) method: &'static str,
    /// The path under the base URL, its segments already escaped.
    pub(crate) path: String,
    pub(crate) query: Vec<(&'static str, String)>,
    pub(crate) body: Option<Vec<u8>>,
    pub(crate) accept: &'static str,
    pub(crate) auth: bool,
    pub(crate) stream: bool,
    /// /health: a 503 is a report, not an error, and not retried.
    pub(crate) health: bool,
}

impl Request {
    pub(crate) fn get(path: String) -> Request {
        Request { method: "GET", path, query: Vec::new(), body: None, accept: "application/json", auth: true, stream: false, health: false }
    }

    pub(crate) fn delete(path: String) -> Request {
        Request { method: "DELETE", ..Request::get(path) }
    }

    pub(crate) fn post<B: Serialize + ?Sized>(path: String, body: &B) -> Result<Request> {
        let body = serde_json::to_vec(body).map_err(|e| Error::InvalidArgument(format!("encoding the request: {e}")))?;
        Ok(Request { method: "POST", body: Some(body), ..Request::get(path) })
    }

    fn idempotent(&self) -> bool {
        self.method != "POST"
    }
}

enum Answer {
    Body(u16, Vec<u8>),
    Stream(Box<ureq::Response>),
}

fn decode<T: DeserializeOwned>(status: u16, body: &[u8]) -> Result<T> {
    serde_json::from_slice(body).map_err(|e| Error::Decode(DecodeError::new(status, body, e)))
}

/// The error of a response with a failing status.
fn status_failure(resp: ureq::Response) -> (Error, Failure) {
    let status = resp.status();
    let request_id = resp.header("x-request-id").map(str::to_string);
    let retry_after = resp.header("retry-after").and_then(parse_retry_after);
    let mut body = Vec::new();
    let _ = resp.into_reader().take(MAX_ERROR_BODY).read_to_end(&mut body);
    let err = api_error(status, &body, request_id, retry_after);
    let quota = err.code() == Some("insufficient_quota");
    (err, Failure::Status { status, retry_after, quota })
}

/// The error of a request that did not get an answer, and whether it may
/// have reached the server.
fn transport_failure(t: ureq::Transport) -> (Error, Failure) {
    use ureq::ErrorKind as K;
    let kind = t.kind();
    let permanent = matches!(
        kind,
        K::InvalidUrl | K::UnknownScheme | K::InsecureRequestHttpsOnly | K::InvalidProxyUrl | K::ProxyUnauthorized | K::TooManyRedirects
    );
    // Until the connection is made nothing is sent: a POST can be retried.
    let sent = !(permanent || matches!(kind, K::Dns | K::ConnectionFailed | K::ProxyConnect));
    let failure = Failure::Connection { sent, permanent };
    if is_timeout(&t) {
        return (Error::Timeout, failure);
    }
    if matches!(kind, K::InvalidUrl | K::UnknownScheme) {
        return (Error::InvalidArgument(t.to_string()), failure);
    }
    (Error::Transport(TransportError::new("request failed", sent, Some(Box::new(t)))), failure)
}

fn is_timeout(t: &ureq::Transport) -> bool {
    let mut source: Option<&(dyn StdError + 'static)> = t.source();
    while let Some(s) = source {
        if let Some(e) = s.downcast_ref::<io::Error>() {
            if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) {
                return true;
            }
        }
        source = s.source();
    }
    false
}

/// The error of a response body that could not be read to its end.
pub(crate) fn read_error(e: io::Error) -> Error {
    if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) {
        return Error::Timeout;
    }
    Error::Transport(TransportError::new("reading the response", true, Some(Box::new(e))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls() {
        for (input, want) in [
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("http://127.0.0.1:8080/", "http://127.0.0.1:8080"),
            ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
            ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080"),
            ("https://example.com/neuro/v1", "https://example.com/neuro"),
            ("https://example.com/neuro", "https://example.com/neuro"),
            ("http://v1", "http://v1"),
            (" http://h:1 ", "http://h:1"),
        ] {
            assert_eq!(normalize_base_url(input).unwrap(), want, "{input}");
        }
        for bad in ["127.0.0.1:8080", "ftp://h", "http://", "http:///v1", "http://h/?q=1", "http://u:p@h", "http://h/#f"] {
            assert!(matches!(normalize_base_url(bad), Err(Error::InvalidArgument(_))), "{bad}");
        }
    }

    #[test]
    fn configuration_from_the_environment() {
        let env = |name: &str| match name {
            "NEURO_BASE_URL" => Some("http://10.0.0.1:9000/v1/".to_string()),
            "NEURO_API_KEY" => Some("sk-env".to_string()),
            _ => None,
        };
        let c = Client::builder().build_with_env(env).unwrap();
        assert_eq!(c.base_url(), "http://10.0.0.1:9000");
        assert_eq!(c.inner.auth.as_deref(), Some("Bearer sk-env"));
        let c = Client::builder().base_url("http://h:1").api_key("sk-arg").build_with_env(env).unwrap();
        assert_eq!((c.base_url(), c.inner.auth.as_deref()), ("http://h:1", Some("Bearer sk-arg")));
        let c = Client::builder().build_with_env(|_| None).unwrap();
        assert_eq!((c.base_url(), c.inner.auth.as_deref()), (DEFAULT_BASE_URL, None));
        assert!(!format!("{c:?}").contains("sk-"), "Debug shows no key");
        let c = Client::builder().api_key("sk-arg").build_with_env(|_| None).unwrap();
        assert!(!format!("{c:?}").contains("sk-arg"));
    }

    #[test]
    fn shared_across_threads() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_sync::<Client>();
        send_sync::<Error>();
        send::<crate::Stream<crate::ChatCompletionChunk>>();
    }

    #[test]
    fn with_options_keep_the_rest() {
        let c = Client::builder().base_url("http://h:1").api_key("k").build_with_env(|_| None).unwrap();
        let d = c.with_max_retries(0).with_timeout(Duration::from_secs(3));
        assert_eq!((d.inner.retry.max_retries, d.inner.timeout, d.base_url()), (0, Duration::from_secs(3), "http://h:1"));
        assert_eq!(c.inner.retry.max_retries, DEFAULT_MAX_RETRIES);
    }
}
