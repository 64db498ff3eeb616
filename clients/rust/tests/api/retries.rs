//! Retries, timeouts and what reaches the wire, against a scripted stub.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use neuro_client::{ApiErrorKind, ChatCompletionRequest, Client, ClientBuilder, Error, Message};

use crate::stub::{api_error, events, http, json, keep_alive, Reply, Stub};

const CHAT_OK: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"neuro-1-lite",
"choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"logprobs":null,"finish_reason":"stop"}],
"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}"#;
const LIST_OK: &str = r#"{"object":"list","data":[]}"#;

/// A client of the stub with short backoffs.
fn builder(stub: &Stub) -> ClientBuilder {
    Client::builder()
        .base_url(&stub.url)
        .api_key("sk-stub")
        .backoff(Duration::from_millis(10), Duration::from_millis(50))
        .timeout(Duration::from_secs(10))
}

fn chat() -> ChatCompletionRequest {
    ChatCompletionRequest::new("neuro-1-lite", vec![Message::user("Hi")])
}

#[test]
fn rate_limited_post_waits_for_retry_after_then_succeeds() {
    let stub = Stub::start(vec![api_error(429, "rate_limit_exceeded", Some("1")), json(200, CHAT_OK)]);
    let client = builder(&stub).build().unwrap();
    let start = Instant::now();
    let r = client.chat().create(&chat()).unwrap();
    let took = start.elapsed();
    assert_eq!(r.content(), "Hi");
    let seen = stub.seen();
    assert_eq!(seen.len(), 2);
    let gap = seen[1].at - seen[0].at;
    assert!(gap >= Duration::from_millis(950) && gap < Duration::from_millis(2000), "retried after {gap:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert_eq!(seen[0].body, seen[1].body, "the same request again");
}

#[test]
fn post_failing_after_it_was_sent_is_not_retried() {
    let stub = Stub::start(vec![Reply::Close, json(200, CHAT_OK)]);
    let client = builder(&stub).build().unwrap();
    match client.chat().create(&chat()) {
        Err(Error::Transport(t)) => assert!(t.request_sent(), "{t}"),
        other => panic!("want a transport error, got {other:?}"),
    }
    assert_eq!(stub.settled(Duration::from_millis(200)).len(), 1, "a POST the server may have run was sent again");
}

#[test]
fn post_failing_after_it_was_sent_is_retried_when_asked() {
    let stub = Stub::start(vec![Reply::Close, json(200, CHAT_OK)]);
    let client = builder(&stub).retry_non_idempotent(true).build().unwrap();
    assert_eq!(client.chat().create(&chat()).unwrap().content(), "Hi");
    assert_eq!(stub.seen().len(), 2);
}

#[test]
fn get_failing_after_it_was_sent_is_retried() {
    let stub = Stub::start(vec![Reply::Close, Reply::Close, json(200, LIST_OK)]);
    let client = builder(&stub).build().unwrap();
    assert!(client.models().list().unwrap().is_empty());
    assert_eq!(stub.seen().len(), 3);
}

#[test]
fn post_that_could_not_connect_is_retried() {
    // A port nobody listens on until 300 ms later.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let opening = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        Stub::on(TcpListener::bind(addr).unwrap(), vec![json(200, CHAT_OK)])
    });
    let client = Client::builder()
        .base_url(format!("http://{addr}"))
        .backoff(Duration::from_millis(400), Duration::from_secs(1))
        .max_retries(3)
        .build()
        .unwrap();
    let start = Instant::now();
    let r = client.chat().create(&chat());
    let stub = opening.join().unwrap();
    assert_eq!(r.unwrap().content(), "Hi", "after {:?}", start.elapsed());
    assert_eq!(stub.seen().len(), 1);
}

