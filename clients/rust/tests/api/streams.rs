//! Streams: what they carry, and what dropping one does to the server.

use std::time::{Duration, Instant};

use neuro_client::{
    ApiErrorKind, ChatCompletionChunk, ChatCompletionRequest, CompletionRequest, Error, Message, Result, Role, TelemetryQuery,
};

use crate::{both, client, endless, server};

fn story() -> Vec<Message> {
    vec![Message::user("Tell me a story about a fox.")]
}

#[test]
fn a_stream_concatenates_to_the_unstreamed_answer() {
    for srv in both() {
        let c = client(&srv, "main");
        let req = ChatCompletionRequest::new("neuro-1-lite", story()).temperature(0.0).max_tokens(40);
        let whole = c.chat().create(&req).unwrap();
        let chunks: Vec<ChatCompletionChunk> = c.chat().stream(&req.clone().include_usage(true)).unwrap().collect::<Result<_>>().unwrap();

        let first = &chunks[0].choices[0];
        assert_eq!((first.delta.role, first.delta.content.as_deref()), (Some(Role::Assistant), Some("")));
        assert!(chunks.iter().all(|ch| ch.id == chunks[0].id && ch.object == "chat.completion.chunk" && ch.id.starts_with("chatcmpl-")));
        let text: String = chunks.iter().map(|ch| ch.content()).collect();
        assert!(!text.is_empty());
        assert_eq!(text, whole.content(), "mock: {}", srv.mock);
        let finish: Vec<_> = chunks.iter().flat_map(|ch| &ch.choices).filter_map(|c| c.finish_reason).collect();
        assert_eq!(finish, [whole.choices[0].finish_reason.unwrap()]);
        let last = chunks.last().unwrap();
        assert!(last.choices.is_empty(), "the usage chunk has no choices");
        let usage = last.usage.as_ref().expect("usage");
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (whole.usage.prompt_tokens, whole.usage.completion_tokens));
    }
}

#[test]
fn a_stream_through_a_deployment() {
    for srv in both() {
        let c = client(&srv, "main");
        let req = ChatCompletionRequest::new("", story()).temperature(0.0).max_tokens(12).deployment("neuro-1-lite-loihi");
        let whole = c.chat().create(&req).unwrap();
        let mut text = String::new();
        for chunk in c.chat().stream(&req).unwrap() {
            let chunk = chunk.unwrap();
            assert_eq!(chunk.model, "neuro-1-lite");
            text += chunk.content();
        }
        assert_eq!(text, whole.content());
    }
}

#[test]
fn a_text_completion_stream() {
    let real = client(&server::real(), "main");
    let req = CompletionRequest::new("neuro-1-lite", "Once upon a time").temperature(0.0).max_tokens(30);
    let whole = real.completions().create(&req).unwrap();
    let mut text = String::new();
    for chunk in real.completions().stream(&req).unwrap() {
        text += chunk.unwrap().text();
    }
    assert_eq!(text, whole.text());

    // Mock mode refuses streamed text completions, before the stream starts.
    let mock = client(&server::mock(), "main");
    match mock.completions().stream(&req) {
        Err(Error::Api { status: 400, kind: ApiErrorKind::BadRequest, code: Some(code), .. }) => assert_eq!(code, "stream_not_supported"),
        other => panic!("want 400 stream_not_supported, got {other:?}"),
    }
}

#[test]
fn spiking_activity_rides_on_the_chunks() {
    let c = client(&server::real(), "main");
    let req = ChatCompletionRequest::new("neuro-1-lite", story()).max_tokens(5).activity(true);
    let mut content_chunks = 0;
    let mut spikes = 0;
    for chunk in c.chat().stream(&req).unwrap() {
        let chunk = chunk.unwrap();
        if chunk.content().is_empty() {
            continue;
        }
        content_chunks += 1;
        let act = chunk.neuro.expect("activity on a content chunk");
        assert!(!act.activity.is_empty());
        for layer in &act.activity {
            assert!(!layer.layer.is_empty() && layer.neurons > 0);
            assert!(layer.spikes.iter().all(|&i| i < layer.neurons), "{layer:?}");
            spikes += layer.spikes.len();
        }
    }
    assert!(content_chunks > 0 && spikes > 0, "{content_chunks} chunks, {spikes} spikes");
}

/// Dropping a stream closes its connection: the deployment's slot is free
/// again at once, and the request counts as failed, with far fewer tokens
/// than it would have generated.
#[test]
fn dropping_a_stream_stops_the_generation() {
    let srv = server::real();
    let c = client(&srv, "drop");
    // neuro-1-heavy with its end tokens banned runs to its context length;
    // the activity makes each chunk a few kilobytes, so the server soon
    // waits on the socket for a reader that has stopped reading.
    let req = endless(ChatCompletionRequest::new("neuro-1-heavy", story()).activity(true));
    let mut stream = c.chat().stream(&req).unwrap();
    for _ in 0..3 {
        let chunk = stream.next().expect("a chunk").unwrap();
        assert!(chunk.choices[0].finish_reason.is_none(), "the completion ended before the client left");
    }
    let busy = c.deployments().retrieve("neuro-1-heavy-cpu").unwrap();
    assert_eq!(busy.load.active, 1, "generating while the stream is held: {:?}", busy.load);

    drop(stream);
    let left = Instant::now();
    loop {
        let d = c.deployments().retrieve("neuro-1-heavy-cpu").unwrap();
        if d.load.active == 0 && d.load.queued == 0 {
            break;
        }
        assert!(left.elapsed() < Duration::from_secs(5), "still generating 5 s after the drop: {:?}", d.load);
        std::thread::sleep(Duration::from_millis(5));
    }
    let freed = left.elapsed();
    let q = TelemetryQuery::new().deployment("neuro-1-heavy-cpu");
    let t = loop {
        let t = c.telemetry().retrieve(&q).unwrap();
        if t.totals.requests.total > 0 || left.elapsed() > Duration::from_secs(5) {
            break t;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!((t.totals.requests.total, t.totals.requests.errors), (1, 1), "the abandoned request: {:?}", t.totals.requests);
    assert!(t.totals.tokens.completion < 1000, "{} tokens generated after the drop", t.totals.tokens.completion);
    eprintln!("slot freed {freed:?} after the drop; {} tokens generated", t.totals.tokens.completion);
}
