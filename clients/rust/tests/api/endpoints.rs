//! Every endpoint of docs/API.md, in mock and real mode.

use std::time::{Duration, Instant};

use neuro_client::{
    ApiErrorKind, ChatCompletionRequest, CompletionRequest, DeploymentRequest, DeploymentStatus, Error, FinishReason, Format, Message,
    Role, TelemetryQuery,
};

use crate::{both, client, endless, server};

fn hello() -> Vec<Message> {
    vec![Message::system("You are brief."), Message::user("Hello there")]
}

#[test]
fn health() {
    for srv in both() {
        let h = client(&srv, "main").health().unwrap();
        assert!(h.is_ok(), "{h:?}");
        assert_eq!(h.mock, srv.mock);
        assert!(h.deployments.iter().any(|d| d.id == "neuro-1-lite-cpu" && d.status == "ready"), "{h:?}");
    }
}

#[test]
fn models() {
    for srv in both() {
        let c = client(&srv, "main");
        let list = c.models().list().unwrap();
        for id in ["neuro-1-lite", "neuro-1-standard", "neuro-1-heavy"] {
            let m = list.iter().find(|m| m.id == id).unwrap_or_else(|| panic!("{id} not listed"));
            assert!(m.capabilities.chat && m.capabilities.streaming, "{id}");
        }
        assert!(list.iter().all(|m| m.id != "neuro-1"), "the alias is not listed");
        let m = c.models().retrieve("neuro-1").unwrap();
        assert_eq!((m.id.as_str(), m.object.as_str()), ("neuro-1-standard", "model"));
        let lite = c.models().retrieve("neuro-1-lite").unwrap();
        let net = lite.neuromorphic.expect("network description");
        assert!(net.neurons > 0 && net.synapses > 0 && net.timesteps_per_token.is_some() && !net.devices.is_empty(), "{net:?}");
        assert!(lite.card.is_some());
    }
}