#[test]
fn refused_connection_is_a_transport_error_once_retries_are_spent() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let client =
        Client::builder().base_url(format!("http://{addr}")).backoff(Duration::from_millis(5), Duration::from_millis(5)).build().unwrap();
    match client.models().list() {
        Err(Error::Transport(t)) => assert!(!t.request_sent(), "{t}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn other_statuses_are_not_retried() {
    for (status, kind) in [
        (400, ApiErrorKind::BadRequest),
        (401, ApiErrorKind::Authentication),
        (404, ApiErrorKind::NotFound),
        (409, ApiErrorKind::Conflict),
        (422, ApiErrorKind::UnprocessableEntity),
        (500, ApiErrorKind::Server),
        (502, ApiErrorKind::Server),
    ] {
        let stub = Stub::start(vec![api_error(status, "nope", Some("0")), json(200, LIST_OK)]);
        let client = builder(&stub).build().unwrap();
        let err = client.models().list().unwrap_err();
        assert_eq!((err.status(), err.kind()), (Some(status), Some(kind)), "{err}");
        assert_eq!(stub.settled(Duration::from_millis(100)).len(), 1, "{status} was retried");
    }
}

#[test]
fn unavailable_is_retried_with_backoff() {
    let stub = Stub::start(vec![api_error(503, "overloaded", None), json(200, LIST_OK)]);
    let client = builder(&stub).build().unwrap();
    client.models().list().unwrap();
    assert_eq!(stub.seen().len(), 2);
}

#[test]
fn retries_stop_at_max_retries() {
    let replies = (0..4).map(|_| api_error(429, "rate_limit_exceeded", Some("0"))).collect();
    let stub = Stub::start(replies);
    let client = builder(&stub).max_retries(2).build().unwrap();
    let err = client.models().list().unwrap_err();
    assert_eq!(err.kind(), Some(ApiErrorKind::RateLimit));
    assert_eq!(stub.settled(Duration::from_millis(100)).len(), 3);

    let stub = Stub::start(vec![api_error(429, "rate_limit_exceeded", Some("0")), json(200, LIST_OK)]);
    let err = builder(&stub).build().unwrap().with_max_retries(0).models().list().unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::ZERO));
    assert_eq!(stub.settled(Duration::from_millis(100)).len(), 1);
}

#[test]
fn a_long_retry_after_is_returned_not_waited_for() {
    let stub = Stub::start(vec![api_error(429, "rate_limit_exceeded", Some("3600")), json(200, LIST_OK)]);
    let start = Instant::now();
    let err = builder(&stub).build().unwrap().models().list().unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
    assert_eq!(stub.settled(Duration::from_millis(100)).len(), 1);
}

#[test]
fn an_exceeded_quota_is_not_retried() {
    let stub = Stub::start(vec![api_error(429, "insufficient_quota", None), json(200, LIST_OK)]);
    let err = builder(&stub).build().unwrap().models().list().unwrap_err();
    assert_eq!(err.code(), Some("insufficient_quota"));
    assert_eq!(stub.settled(Duration::from_millis(100)).len(), 1);
}

#[test]
fn a_post_that_times_out_is_not_retried() {
    let stub = Stub::start(vec![Reply::Hang(Duration::from_secs(3)), json(200, CHAT_OK)]);
    let client = builder(&stub).timeout(Duration::from_millis(300)).build().unwrap();
    let start = Instant::now();
    let r = client.chat().create(&chat());
    assert!(matches!(r, Err(Error::Timeout)), "{r:?}");
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(2), "{took:?}");
    assert_eq!(stub.settled(Duration::from_millis(200)).len(), 1);
}

#[test]
fn a_get_that_times_out_is_retried() {
    let stub = Stub::start(vec![Reply::Hang(Duration::from_secs(3)), json(200, LIST_OK)]);
    let client = builder(&stub).timeout(Duration::from_millis(300)).build().unwrap();
    client.models().list().unwrap();
    assert_eq!(stub.seen().len(), 2);
}

/// A pooled connection gets the same timeout as a new one.
#[test]
fn a_hung_answer_on_a_reused_connection_times_out() {
    let stub = Stub::start(vec![keep_alive(LIST_OK, Reply::Hang(Duration::from_secs(5)))]);
    let client = builder(&stub).timeout(Duration::from_millis(300)).max_retries(0).build().unwrap();
    client.models().list().unwrap();
    let start = Instant::now();
    let r = client.models().list();
    assert!(matches!(r, Err(Error::Timeout)), "{r:?}");
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    assert_eq!(stub.seen().len(), 2, "both requests on one connection");
}

