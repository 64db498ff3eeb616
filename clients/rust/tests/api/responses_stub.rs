//! The Responses API against a scripted stub: the request's fields, the
//! typed response, the named events of a stream (which has no [DONE]), and
//! the errors and retries of `/v1/responses`.

use std::time::Duration;

use neuro_client::{ApiErrorKind, Client, Error, InputMessage, ResponseRequest, ResponseStatus, ResponseStreamEvent, Result};

use crate::stub::{api_error, json, Reply, Stub};

const USAGE: &str = r#"{"input_tokens":12,"input_tokens_details":{"cached_tokens":8},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":14}"#;

fn response(status: &str, text: &str) -> String {
    format!(
        r#"{{"id":"resp_1","object":"response","created_at":1,"status":"{status}","model":"neuro-1-lite","previous_response_id":"resp_0",
        "instructions":null,"output":[{{"type":"message","id":"msg_1","status":"completed","role":"assistant",
        "content":[{{"type":"output_text","text":"{text}","annotations":[]}}]}}],"output_text":"{text}","incomplete_details":null,
        "error":null,"store":true,"metadata":{{}},"usage":{USAGE}}}"#
    )
    .replace('\n', "")
}

/// A response that is not done, as the server sends it in
/// `response.created`, `response.in_progress` and `response.failed`: no
/// output and no usage.
fn unfinished(status: &str) -> String {
    let r = response(status, "");
    let (head, _) = r.split_once(r#""output":"#).unwrap();
    format!(
        r#"{head}"output":[],"output_text":"","incomplete_details":null,"error":{},"store":true,"metadata":{{}},"usage":null}}"#,
        if status == "failed" { r#"{"code":"device_error","message":"device lost"}"# } else { "null" }
    )
}

/// The events of a streamed response whose text is the pieces, ending
/// with `last`; each as (type, data).
fn events(pieces: &[&str], last: &str) -> Vec<(String, String)> {
    let whole: String = pieces.concat();
    let at = r#""item_id":"msg_1","output_index":0,"content_index":0"#;
    let part = r#"{"type":"output_text","text":"","annotations":[]}"#;
    let item = r#"{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]}"#;
    let mut out = vec![
        ("response.created".to_string(), format!(r#""response":{}"#, unfinished("in_progress"))),
        ("response.in_progress".to_string(), format!(r#""response":{}"#, unfinished("in_progress"))),
        ("response.output_item.added".to_string(), format!(r#""output_index":0,"item":{item}"#)),
        ("response.content_part.added".to_string(), format!(r#"{at},"part":{part}"#)),
    ];
    for p in pieces {
        out.push(("response.output_text.delta".to_string(), format!(r#"{at},"delta":"{p}","logprobs":[]"#)));
    }
    out.push(("response.output_text.done".to_string(), format!(r#"{at},"text":"{whole}""#)));
    out.push(("response.content_part.done".to_string(), format!(r#"{at},"part":{part}"#)));
    out.push(("response.output_item.done".to_string(), format!(r#""output_index":0,"item":{item}"#)));
    let status = last.trim_start_matches("response.");
    let end = if status == "failed" { unfinished(status) } else { response(status, &whole) };
    out.push((last.to_string(), format!(r#""response":{end}"#)));
    out.into_iter().enumerate().map(|(i, (t, fields))| (t.clone(), format!(r#"{{"type":"{t}","sequence_number":{i},{fields}}}"#))).collect()
}

/// An event stream of named events, ended by closing the connection.
fn sse(evs: &[(String, String)]) -> Reply {
    let mut s = String::from("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
    for (t, d) in evs {
        s += &format!("event: {t}\ndata: {d}\n\n");
    }
    Reply::Raw(s)
}

fn client(stub: &Stub) -> Client {
    Client::builder()
        .base_url(&stub.url)
        .api_key("sk-stub")
        .backoff(Duration::from_millis(10), Duration::from_millis(50))
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

#[test]
fn responses_create_sends_its_fields_and_types_the_result() {
    let stub = Stub::start(vec![json(200, &response("completed", "Hello"))]);
    let req = ResponseRequest::new("neuro-1-lite", vec![InputMessage::user("Hi")])
        .instructions("Be brief.")
        .previous_response_id("resp_0")
        .store(false)
        .max_output_tokens(16)
        .temperature(0.0)
        .top_p(0.5)
        .metadata("k", "v")
        .user("u");
    let r = client(&stub).responses().create(&req).unwrap();
    let seen = stub.seen();
    assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("POST", "/v1/responses"));
    let body: serde_json::Value = serde_json::from_slice(&seen[0].body).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"model":"neuro-1-lite","input":[{"role":"user","content":"Hi"}],"instructions":"Be brief.",
            "previous_response_id":"resp_0","store":false,"max_output_tokens":16,"temperature":0.0,"top_p":0.5,
            "metadata":{"k":"v"},"user":"u"})
    );
    assert_eq!((r.status, r.output_text.as_str(), r.previous_response_id.as_deref()), (ResponseStatus::Completed, "Hello", Some("resp_0")));
    assert_eq!((r.usage.input_tokens_details.cached_tokens, r.usage.total_tokens), (8, 14));
    assert_eq!(r.incomplete_details, None);
}

#[test]
fn responses_retrieve_and_delete() {
    let stub =
        Stub::start(vec![json(200, &response("completed", "Hello")), json(200, r#"{"id":"resp_1","object":"response","deleted":true}"#)]);
    let c = client(&stub);
    assert_eq!(c.responses().retrieve("resp_1").unwrap().id, "resp_1");
    assert!(c.responses().delete("resp_1").unwrap().deleted);
    let seen: Vec<String> = stub.seen().iter().map(|s| format!("{} {}", s.method, s.path)).collect();
    assert_eq!(seen, ["GET /v1/responses/resp_1", "DELETE /v1/responses/resp_1"]);
}

#[test]
fn responses_stream_of_typed_events_ends_after_completed() {
    let evs = events(&["Hel", "lo"], "response.completed");
    let stub = Stub::start(vec![sse(&evs)]);
    let req = ResponseRequest::new("m", "Hi");
    let got: Vec<ResponseStreamEvent> = client(&stub).responses().stream(&req).unwrap().collect::<Result<_>>().unwrap();
    let body: serde_json::Value = serde_json::from_slice(&stub.seen()[0].body).unwrap();
    assert_eq!(body, serde_json::json!({"model":"m","input":"Hi","stream":true}));
    assert_eq!(got.len(), evs.len());
    assert!(
        matches!(got[0], ResponseStreamEvent::Created { sequence_number: 0, ref response } if response.status == ResponseStatus::InProgress && response.usage.total_tokens == 0)
    );
    assert!(matches!(got[2], ResponseStreamEvent::OutputItemAdded { .. }));
    assert!(matches!(got[3], ResponseStreamEvent::ContentPartAdded { .. }));
    assert!(matches!(got[6], ResponseStreamEvent::OutputTextDone { ref text, .. } if text == "Hello"));
    assert!(matches!(got[7], ResponseStreamEvent::ContentPartDone { .. }));
    assert!(matches!(got[8], ResponseStreamEvent::OutputItemDone { .. }));
    let text: String = got.iter().map(|e| e.delta()).collect();
    assert_eq!(text, "Hello");
    let last = got.last().unwrap();
    assert!(matches!(last, ResponseStreamEvent::Completed { sequence_number: 9, .. }));
    let r = last.response().unwrap();
    assert_eq!((r.output_text.as_str(), r.usage.input_tokens_details.cached_tokens), ("Hello", 8));
}

#[test]
fn responses_stream_ends_after_incomplete_and_after_error_then_failed() {
    let incomplete = events(&["a"], "response.incomplete");
    let mut failed = events(&["a"], "response.failed");
    let n = failed.len();
    failed.insert(
        n - 1,
        ("error".into(), r#"{"type":"error","sequence_number":99,"code":"device_error","message":"device lost","param":null}"#.into()),
    );
    let stub = Stub::start(vec![sse(&incomplete), sse(&failed)]);
    let c = client(&stub);
    let one: Vec<_> = c.responses().stream(&ResponseRequest::new("m", "Hi")).unwrap().collect::<Result<_>>().unwrap();
    assert!(matches!(one.last().unwrap(), ResponseStreamEvent::Incomplete { .. }));
    let two: Vec<_> = c.responses().stream(&ResponseRequest::new("m", "Hi")).unwrap().collect::<Result<_>>().unwrap();
    assert!(
        matches!(&two[two.len() - 2], ResponseStreamEvent::Error { code, message, .. } if code.as_deref() == Some("device_error") && message == "device lost")
    );
    match two.last().unwrap() {
        ResponseStreamEvent::Failed { response, .. } => {
            assert_eq!(response.status, ResponseStatus::Failed);
            assert_eq!(response.error.as_ref().and_then(|e| e.code.as_deref()), Some("device_error"));
        }
        other => panic!("want Failed, got {other:?}"),
    }
}

#[test]
fn responses_stream_cut_off_before_its_last_event() {
    let evs = events(&["a"], "response.completed");
    let stub = Stub::start(vec![sse(&evs[..4])]);
    let got: Vec<_> = client(&stub).responses().stream(&ResponseRequest::new("m", "Hi")).unwrap().collect();
    assert_eq!(got.len(), 5);
    match &got[4] {
        Err(Error::Transport(t)) => assert!(t.to_string().contains("before its last event"), "{t}"),
        other => panic!("want a transport error, got {other:?}"),
    }
}

#[test]
fn responses_errors_are_typed_and_not_retried() {
    let cases = [
        (404, "not_found_error", "response_not_found", "response_id", ApiErrorKind::NotFound),
        (400, "invalid_request_error", "unsupported_parameter", "tools", ApiErrorKind::BadRequest),
        (429, "rate_limit_error", "insufficient_quota", "", ApiErrorKind::RateLimit),
    ];
    for (status, ty, code, param, kind) in cases {
        let p = if param.is_empty() { "null".to_string() } else { format!("\"{param}\"") };
        let body = format!(r#"{{"error":{{"message":"stub","type":"{ty}","param":{p},"code":"{code}"}}}}"#);
        let stub = Stub::start(vec![json(status, &body), json(200, &response("completed", "x"))]);
        let c = client(&stub);
        let err = if status == 404 {
            c.responses().retrieve("resp_x").unwrap_err()
        } else {
            c.responses().create(&ResponseRequest::new("m", "Hi")).unwrap_err()
        };
        match &err {
            Error::Api { status: s, kind: k, r#type, code: Some(c), param: got, .. } => {
                assert_eq!((*s, *k, r#type.as_str(), c.as_str()), (status, kind, ty, code));
                assert_eq!(got.as_deref().unwrap_or(""), param);
            }
            other => panic!("{status}: want an API error, got {other:?}"),
        }
        assert_eq!(stub.settled(Duration::from_millis(100)).len(), 1, "{status} was retried");
    }
}

#[test]
fn responses_stream_is_retried_on_429_and_503_before_it_starts() {
    let stub = Stub::start(vec![
        api_error(429, "rate_limit_exceeded", Some("0")),
        api_error(503, "overloaded", Some("0")),
        sse(&events(&["a"], "response.completed")),
    ]);
    let got: Vec<_> = client(&stub).responses().stream(&ResponseRequest::new("m", "Hi")).unwrap().collect::<Result<_>>().unwrap();
    assert!(matches!(got.last().unwrap(), ResponseStreamEvent::Completed { .. }));
    assert_eq!(stub.seen().len(), 3);
}
