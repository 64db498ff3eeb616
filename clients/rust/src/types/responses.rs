use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use super::chat::{NeuromorphicUsage, Role};

/// A text part of an input message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputText {
    /// Always `input_text`.
    pub r#type: &'static str,
    pub text: String,
}

impl InputText {
    pub fn new(text: impl Into<String>) -> Self {
        InputText { r#type: "input_text", text: text.into() }
    }
}

/// The content of an input message: a string or text parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum InputContent {
    Text(String),
    Parts(Vec<InputText>),
}

/// One message of a response's input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputMessage {
    /// `message` where given (the server takes a message without it too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#type: Option<&'static str>,
    pub role: Role,
    pub content: InputContent,
}

impl InputMessage {
    /// A message with a role and a text.
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        InputMessage { r#type: None, role, content: InputContent::Text(text.into()) }
    }

    /// A message with a role and text parts (`input_text`).
    pub fn parts(role: Role, parts: Vec<InputText>) -> Self {
        InputMessage { r#type: None, role, content: InputContent::Parts(parts) }
    }

    /// Sends the item's `type` (`message`), as OpenAI's SDKs do.
    pub fn typed(mut self) -> Self {
        self.r#type = Some("message");
        self
    }

    /// A message with the role `user`.
    pub fn user(text: impl Into<String>) -> Self {
        InputMessage::new(Role::User, text)
    }

    /// A message with the role `system`.
    pub fn system(text: impl Into<String>) -> Self {
        InputMessage::new(Role::System, text)
    }

    /// A message with the role `developer`.
    pub fn developer(text: impl Into<String>) -> Self {
        InputMessage::new(Role::Developer, text)
    }

    /// A message with the role `assistant`.
    pub fn assistant(text: impl Into<String>) -> Self {
        InputMessage::new(Role::Assistant, text)
    }
}

/// A response's input: a string (one user message) or messages.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResponseInput {
    Text(String),
    Messages(Vec<InputMessage>),
}

impl From<&str> for ResponseInput {
    fn from(s: &str) -> Self {
        ResponseInput::Text(s.to_string())
    }
}

impl From<String> for ResponseInput {
    fn from(s: String) -> Self {
        ResponseInput::Text(s)
    }
}

impl From<Vec<InputMessage>> for ResponseInput {
    fn from(m: Vec<InputMessage>) -> Self {
        ResponseInput::Messages(m)
    }
}

/// The body of `POST /v1/responses`. Fields left None take the server's
/// defaults; the builder methods set them.
///
/// ```
/// use neuro_client::ResponseRequest;
/// let first = ResponseRequest::new("neuro-1-heavy", "Name a sea.").instructions("Be brief.").max_output_tokens(32);
/// let next = ResponseRequest::new("neuro-1-heavy", "How deep is it?").previous_response_id("resp_1");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResponseRequest {
    /// A model id, alias or deployment id, as for chat.
    pub model: String,
    pub input: ResponseInput,
    /// A system message for this turn only; it is not carried to the next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Continues the conversation that response ended (with the same model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<String>,
    /// Default true; false keeps the response from being stored (it cannot
    /// then be retrieved or continued).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// 0..2, default 1; 0 is greedy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// 0..1, default 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Up to 16 string pairs, stored with the response.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<BTreeMap<String, String>>,
    /// Identifies the end user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

impl ResponseRequest {
    /// A request with the required fields; the rest take the defaults.
    pub fn new(model: impl Into<String>, input: impl Into<ResponseInput>) -> Self {
        ResponseRequest {
            model: model.into(),
            input: input.into(),
            instructions: None,
            previous_response_id: None,
            store: None,
            max_output_tokens: None,
            temperature: None,
            top_p: None,
            metadata: None,
            user: None,
        }
    }

    /// Sets `instructions`.
    pub fn instructions(mut self, s: impl Into<String>) -> Self {
        self.instructions = Some(s.into());
        self
    }

    /// Sets `previous_response_id`.
    pub fn previous_response_id(mut self, id: impl Into<String>) -> Self {
        self.previous_response_id = Some(id.into());
        self
    }

    /// Sets `store`.
    pub fn store(mut self, yes: bool) -> Self {
        self.store = Some(yes);
        self
    }

    /// Sets `max_output_tokens`.
    pub fn max_output_tokens(mut self, n: u32) -> Self {
        self.max_output_tokens = Some(n);
        self
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

    /// Adds a `metadata` pair.
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.get_or_insert_with(BTreeMap::new).insert(key.into(), value.into());
        self
    }

    /// Sets `user`.
    pub fn user(mut self, u: impl Into<String>) -> Self {
        self.user = Some(u.into());
        self
    }
}

