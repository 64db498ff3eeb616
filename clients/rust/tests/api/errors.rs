//! Each kind of error, produced by a real server and matched as its
//! variant.

use std::time::{Duration, Instant};

use neuro_client::{ApiErrorKind, ChatCompletionRequest, Client, CompileOptions, DeploymentRequest, Error, Format, Message, RunRequest};

use crate::{client, server};

fn read(path: &str) -> Vec<u8> {
    std::fs::read(server::repo_root().join(path)).unwrap()
}

#[test]
fn authentication() {
    let srv = server::mock();
    let c = Client::new(&srv.url, "sk-not-a-key").unwrap();
    match c.models().list() {
        Err(e @ Error::Api { status: 401, kind: ApiErrorKind::Authentication, .. }) => {
            if let Error::Api { r#type, code, request_id, .. } = &e {
                assert_eq!((r#type.as_str(), code.as_deref()), ("authentication_error", Some("invalid_api_key")));
                assert!(request_id.as_deref().map_or(false, |id| id.starts_with("req_")), "{e:?}");
            }
            assert!(!e.to_string().contains("sk-not-a-key"), "the key is in the message: {e}");
        }
        other => panic!("want 401, got {other:?}"),
    }
    let none = Client::builder().base_url(&srv.url).api_key("").build().unwrap();
    assert_eq!(none.models().list().unwrap_err().kind(), Some(ApiErrorKind::Authentication));
    assert!(none.health().unwrap().is_ok(), "/health needs no key");
}

#[test]
fn permission_denied() {
    let c = client(&server::mock(), "errors");
    match c.deployments().delete("neuro-1-lite-cpu") {
        Err(Error::Api { status: 403, kind: ApiErrorKind::PermissionDenied, code: Some(code), .. }) => {
            assert_eq!(code, "permission_denied")
        }
        other => panic!("want 403, got {other:?}"),
    }
    assert!(matches!(c.models().delete("neuro-1-lite"), Err(Error::Api { kind: ApiErrorKind::PermissionDenied, .. })));
}

#[test]
fn not_found() {
    let c = client(&server::mock(), "errors");
    match c.models().retrieve("neuro-0") {
        Err(Error::Api { status: 404, kind: ApiErrorKind::NotFound, r#type, code: Some(code), message, .. }) => {
            assert_eq!((r#type.as_str(), code.as_str()), ("not_found_error", "model_not_found"));
            assert!(message.contains("neuro-0"), "{message}");
        }
        other => panic!("want 404, got {other:?}"),
    }
    assert!(matches!(
        c.deployments().retrieve("no-such-deployment"),
        Err(Error::Api { status: 404, kind: ApiErrorKind::NotFound, code: Some(code), .. }) if code == "deployment_not_found"
    ));
    let chat = ChatCompletionRequest::new("neuro-0", vec![Message::user("Hi")]);
    assert_eq!(c.chat().create(&chat).unwrap_err().kind(), Some(ApiErrorKind::NotFound));
    assert_eq!(c.chat().stream(&chat).unwrap_err().kind(), Some(ApiErrorKind::NotFound), "an error before the stream starts");
}

#[test]
fn conflict() {
    let c = client(&server::mock(), "errors");
    let req = DeploymentRequest::new("neuro-1-lite", "cpu").id("rust-conflict").max_batch_size(1);
    c.deployments().create(&req).unwrap();
    match c.deployments().create(&req) {
        Err(Error::Api { status: 409, kind: ApiErrorKind::Conflict, code: Some(code), param, .. }) => {
            assert_eq!((code.as_str(), param.as_deref()), ("deployment_exists", Some("id")));
        }
        other => panic!("want 409, got {other:?}"),
    }
    c.deployments().delete("rust-conflict").unwrap();

    let net = c.networks().compile(&read("compile/pytorch/testdata/snn/snntorch_leaky.pt"), Format::PyTorch, None).unwrap();
    let dep = c.deployments().create(&DeploymentRequest::new(&net.id, "cpu")).unwrap();
    match c.models().delete(&net.id) {
        Err(Error::Api { status: 409, kind: ApiErrorKind::Conflict, code: Some(code), message, .. }) => {
            assert_eq!(code, "model_in_use");
            assert!(message.contains(&dep.id), "names the deployment: {message}");
        }
        other => panic!("want 409, got {other:?}"),
    }
    c.deployments().delete(&dep.id).unwrap();
    c.models().delete(&net.id).unwrap();
}

#[test]
fn unprocessable() {
    let c = client(&server::mock(), "errors");
    // A plain nn.Sequential state_dict does not say what its layers are.
    let pt = read("compile/testdata/digits/mlp_state_dict.pt");
    match c.networks().compile(&pt, Format::PyTorch, None) {
        Err(Error::Api { status: 422, kind: ApiErrorKind::UnprocessableEntity, code: Some(code), message, .. }) => {
            assert_eq!(code, "unsupported_model");
            assert!(message.contains("options.layers"), "{message}");
        }
        other => panic!("want 422, got {other:?}"),
    }
}

#[test]
fn bad_request() {
    let c = client(&server::mock(), "errors");
    let hot = ChatCompletionRequest::new("neuro-1-lite", vec![Message::user("Hi")]).temperature(5.0);
    match c.chat().create(&hot) {
        Err(Error::Api { status: 400, kind: ApiErrorKind::BadRequest, r#type, param, .. }) => {
            assert_eq!((r#type.as_str(), param.as_deref()), ("invalid_request_error", Some("temperature")));
        }
        other => panic!("want 400, got {other:?}"),
    }
    let empty = ChatCompletionRequest::new("neuro-1-lite", vec![]);
    assert!(matches!(c.chat().create(&empty), Err(Error::Api { status: 400, param: Some(p), .. }) if p == "messages"));
    match c.deployments().run("neuro-1-lite-cpu", &RunRequest::new(vec![vec![0.0f32]])) {
        Err(Error::Api { status: 400, code: Some(code), .. }) => assert_eq!(code, "not_a_network"),
        other => panic!("want 400 not_a_network, got {other:?}"),
    }
    let bad_layers = CompileOptions::new().option("layers", "0:linear");
    match c.networks().compile(&read("compile/testdata/digits/mlp_state_dict.pt"), Format::PyTorch, Some(&bad_layers)) {
        Err(Error::Api { status: 400, param: Some(p), code: Some(code), .. }) => {
            assert_eq!((p.as_str(), code.as_str()), ("options.layers", "invalid_type"))
        }
        other => panic!("want 400, got {other:?}"),
    }
    assert!(matches!(c.models().retrieve(""), Err(Error::InvalidArgument(_))), "an empty id is refused before sending");
}

/// The rate limit (600 requests a minute per key, a bucket that holds a
/// minute's worth) answers 429 with Retry-After; the client's own retry
/// then waits for it and gets through.
#[test]
fn rate_limit() {
    let srv = server::mock();
    let once = client(&srv, "rate").with_max_retries(0);
    let retrying = client(&srv, "rate");
    let drain = || {
        let mut sent = 0;
        loop {
            match once.deployments().retrieve("neuro-1-lite-cpu") {
                Ok(_) => sent += 1,
                Err(e) => return (sent, e),
            }
            assert!(sent <= 2000, "no 429 after {sent} requests");
        }
    };
    let (sent, err) = drain();
    match &err {
        Error::Api { status: 429, kind: ApiErrorKind::RateLimit, code: Some(code), retry_after: Some(wait), .. } => {
            assert_eq!(code, "rate_limit_exceeded");
            assert!(*wait >= Duration::from_secs(1) && *wait <= Duration::from_secs(60), "{wait:?}");
        }
        other => panic!("want 429 with Retry-After, got {other:?} after {sent} requests"),
    }
    assert!(sent >= 500, "limited after {sent} requests");
    // The bucket refills a token every 100 ms: a call that comes later
    // than that after the 429 gets through at once, so drain it again
    // when that happened.
    for _ in 0..3 {
        let start = Instant::now();
        retrying.deployments().retrieve("neuro-1-lite-cpu").unwrap();
        let took = start.elapsed();
        if took >= Duration::from_millis(900) {
            assert!(took < Duration::from_secs(5), "retried after {took:?}");
            return;
        }
        drain();
    }
    panic!("the call after a 429 never had to wait");
}
