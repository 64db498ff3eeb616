//! `/v1/responses` against the real servers, in mock and real mode: a
//! stored conversation made, read back, continued, streamed and deleted.

use neuro_client::{ApiErrorKind, Error, InputMessage, InputText, ResponseRequest, ResponseStatus, ResponseStreamEvent, Result, Role};

use crate::{both, client};

#[test]
fn responses_conversation() {
    for srv in both() {
        let c = client(&srv, "main");
        let mode = if srv.mock { "mock" } else { "real" };
        let turn = |input: &str| ResponseRequest::new("neuro-1-lite", input).max_output_tokens(16).temperature(0.0);

        let first = c.responses().create(&turn("Tell me about the sea.")).unwrap();
        assert!(first.id.starts_with("resp_") && first.object == "response", "{mode}: {first:?}");
        assert!(matches!(first.status, ResponseStatus::Completed | ResponseStatus::Incomplete), "{mode}: {:?}", first.status);
        assert!(!first.output_text.is_empty(), "{mode}");
        assert_eq!(first.output[0].content[0].text, first.output_text, "{mode}");
        assert_eq!(first.usage.total_tokens, first.usage.input_tokens + first.usage.output_tokens, "{mode}");
        assert!(first.usage.input_tokens_details.cached_tokens <= first.usage.input_tokens, "{mode}");

        let got = c.responses().retrieve(&first.id).unwrap();
        assert_eq!((got.id.as_str(), got.output_text.as_str()), (first.id.as_str(), first.output_text.as_str()), "{mode}");

        let second = c.responses().create(&turn("And the mountains?").previous_response_id(&first.id)).unwrap();
        assert_eq!(second.previous_response_id.as_deref(), Some(first.id.as_str()), "{mode}");
        assert_ne!(second.id, first.id);
        assert!(second.usage.input_tokens > first.usage.input_tokens + first.usage.output_tokens, "{mode}: the second turn sees the first");

        let events: Vec<ResponseStreamEvent> =
            c.responses().stream(&turn("And the sky?").previous_response_id(&second.id)).unwrap().collect::<Result<_>>().unwrap();
        assert!(
            matches!(events[0], ResponseStreamEvent::Created { ref response, .. } if response.status == ResponseStatus::InProgress),
            "{mode}: {:?}",
            events[0]
        );
        assert!(matches!(events[1], ResponseStreamEvent::InProgress { .. }), "{mode}: {:?}", events[1]);
        assert!(matches!(events[2], ResponseStreamEvent::OutputItemAdded { .. }), "{mode}: {:?}", events[2]);
        assert!(matches!(events[3], ResponseStreamEvent::ContentPartAdded { .. }), "{mode}: {:?}", events[3]);
        let n = events.len();
        assert!(events[4..n - 4].iter().all(|e| matches!(e, ResponseStreamEvent::OutputTextDelta { .. })), "{mode}: {events:?}");
        assert!(matches!(events[n - 4], ResponseStreamEvent::OutputTextDone { .. }), "{mode}: {:?}", events[n - 4]);
        assert!(matches!(events[n - 3], ResponseStreamEvent::ContentPartDone { .. }), "{mode}: {:?}", events[n - 3]);
        assert!(matches!(events[n - 2], ResponseStreamEvent::OutputItemDone { .. }), "{mode}: {:?}", events[n - 2]);
        let seqs: Vec<u64> = events.iter().map(sequence_number).collect();
        assert_eq!(seqs, (0..n as u64).collect::<Vec<_>>(), "{mode}");
        let last = events.last().unwrap();
        assert!(matches!(last, ResponseStreamEvent::Completed { .. } | ResponseStreamEvent::Incomplete { .. }), "{mode}: {last:?}");
        let third = last.response().unwrap();
        let text: String = events.iter().map(|e| e.delta()).collect();
        assert_eq!(text, third.output_text, "{mode}");
        assert_eq!(third.previous_response_id.as_deref(), Some(second.id.as_str()), "{mode}");
        assert_eq!(c.responses().retrieve(&third.id).unwrap().output_text, text, "{mode}");

        for id in [&first.id, &second.id, &third.id] {
            let d = c.responses().delete(id).unwrap();
            assert!(d.deleted && &d.id == id, "{mode}: {d:?}");
        }
        match c.responses().retrieve(&first.id) {
            Err(Error::Api { status: 404, kind: ApiErrorKind::NotFound, code: Some(code), .. }) => {
                assert_eq!(code, "response_not_found", "{mode}")
            }
            other => panic!("{mode}: want 404 response_not_found, got {other:?}"),
        }
        match c.responses().create(&turn("Again?").previous_response_id(&second.id)) {
            Err(Error::Api { status: 404, code: Some(code), param: Some(param), .. }) => {
                assert_eq!((code.as_str(), param.as_str()), ("response_not_found", "previous_response_id"), "{mode}")
            }
            other => panic!("{mode}: want 404 response_not_found, got {other:?}"),
        }
    }
}

