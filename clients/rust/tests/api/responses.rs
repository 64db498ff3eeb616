//! `/v1/responses` against the real servers, in mock and real mode: a
//! stored conversation made, read back, continued, streamed and deleted.

use neuro_client::{ApiErrorKind, Error, ResponseRequest, ResponseStatus, ResponseStreamEvent, Result};

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
        assert!(matches!(events[0], ResponseStreamEvent::Created { .. }), "{mode}: {:?}", events[0]);
        assert!(matches!(events[1], ResponseStreamEvent::InProgress { .. }), "{mode}: {:?}", events[1]);
        let last = events.last().unwrap();
        assert!(matches!(last, ResponseStreamEvent::Completed { .. } | ResponseStreamEvent::Incomplete { .. }), "{mode}: {last:?}");
        let third = last.response().unwrap();
        let text: String = events.iter().map(|e| e.delta()).collect();
        assert_eq!(text, third.output_text, "{mode}");
        assert_eq!(third.previous_response_id.as_deref(), Some(second.id.as_str()), "{mode}");

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
    }
}
