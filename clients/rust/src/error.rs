use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use serde::Deserialize;

/// The result of every call of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything a call can fail with.
///
/// Branch on [`Error::Api`]'s `kind` for what the server said, and on the
/// other variants for what happened on the way:
///
/// ```
/// # fn f(client: &neuro_client::Client) -> neuro_client::Result<()> {
/// use neuro_client::{ApiErrorKind, Error};
/// match client.models().retrieve("net-unknown") {
///     Ok(model) => println!("{}", model.id),
///     Err(Error::Api { kind: ApiErrorKind::NotFound, message, .. }) => println!("no such model: {message}"),
///     Err(err) => return Err(err),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with an error: the `{"error":{...}}` body of a
    /// failed response, or the error event that ended a stream (then
    /// `status` is the stream's own, 200, and `kind` follows `type`).
    #[non_exhaustive]
    Api {
        /// The HTTP status.
        status: u16,
        /// What the status (or, in a stream, the type) means.
        kind: ApiErrorKind,
        /// The error body's `type`, such as `invalid_request_error`; empty
        /// when the body was not the server's error object (a proxy's page).
        r#type: String,
        /// The error body's `code`, such as `model_not_found`.
        code: Option<String>,
        /// The request field at fault, such as `messages[1].role`.
        param: Option<String>,
        /// What went wrong, in words.
        message: String,
        /// The response's `x-request-id`, to quote in a report.
        request_id: Option<String>,
        /// The wait the server asked for (`Retry-After`).
        retry_after: Option<Duration>,
    },
    /// The request or its response did not get through: no connection, a
    /// connection that broke, a response that is not HTTP, or a stream
    /// that ended before `data: [DONE]`.
    Transport(TransportError),
    /// The call ran past the client's timeout.
    Timeout,
    /// A successful response whose body is not what the call expects.
    Decode(DecodeError),
    /// A deployment that [`Deployments::wait`](crate::Deployments::wait)
    /// waited for failed to load.
    #[non_exhaustive]
    DeploymentFailed {
        /// The deployment's id.
        id: String,
        /// The server's reason.
        failure: String,
    },
    /// An argument the client refuses before sending anything, such as a
    /// base URL that is not `http(s)://host[:port][/prefix]`.
    InvalidArgument(String),
}

/// The kind of an [`Error::Api`], by HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ApiErrorKind {
    /// 400: a malformed request or an invalid field (see `param`).
    BadRequest,
    /// 401: a missing or wrong API key.
    Authentication,
    /// 403: the caller may not do this (the server's own deployments and
    /// built-in models cannot be deleted).
    PermissionDenied,
    /// 404: an unknown model, deployment or route, or another caller's.
    NotFound,
    /// 409: a deployment id that is taken, a network still deployed.
    Conflict,
    /// 422: a network that parses but is unsupported or does not fit.
    UnprocessableEntity,
    /// 429: the key's rate or concurrency limit, or its quota
    /// (code `insufficient_quota`).
    RateLimit,
    /// 5xx: the server failed or is overloaded.
    Server,
    /// Any other status (405, 408, 413, 415, ...).
    Other,
}

impl ApiErrorKind {
    /// The kind of an HTTP status.
    pub fn from_status(status: u16) -> ApiErrorKind {
        match status {
            400 => ApiErrorKind::BadRequest,
            401 => ApiErrorKind::Authentication,
            403 => ApiErrorKind::PermissionDenied,
            404 => ApiErrorKind::NotFound,
            409 => ApiErrorKind::Conflict,
            422 => ApiErrorKind::UnprocessableEntity,
            429 => ApiErrorKind::RateLimit,
            500..=599 => ApiErrorKind::Server,
            _ => ApiErrorKind::Other,
        }
    }

    /// The kind of an error that arrived inside a stream, which has no
    /// status of its own.
    fn from_type(t: &str) -> ApiErrorKind {
        match t {
            "invalid_request_error" => ApiErrorKind::BadRequest,
            "authentication_error" => ApiErrorKind::Authentication,
            "not_found_error" => ApiErrorKind::NotFound,
            "rate_limit_error" => ApiErrorKind::RateLimit,
            "server_error" => ApiErrorKind::Server,
            _ => ApiErrorKind::Other,
        }
    }
}

impl Error {
    /// The HTTP status of an [`Error::Api`].
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The kind of an [`Error::Api`].
    pub fn kind(&self) -> Option<ApiErrorKind> {
        match self {
            Error::Api { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// The error code of an [`Error::Api`], such as `model_not_found`.
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Api { code, .. } => code.as_deref(),
            _ => None,
        }
    }

    /// The wait the server asked for, on a 429 or 503.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Api { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Api { status, r#type, code, param, message, request_id, .. } => {
                write!(f, "neuro: {status}")?;
                match code {
                    Some(c) => write!(f, " {c}")?,
                    None if !r#type.is_empty() => write!(f, " {type}", type = r#type)?,
                    None => {}
                }
                if let Some(p) = param {
                    write!(f, " (param {p})")?;
                }
                if !message.is_empty() {
                    write!(f, ": {message}")?;
                }
                if let Some(id) = request_id {
                    write!(f, " [request {id}]")?;
                }
                Ok(())
            }
            Error::Transport(e) => write!(f, "neuro: {e}"),
            Error::Timeout => f.write_str("neuro: timed out"),
            Error::Decode(e) => write!(f, "neuro: {e}"),
            Error::DeploymentFailed { id, failure } => write!(f, "neuro: deployment {id} failed: {failure}"),
            Error::InvalidArgument(msg) => write!(f, "neuro: {msg}"),
        }
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            Error::Transport(e) => Some(e),
            Error::Decode(e) => Some(e),
            _ => None,
        }
    }
}