#[test]
fn chat_completion() {
    for srv in both() {
        let c = client(&srv, "main");
        let req = ChatCompletionRequest::new("neuro-1-lite", hello()).max_tokens(8).temperature(0.0);
        let r = c.chat().create(&req).unwrap();
        assert!(r.id.starts_with("chatcmpl-") && r.object == "chat.completion", "{r:?}");
        assert_eq!(r.model, "neuro-1-lite");
        assert_eq!(r.choices.len(), 1);
        assert_eq!(r.choices[0].message.role, Role::Assistant);
        assert!(r.choices[0].finish_reason.is_some());
        assert!(r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0 && r.usage.completion_tokens <= 8, "{:?}", r.usage);
        assert_eq!(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
        assert!(r.usage.neuromorphic.as_ref().map_or(false, |n| n.timesteps > 0), "{:?}", r.usage);
        let again = c.chat().create(&req).unwrap();
        assert_eq!(again.content(), r.content(), "temperature 0 is deterministic");

        let two = c.chat().create(&ChatCompletionRequest::new("neuro-1-lite", hello()).max_tokens(4).n(2).seed(3)).unwrap();
        assert_eq!(two.choices.iter().map(|ch| ch.index).collect::<Vec<_>>(), [0, 1]);
    }
}

#[test]
fn chat_through_a_deployment() {
    for srv in both() {
        let c = client(&srv, "main");
        let req = ChatCompletionRequest::new("", hello()).max_tokens(4).deployment("neuro-1-lite-loihi");
        let r = c.chat().create(&req).unwrap();
        assert_eq!(r.model, "neuro-1-lite");
        let wrong = ChatCompletionRequest::new("neuro-1-heavy", hello()).max_tokens(4).deployment("neuro-1-lite-loihi");
        assert_eq!(c.chat().create(&wrong).unwrap_err().kind(), Some(ApiErrorKind::BadRequest));
    }
}

#[test]
fn text_completion() {
    for srv in both() {
        let c = client(&srv, "main");
        let r = c
            .completions()
            .create(&CompletionRequest::new("neuro-1-lite", vec!["Once upon a time", "The cat"]).max_tokens(4).n(2))
            .unwrap();
        assert!(r.id.starts_with("cmpl-") && r.object == "text_completion", "{r:?}");
        assert_eq!(r.choices.iter().map(|ch| ch.index).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert!(r.choices.iter().all(|ch| ch.finish_reason.is_some()));
        let usage = r.usage.expect("usage");
        assert!(usage.completion_tokens > 0 && usage.completion_tokens <= 16);

        let echo = c
            .completions()
            .create(&CompletionRequest::new("neuro-1-lite", "Once upon a time").max_tokens(0).echo(true).logprobs(1))
            .unwrap();
        assert_eq!(echo.text(), "Once upon a time");
        let lp = echo.choices[0].logprobs.as_ref().expect("logprobs");
        assert_eq!(lp.token_logprobs.first(), Some(&None), "the first token has no context");
        assert_eq!(lp.tokens.len(), lp.text_offset.len());
    }
}

#[test]
fn deployments_lifecycle() {
    for srv in both() {
        let c = client(&srv, "main");
        let list = c.deployments().list().unwrap();
        let lite = list.iter().find(|d| d.id == "neuro-1-lite-cpu").expect("neuro-1-lite-cpu");
        assert_eq!((lite.owned_by.as_str(), lite.status, lite.device.kind.as_str()), ("system", DeploymentStatus::Ready, "cpu"));
        let loihi = c.deployments().retrieve("neuro-1-lite-loihi").unwrap();
        assert_eq!((loihi.model.as_str(), loihi.device.name.as_str()), ("neuro-1-lite", "loihi"));

        let id = format!("rust-lite-{}", if srv.mock { "mock" } else { "real" });
        let d = c.deployments().create(&DeploymentRequest::new("neuro-1-lite", "cpu").id(&id).max_batch_size(2)).unwrap();
        assert_eq!((d.id.as_str(), d.model.as_str(), d.max_batch_size), (id.as_str(), "neuro-1-lite", 2));
        assert!(d.owned_by.starts_with("key-"), "{d:?}");
        let ready = c.deployments().wait(&id, Duration::from_secs(60)).unwrap();
        assert_eq!(ready.status, DeploymentStatus::Ready);
        assert!(c.deployments().list().unwrap().iter().any(|x| x.id == id));
        assert!(client(&srv, "other").deployments().list().unwrap().iter().all(|x| x.id != id), "another key sees it");
        let r = c.chat().create(&ChatCompletionRequest::new("", hello()).max_tokens(3).deployment(&id)).unwrap();
        assert_eq!(r.model, "neuro-1-lite");
        let gone = c.deployments().delete(&id).unwrap();
        assert!(gone.deleted && gone.id == id && gone.object == "deployment", "{gone:?}");
        let err = c.deployments().retrieve(&id).unwrap_err();
        assert_eq!(err.code(), Some("deployment_not_found"));
    }
}

#[test]
fn compile_and_delete_a_network() {
    let pt = std::fs::read(server::repo_root().join("compile/pytorch/testdata/snn/snntorch_leaky.pt")).unwrap();
    for srv in both() {
        let c = client(&srv, "main");
        let net = c.networks().compile(&pt, Format::PyTorch, Some(&neuro_client::CompileOptions::new().name("leaky"))).unwrap();
        assert!(net.id.starts_with("net-") && net.object == "compiled_network" && net.status == "succeeded", "{net:?}");
        assert_eq!((net.name.as_str(), net.network.inputs, net.network.outputs), ("leaky", 8, 4));
        assert_eq!((net.source.format.as_str(), net.source.bytes), ("pytorch", pt.len() as u64));
        assert!(net.target.fits && net.target.device == "cpu");
        let m = c.models().list().unwrap().into_iter().find(|m| m.id == net.id).expect("listed among the caller's models");
        assert_eq!(m.owned_by, net.owned_by);
        assert!(matches!(client(&srv, "other").models().retrieve(&net.id), Err(Error::Api { kind: ApiErrorKind::NotFound, .. })));
        let gone = c.models().delete(&net.id).unwrap();
        assert!(gone.deleted && gone.object == "model");
        assert_eq!(c.models().retrieve(&net.id).unwrap_err().code(), Some("model_not_found"));
    }
}

#[test]
fn telemetry() {
    for srv in both() {
        let c = client(&srv, "telemetry");
        c.chat().create(&ChatCompletionRequest::new("neuro-1-lite", hello()).max_tokens(4)).unwrap();
        // The handler records a request as it returns, which can be a
        // moment after the client has the answer.
        let deadline = Instant::now() + Duration::from_secs(5);
        let t = loop {
            let t = c.telemetry().retrieve(&TelemetryQuery::new().window("5m").model("neuro-1-lite")).unwrap();
            if t.totals.requests.total >= 1 || Instant::now() > deadline {
                break t;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(t.object, "telemetry");
        assert_eq!(t.totals.requests.total, 1, "{t:?}");
        assert_eq!(t.totals.requests.by_endpoint.get("/v1/chat/completions"), Some(&1));
        assert!(t.totals.tokens.completion > 0 && t.totals.latency_ms.p50 > 0.0);
        assert!(t.by_model.contains_key("neuro-1-lite") && t.by_deployment.contains_key("neuro-1-lite-cpu"), "{t:?}");
        assert!(t.window.end >= t.window.start);
        let bad = c.telemetry().retrieve(&TelemetryQuery::new().window("yesterday")).unwrap_err();
        assert_eq!(bad.kind(), Some(ApiErrorKind::BadRequest));
    }
}

#[test]
fn metrics() {
    for srv in both() {
        let text = client(&srv, "main").metrics().unwrap();
        assert!(text.contains("neuro_http_requests_total"), "{}", &text[..text.len().min(500)]);
    }
}

#[test]
fn finish_reason_length() {
    let c = client(&server::mock(), "main");
    let r = c.chat().create(&endless(ChatCompletionRequest::new("neuro-1-lite", hello())).max_tokens(1)).unwrap();
    assert_eq!(r.choices[0].finish_reason, Some(FinishReason::Length));
}