/// A stream whose server stops sending fails after the timeout, though
/// the whole stream may last longer than it.
#[test]
fn a_stalled_stream_times_out() {
    let chunk = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[]}"#;
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n".to_string();
    let stub = Stub::start(vec![Reply::KeepAlive(head + &format!("data: {chunk}\n\n"), Box::new(Reply::Close))]);
    let client = builder(&stub).timeout(Duration::from_millis(300)).build().unwrap();
    let mut s = client.chat().stream(&chat()).unwrap();
    assert!(s.next().unwrap().is_ok());
    let start = Instant::now();
    assert!(matches!(s.next(), Some(Err(Error::Timeout))));
    assert!(start.elapsed() >= Duration::from_millis(250));
    assert!(s.next().is_none());
}

#[test]
fn a_stream_ends_at_an_error_event() {
    let chunk = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}"#;
    let err = r#"{"error":{"message":"the device failed","type":"server_error","param":null,"code":"internal_error"}}"#;
    let stub = Stub::start(vec![events(&[chunk, err, chunk, "[DONE]"])]);
    let items: Vec<_> = builder(&stub).build().unwrap().chat().stream(&chat()).unwrap().collect();
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0].as_ref().unwrap().content(), "Hi");
    match &items[1] {
        Err(Error::Api { status: 200, kind: ApiErrorKind::Server, code: Some(code), message, .. }) => {
            assert_eq!((code.as_str(), message.as_str()), ("internal_error", "the device failed"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_stream_without_done_is_an_error() {
    let chunk = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[]}"#;
    let stub = Stub::start(vec![events(&[chunk])]);
    let items: Vec<_> = builder(&stub).build().unwrap().chat().stream(&chat()).unwrap().collect();
    assert_eq!(items.len(), 2);
    assert!(matches!(&items[1], Err(Error::Transport(t)) if t.to_string().contains("before [DONE]")), "{items:?}");
}

#[test]
fn answers_that_are_not_the_apis() {
    let stub = Stub::start(vec![http(502, &[("Content-Type", "text/html")], "<html>Bad Gateway</html>")]);
    match builder(&stub).build().unwrap().models().list() {
        Err(Error::Api { status: 502, kind: ApiErrorKind::Server, r#type, message, .. }) => {
            assert!(r#type.is_empty());
            assert_eq!(message, "<html>Bad Gateway</html>");
        }
        other => panic!("{other:?}"),
    }
    let stub = Stub::start(vec![json(200, "{\"object\":\"list\",\"data\":[{\"id\":1}]}")]);
    match builder(&stub).build().unwrap().models().list() {
        Err(Error::Decode(d)) => assert_eq!(d.status(), 200),
        other => panic!("{other:?}"),
    }
    let stub = Stub::start(vec![json(200, "{}")]);
    match builder(&stub).build().unwrap().chat().stream(&chat()) {
        Err(Error::Decode(d)) => assert!(d.to_string().contains("not an event stream"), "{d}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn what_goes_on_the_wire() {
    let stub = Stub::start(vec![json(200, CHAT_OK), json(200, r#"{"status":"ok","mock":true,"deployments":[]}"#)]);
    let client = Client::builder().base_url(format!("{}/v1/", stub.url)).api_key("sk-wire").build().unwrap();
    client.chat().create(&chat().deployment("neuro-1-lite-loihi")).unwrap();
    assert!(client.health().unwrap().is_ok());
    let seen = stub.seen();
    let (post, health) = (&seen[0], &seen[1]);
    assert_eq!((post.method.as_str(), post.path.as_str()), ("POST", "/v1/deployments/neuro-1-lite-loihi/chat/completions"));
    assert_eq!(post.header("authorization"), Some("Bearer sk-wire"));
    assert_eq!(post.header("content-type"), Some("application/json"));
    assert!(post.header("user-agent").unwrap().starts_with("neuro-client-rust/"));
    let body: serde_json::Value = serde_json::from_slice(&post.body).unwrap();
    assert_eq!(body, serde_json::json!({"model":"neuro-1-lite","messages":[{"role":"user","content":"Hi"}]}));
    assert_eq!((health.method.as_str(), health.path.as_str(), health.header("authorization")), ("GET", "/health", None));
}