fn sequence_number(e: &ResponseStreamEvent) -> u64 {
    use ResponseStreamEvent::*;
    match e {
        Created { sequence_number, .. }
        | InProgress { sequence_number, .. }
        | OutputItemAdded { sequence_number, .. }
        | ContentPartAdded { sequence_number, .. }
        | OutputTextDelta { sequence_number, .. }
        | OutputTextDone { sequence_number, .. }
        | ContentPartDone { sequence_number, .. }
        | OutputItemDone { sequence_number, .. }
        | Completed { sequence_number, .. }
        | Incomplete { sequence_number, .. }
        | Failed { sequence_number, .. }
        | Error { sequence_number, .. } => *sequence_number,
        _ => panic!("an unknown event: {e:?}"),
    }
}

#[test]
fn responses_fields_echoed_and_unstored() {
    for srv in both() {
        let c = client(&srv, "main");
        let mode = if srv.mock { "mock" } else { "real" };
        let input = vec![InputMessage::parts(Role::User, vec![InputText::new("Name a sea.")]).typed()];
        let req = ResponseRequest::new("neuro-1-lite", input)
            .instructions("Be brief.")
            .store(false)
            .max_output_tokens(4)
            .temperature(0.0)
            .top_p(1.0)
            .metadata("topic", "seas")
            .user("u-1");
        let r = c.responses().create(&req).unwrap();
        assert_eq!((r.instructions.as_deref(), r.store, r.max_output_tokens), (Some("Be brief."), Some(false), Some(4)), "{mode}");
        assert_eq!(r.metadata.as_ref().and_then(|m| m.get("topic")).map(String::as_str), Some("seas"), "{mode}");
        let item = &r.output[0];
        assert!(item.r#type == "message" && item.role == "assistant" && item.id.starts_with("msg_"), "{mode}: {item:?}");
        assert!(item.content[0].r#type == "output_text" && item.content[0].annotations.is_empty(), "{mode}: {item:?}");
        assert!(r.usage.output_tokens <= 4 && r.usage.output_tokens_details.reasoning_tokens == 0, "{mode}: {:?}", r.usage);
        match r.status {
            ResponseStatus::Incomplete => assert_eq!(r.incomplete_details.as_ref().unwrap().reason, "max_output_tokens", "{mode}"),
            status => assert!(status == ResponseStatus::Completed && r.incomplete_details.is_none(), "{mode}: {r:?}"),
        }
        assert!(r.error.is_none() && r.neuro.as_ref().map_or(false, |n| n.timesteps > 0), "{mode}: {r:?}");
        match c.responses().retrieve(&r.id) {
            Err(Error::Api { status: 404, code: Some(code), .. }) => assert_eq!(code, "response_not_found", "{mode}"),
            other => panic!("{mode}: want 404 response_not_found, got {other:?}"),
        }
    }
}

#[test]
fn responses_stream_refused_before_it_starts() {
    for srv in both() {
        let c = client(&srv, "main");
        let req = ResponseRequest::new("neuro-1-lite", "Hi").previous_response_id("resp_unknown");
        match c.responses().stream(&req) {
            Err(Error::Api { status: 404, code: Some(code), param: Some(param), .. }) => {
                assert_eq!((code.as_str(), param.as_str()), ("response_not_found", "previous_response_id"))
            }
            Err(other) => panic!("want 404 response_not_found, got {other:?}"),
            Ok(_) => panic!("want 404 response_not_found, got a stream"),
        }
    }
}