/// A request or response that did not get through.
#[derive(Debug)]
pub struct TransportError {
    message: String,
    sent: bool,
    source: Option<Box<dyn StdError + Send + Sync + 'static>>,
}

impl TransportError {
    pub(crate) fn new(message: impl Into<String>, sent: bool, source: Option<Box<dyn StdError + Send + Sync + 'static>>) -> Self {
        TransportError { message: message.into(), sent, source }
    }

    /// Whether the request may have reached the server: false only when
    /// the connection failed before any of it was sent (so that even a
    /// POST can be sent again safely).
    pub fn request_sent(&self) -> bool {
        self.sent
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(s) = &self.source {
            write!(f, ": {s}")?;
        }
        Ok(())
    }
}

impl StdError for TransportError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_ref().map(|s| s.as_ref() as &(dyn StdError + 'static))
    }
}

/// A successful response whose body could not be decoded.
#[derive(Debug)]
pub struct DecodeError {
    status: u16,
    body: String,
    source: Box<dyn StdError + Send + Sync + 'static>,
}

/// How much of a body an error keeps.
const BODY_EXCERPT: usize = 512;

impl DecodeError {
    pub(crate) fn new(status: u16, body: &[u8], source: impl Into<Box<dyn StdError + Send + Sync + 'static>>) -> Self {
        DecodeError { status, body: excerpt(body), source: source.into() }
    }

    /// The HTTP status of the response.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The start of the body (at most 512 bytes).
    pub fn body(&self) -> &str {
        &self.body
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "decoding a {} response: {}", self.status, self.source)?;
        if !self.body.is_empty() {
            write!(f, ": {:?}", self.body)?;
        }
        Ok(())
    }
}

impl StdError for DecodeError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(self.source.as_ref() as &(dyn StdError + 'static))
    }
}

/// The start of a body, cut at a character boundary.
pub(crate) fn excerpt(body: &[u8]) -> String {
    let s = String::from_utf8_lossy(&body[..body.len().min(BODY_EXCERPT)]);
    s.trim_end_matches('\u{fffd}').to_string()
}

/// The wire form of an error: `{"error":{"message","type","param","code"}}`.
#[derive(Deserialize)]
pub(crate) struct ErrorEnvelope {
    pub(crate) error: Option<ErrorBody>,
}

#[derive(Deserialize)]
pub(crate) struct ErrorBody {
    #[serde(default)]
    message: String,
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    param: Option<String>,
    #[serde(default)]
    code: Option<String>,
}

impl ErrorBody {
    pub(crate) fn into_error(self, status: u16, request_id: Option<String>, retry_after: Option<Duration>) -> Error {
        let kind = if status >= 400 { ApiErrorKind::from_status(status) } else { ApiErrorKind::from_type(&self.kind) };
        Error::Api { status, kind, r#type: self.kind, code: self.code, param: self.param, message: self.message, request_id, retry_after }
    }
}

/// The error of a failed response: the server's error object when the
/// body holds one, else the status with the start of the body (a proxy's
/// page, say) as the message.
pub(crate) fn api_error(status: u16, body: &[u8], request_id: Option<String>, retry_after: Option<Duration>) -> Error {
    if let Ok(ErrorEnvelope { error: Some(b) }) = serde_json::from_slice::<ErrorEnvelope>(body) {
        return b.into_error(status, request_id, retry_after);
    }
    Error::Api {
        status,
        kind: ApiErrorKind::from_status(status),
        r#type: String::new(),
        code: None,
        param: None,
        message: excerpt(body),
        request_id,
        retry_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_status() {
        let cases = [
            (400, ApiErrorKind::BadRequest),
            (401, ApiErrorKind::Authentication),
            (403, ApiErrorKind::PermissionDenied),
            (404, ApiErrorKind::NotFound),
            (409, ApiErrorKind::Conflict),
            (422, ApiErrorKind::UnprocessableEntity),
            (429, ApiErrorKind::RateLimit),
            (500, ApiErrorKind::Server),
            (503, ApiErrorKind::Server),
            (413, ApiErrorKind::Other),
        ];
        for (status, kind) in cases {
            assert_eq!(ApiErrorKind::from_status(status), kind, "{status}");
        }
    }

    #[test]
    fn error_body_with_nulls() {
        let body = br#"{"error":{"message":"no such model","type":"not_found_error","param":null,"code":"model_not_found"}}"#;
        let err = api_error(404, body, Some("req_1".into()), None);
        match &err {
            Error::Api { status: 404, kind: ApiErrorKind::NotFound, r#type, code: Some(code), param: None, message, .. } => {
                assert_eq!((r#type.as_str(), code.as_str(), message.as_str()), ("not_found_error", "model_not_found", "no such model"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(err.to_string(), "neuro: 404 model_not_found: no such model [request req_1]");
    }

    #[test]
    fn body_that_is_not_an_error_object() {
        let err = api_error(502, b"<html>Bad Gateway</html>", None, None);
        match err {
            Error::Api { status: 502, kind: ApiErrorKind::Server, r#type, code: None, message, .. } => {
                assert!(r#type.is_empty());
                assert_eq!(message, "<html>Bad Gateway</html>");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn stream_error_kind_follows_type() {
        let b: ErrorEnvelope =
            serde_json::from_str(r#"{"error":{"message":"m","type":"server_error","param":null,"code":"internal_error"}}"#).unwrap();
        assert_eq!(b.error.unwrap().into_error(200, None, None).kind(), Some(ApiErrorKind::Server));
    }

    #[test]
    fn excerpt_cuts_at_a_character() {
        let body = "é".repeat(400);
        let e = excerpt(body.as_bytes());
        assert!(e.len() <= BODY_EXCERPT && e.chars().all(|c| c == 'é'), "{e}");
    }
}