/// Where a response stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResponseStatus {
    Completed,
    /// Stopped early: `incomplete_details` says why.
    Incomplete,
    Failed,
    InProgress,
    /// A status this version of the client does not know.
    #[serde(other)]
    Other,
}

/// A text part of a response's output.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct OutputText {
    /// `output_text`.
    pub r#type: String,
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub annotations: Vec<serde_json::Value>,
}

/// An output item: a message of the assistant.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct OutputMessage {
    /// `message`.
    pub r#type: String,
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub role: String,
    #[serde(default)]
    pub content: Vec<OutputText>,
}

/// The input tokens resumed from a stored state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct InputTokensDetails {
    #[serde(default)]
    pub cached_tokens: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct OutputTokensDetails {
    #[serde(default)]
    pub reasoning_tokens: u32,
}

/// The tokens of a turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ResponseUsage {
    /// The whole context the model saw this turn, earlier turns included.
    pub input_tokens: u32,
    /// `cached_tokens`: the part of `input_tokens` resumed from the stored
    /// state instead of recomputed.
    #[serde(default)]
    pub input_tokens_details: InputTokensDetails,
    pub output_tokens: u32,
    #[serde(default)]
    pub output_tokens_details: OutputTokensDetails,
    pub total_tokens: u32,
}

/// Why a response is incomplete (`max_output_tokens`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct IncompleteDetails {
    pub reason: String,
}

/// Why a response failed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ResponseError {
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub message: String,
}

/// A field that the server may send as null, read as its default.
fn null_as_default<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(d: D) -> std::result::Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// One turn of a conversation, as the server stores it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Response {
    pub id: String,
    pub object: String,
    pub created_at: i64,
    pub status: ResponseStatus,
    pub model: String,
    #[serde(default)]
    pub previous_response_id: Option<String>,
    #[serde(default)]
    pub instructions: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub output: Vec<OutputMessage>,
    /// The text of all the output_text parts together.
    #[serde(default, deserialize_with = "null_as_default")]
    pub output_text: String,
    #[serde(default)]
    pub incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    pub error: Option<ResponseError>,
    #[serde(default)]
    pub store: Option<bool>,
    /// The sampling the turn used.
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub top_p: Option<f64>,
    /// As the request gave it; None where it did not.
    #[serde(default)]
    pub max_output_tokens: Option<u32>,
    #[serde(default)]
    pub metadata: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub user: Option<String>,
    /// The turn's tokens. The server sends none (null) until the response
    /// is done (in the `Created` and `InProgress` events) and for a failed
    /// one; then it is all zeros.
    #[serde(default, deserialize_with = "null_as_default")]
    pub usage: ResponseUsage,
    /// What the turn cost the device.
    #[serde(default)]
    pub neuro: Option<NeuromorphicUsage>,
}

impl Response {
    /// The text of the output: `output_text`, or the output's text parts
    /// joined where the server left that field out.
    pub fn text(&self) -> String {
        if !self.output_text.is_empty() {
            return self.output_text.clone();
        }
        self.output.iter().flat_map(|m| m.content.iter()).filter(|p| p.r#type == "output_text").map(|p| p.text.as_str()).collect()
    }
}

/// One event of a streamed response, by its `type`. The stream ends after
/// `Completed`, `Incomplete` or `Failed`; an error after the stream started
/// is an `Error` event, then `Failed`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum ResponseStreamEvent {
    #[serde(rename = "response.created")]
    Created { sequence_number: u64, response: Response },
    #[serde(rename = "response.in_progress")]
    InProgress { sequence_number: u64, response: Response },
    #[serde(rename = "response.output_item.added")]
    OutputItemAdded { sequence_number: u64, output_index: u32, item: OutputMessage },
    #[serde(rename = "response.content_part.added")]
    ContentPartAdded { sequence_number: u64, item_id: String, output_index: u32, content_index: u32, part: OutputText },
    /// The next piece of text.
    #[serde(rename = "response.output_text.delta")]
    OutputTextDelta { sequence_number: u64, item_id: String, output_index: u32, content_index: u32, delta: String },
    #[serde(rename = "response.output_text.done")]
    OutputTextDone { sequence_number: u64, item_id: String, output_index: u32, content_index: u32, text: String },
    #[serde(rename = "response.content_part.done")]
    ContentPartDone { sequence_number: u64, item_id: String, output_index: u32, content_index: u32, part: OutputText },
    #[serde(rename = "response.output_item.done")]
    OutputItemDone { sequence_number: u64, output_index: u32, item: OutputMessage },
    #[serde(rename = "response.completed")]
    Completed { sequence_number: u64, response: Response },
    #[serde(rename = "response.incomplete")]
    Incomplete { sequence_number: u64, response: Response },
    #[serde(rename = "response.failed")]
    Failed { sequence_number: u64, response: Response },
    /// The generation failed after the stream started.
    #[serde(rename = "error")]
    Error {
        sequence_number: u64,
        #[serde(default)]
        code: Option<String>,
        #[serde(default)]
        message: String,
        #[serde(default)]
        param: Option<String>,
    },
    /// An event type this version of the client does not know.
    #[serde(other)]
    Unknown,
}

impl ResponseStreamEvent {
    /// The text of an `OutputTextDelta` ("" for the others).
    pub fn delta(&self) -> &str {
        match self {
            ResponseStreamEvent::OutputTextDelta { delta, .. } => delta,
            _ => "",
        }
    }

    /// The response that a `Created`, `InProgress`, `Completed`,
    /// `Incomplete` or `Failed` event carries.
    pub fn response(&self) -> Option<&Response> {
        use ResponseStreamEvent::*;
        match self {
            Created { response, .. }
            | InProgress { response, .. }
            | Completed { response, .. }
            | Incomplete { response, .. }
            | Failed { response, .. } => Some(response),
            _ => None,
        }
    }

    /// Whether the stream ends after this event.
    pub fn is_last(&self) -> bool {
        matches!(self, ResponseStreamEvent::Completed { .. } | ResponseStreamEvent::Incomplete { .. } | ResponseStreamEvent::Failed { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_body() {
        let req = ResponseRequest::new("neuro-1-lite", vec![InputMessage::system("Be brief."), InputMessage::user("Hi")])
            .instructions("Answer in French.")
            .previous_response_id("resp_0")
            .store(false)
            .max_output_tokens(16)
            .temperature(0.0)
            .top_p(0.5)
            .metadata("k", "v")
            .user("u");
        assert_eq!(
            serde_json::to_value(&req).unwrap(),
            serde_json::json!({"model":"neuro-1-lite","input":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],
                "instructions":"Answer in French.","previous_response_id":"resp_0","store":false,"max_output_tokens":16,
                "temperature":0.0,"top_p":0.5,"metadata":{"k":"v"},"user":"u"})
        );
        assert_eq!(serde_json::to_value(ResponseRequest::new("m", "Hi")).unwrap(), serde_json::json!({"model":"m","input":"Hi"}));
        let parts = InputMessage::parts(Role::User, vec![InputText::new("a")]);
        assert_eq!(serde_json::to_value(parts).unwrap(), serde_json::json!({"role":"user","content":[{"type":"input_text","text":"a"}]}));
        let typed = InputMessage::developer("Be brief.").typed();
        assert_eq!(serde_json::to_value(typed).unwrap(), serde_json::json!({"type":"message","role":"developer","content":"Be brief."}));
    }

    #[test]
    fn response_and_events() {
        let r: Response = serde_json::from_str(
            r#"{"id":"resp_1","object":"response","created_at":1,"status":"incomplete","model":"neuro-1-lite",
            "previous_response_id":"resp_0","instructions":null,
            "output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hel","annotations":[]},{"type":"output_text","text":"lo","annotations":[]}]}],
            "incomplete_details":{"reason":"max_output_tokens"},"error":null,"store":true,"metadata":{},
            "usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":8},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":14}}"#,
        )
        .unwrap();
        assert_eq!((r.status, r.text().as_str(), r.usage.input_tokens_details.cached_tokens), (ResponseStatus::Incomplete, "Hello", 8));
        assert_eq!(r.incomplete_details.unwrap().reason, "max_output_tokens");
        let d: ResponseStreamEvent = serde_json::from_str(
            r#"{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi"}"#,
        )
        .unwrap();
        assert_eq!((d.delta(), d.is_last()), ("Hi", false));
        let e: ResponseStreamEvent =
            serde_json::from_str(r#"{"type":"error","sequence_number":5,"code":"device_error","message":"device lost","param":null}"#)
                .unwrap();
        assert!(matches!(e, ResponseStreamEvent::Error { ref code, .. } if code.as_deref() == Some("device_error")));
        // A response in progress, as response.created carries it: no usage yet.
        let c: ResponseStreamEvent = serde_json::from_str(
            r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1,
            "status":"in_progress","model":"neuro-1-lite","previous_response_id":null,"instructions":"Be brief.","output":[],
            "output_text":"","incomplete_details":null,"error":null,"store":true,"temperature":0,"top_p":1,"max_output_tokens":16,
            "metadata":{},"usage":null}}"#,
        )
        .unwrap();
        let r = c.response().unwrap();
        assert_eq!(
            (r.status, r.usage.total_tokens, r.max_output_tokens, r.temperature),
            (ResponseStatus::InProgress, 0, Some(16), Some(0.0))
        );
        let u: ResponseStreamEvent = serde_json::from_str(r#"{"type":"response.queued","sequence_number":0}"#).unwrap();
        assert_eq!(u, ResponseStreamEvent::Unknown);
    }
}
