package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/httpapi/prom"
	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

func decodeResponse(t *testing.T, w interface{ Result() *http.Response }, body []byte) *wire.Response {
	t.Helper()
	var r wire.Response
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("response %s: %v", body, err)
	}
	return &r
}

func createResponse(t *testing.T, s http.Handler, key string, body map[string]any) *wire.Response {
	t.Helper()
	w := do(s, "POST", "/v1/responses", key, body)
	if w.Code != http.StatusOK {
		t.Fatalf("POST /v1/responses: %d %s", w.Code, w.Body)
	}
	return decodeResponse(t, w, w.Body.Bytes())
}

// TestResponsesContinue: a conversation through previous_response_id
// gives, at temperature 0, the answers of the whole conversation sent to
// chat completions, and reads only each turn's new input; a turn cut at
// max_output_tokens is incomplete and still continues exactly.
func TestResponsesContinue(t *testing.T) {
	s := newTestServer(t, newTestRuntime(t, &runtime.Options{PrefixCacheBytes: -1}, 4), nil)
	turns := []struct {
		input string
		max   int
	}{{"Tell me about the sea.", 12}, {"And the mountains?", 4}, {"Which first?", 10}}
	var msgs []map[string]string
	prev := ""
	for i, turn := range turns {
		msgs = append(msgs, map[string]string{"role": "user", "content": turn.input})
		body := map[string]any{"model": "neuro-1-lite", "input": turn.input, "temperature": 0, "max_output_tokens": turn.max, "instructions": "Be brief."}
		if prev != "" {
			body["previous_response_id"] = prev
		}
		r := createResponse(t, s, keyAlice, body)
		whole := do(s, "POST", "/v1/chat/completions", keyAlice, map[string]any{"model": "neuro-1-lite", "temperature": 0, "max_tokens": turn.max,
			"messages": append([]map[string]string{{"role": "system", "content": "Be brief."}}, msgs...)})
		var chat wire.ChatCompletion
		json.Unmarshal(whole.Body.Bytes(), &chat)
		if whole.Code != 200 || chat.Choices[0].Message.Content != r.OutputText {
			t.Fatalf("turn %d: response %q, chat of the whole conversation %q (%d)", i, r.OutputText, chat.Choices[0].Message.Content, whole.Code)
		}
		if r.Object != "response" || !strings.HasPrefix(r.ID, "resp_") || len(r.Output) != 1 || r.Output[0].Content[0].Text != r.OutputText || !r.Store {
			t.Fatalf("turn %d: response object %+v", i, r)
		}
		if r.Usage.InputTokens != chat.Usage.PromptTokens || r.Usage.OutputTokens != chat.Usage.CompletionTokens {
			t.Fatalf("turn %d: usage %+v, chat's %+v", i, r.Usage, chat.Usage)
		}
		if i > 0 && (r.Usage.InputTokensDetails.CachedTokens == 0 || r.Usage.InputTokensDetails.CachedTokens >= r.Usage.InputTokens) {
			t.Fatalf("turn %d: %d of %d input tokens resumed", i, r.Usage.InputTokensDetails.CachedTokens, r.Usage.InputTokens)
		}
		if chat.Choices[0].FinishReason == "length" && (r.Status != "incomplete" || r.IncompleteDetails == nil || r.IncompleteDetails.Reason != "max_output_tokens") {
			t.Fatalf("turn %d: cut at max_output_tokens, status %q %+v", i, r.Status, r.IncompleteDetails)
		}
		msgs = append(msgs, map[string]string{"role": "assistant", "content": r.OutputText})
		prev = r.ID
	}

	// Read back and delete: the owner only.
	got := do(s, "GET", "/v1/responses/"+prev, keyAlice, nil)
	if got.Code != 200 || decodeResponse(t, got, got.Body.Bytes()).ID != prev {
		t.Fatalf("GET: %d %s", got.Code, got.Body)
	}
	checkError(t, do(s, "GET", "/v1/responses/"+prev, keyBob, nil), 404, "not_found_error", "response_not_found", "response_id")
	checkError(t, do(s, "DELETE", "/v1/responses/"+prev, keyBob, nil), 404, "not_found_error", "response_not_found", "response_id")
	checkError(t, do(s, "POST", "/v1/responses", keyBob, map[string]any{"model": "neuro-1-lite", "input": "hi", "previous_response_id": prev}),
		404, "not_found_error", "response_not_found", "previous_response_id")
	del := do(s, "DELETE", "/v1/responses/"+prev, keyAlice, nil)
	if del.Code != 200 || !strings.Contains(del.Body.String(), `"deleted":true`) {
		t.Fatalf("DELETE: %d %s", del.Code, del.Body)
	}
	checkError(t, do(s, "GET", "/v1/responses/"+prev, keyAlice, nil), 404, "not_found_error", "response_not_found", "response_id")
}

// TestResponsesRefuse: the request errors of the Responses API.
func TestResponsesRefuse(t *testing.T) {
	s := newTestServer(t, newMockRuntime(t), nil)
	first := createResponse(t, s, keyAlice, map[string]any{"model": "neuro-1-lite", "input": "hi", "max_output_tokens": 3})
	cases := []struct {
		name      string
		body      map[string]any
		status    int
		code, prm string
		errorType string
	}{
		{"tools", map[string]any{"model": "neuro-1-lite", "input": "hi", "tools": []any{map[string]any{"type": "function"}}}, 400, "unsupported_parameter", "tools", "invalid_request_error"},
		{"reasoning", map[string]any{"model": "neuro-1-lite", "input": "hi", "reasoning": map[string]any{"effort": "low"}}, 400, "unsupported_parameter", "reasoning", "invalid_request_error"},
		{"json format", map[string]any{"model": "neuro-1-lite", "input": "hi", "text": map[string]any{"format": map[string]any{"type": "json_object"}}}, 400, "unsupported_parameter", "text.format", "invalid_request_error"},
		{"no input", map[string]any{"model": "neuro-1-lite"}, 400, "missing_field", "input", "invalid_request_error"},
		{"image part", map[string]any{"model": "neuro-1-lite", "input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_image"}}}}}, 400, "unsupported_parameter", "input[0].content[0].type", "invalid_request_error"},
		{"unknown previous", map[string]any{"model": "neuro-1-lite", "input": "hi", "previous_response_id": "resp_nope"}, 404, "response_not_found", "previous_response_id", "not_found_error"},
		{"another model", map[string]any{"model": "neuro-1-heavy", "input": "hi", "previous_response_id": first.ID}, 400, "invalid_value", "model", "invalid_request_error"},
		{"metadata not a string", map[string]any{"model": "neuro-1-lite", "input": "hi", "metadata": map[string]any{"k": 1}}, 400, "invalid_type", "metadata.k", "invalid_request_error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkError(t, do(s, "POST", "/v1/responses", keyAlice, c.body), c.status, c.errorType, c.code, c.prm)
		})
	}
	// null is ignored, as OpenAI's clients send it.
	createResponse(t, s, keyAlice, map[string]any{"model": "neuro-1-lite", "input": "hi", "tools": nil, "max_output_tokens": 2})
	// store:false leaves nothing to read or continue.
	r := createResponse(t, s, keyAlice, map[string]any{"model": "neuro-1-lite", "input": "hi", "store": false, "max_output_tokens": 2})
	if r.Store {
		t.Fatal("store false answered store true")
	}
	checkError(t, do(s, "GET", "/v1/responses/"+r.ID, keyAlice, nil), 404, "not_found_error", "response_not_found", "response_id")
	checkError(t, do(s, "POST", "/v1/responses", keyAlice, map[string]any{"model": "neuro-1-lite", "input": "hi", "previous_response_id": r.ID}),
		404, "not_found_error", "response_not_found", "previous_response_id")
}

// TestResponsesQuota: stored responses past a key's quota are refused
// with 429 before anything runs; a deletion makes room. (The TTL is the
// runtime's, tested there.)
func TestResponsesQuota(t *testing.T) {
	rt := newMockRuntime(t)
	rt.SetQuota(runtime.Quota{Responses: 2})
	s := newTestServer(t, rt, nil)
	body := map[string]any{"model": "neuro-1-lite", "input": "hi", "max_output_tokens": 2}
	a := createResponse(t, s, keyAlice, body)
	createResponse(t, s, keyAlice, body)
	checkError(t, do(s, "POST", "/v1/responses", keyAlice, body), 429, "rate_limit_error", "insufficient_quota", "")
	body["store"] = false
	createResponse(t, s, keyAlice, body) // not stored: no quota needed
	createResponse(t, s, keyBob, map[string]any{"model": "neuro-1-lite", "input": "hi", "max_output_tokens": 2})
	if w := do(s, "DELETE", "/v1/responses/"+a.ID, keyAlice, nil); w.Code != 200 {
		t.Fatalf("delete: %d", w.Code)
	}
	delete(body, "store")
	createResponse(t, s, keyAlice, body)
}

// TestResponsesStream: a streamed response sends the Responses API's
// events in order, with sequence numbers, the deltas adding up to the
// text, and the stored response equal to the one completed.
func TestResponsesStream(t *testing.T) {
	s := newTestServer(t, newTestRuntime(t, nil, 4), nil)
	w := do(s, "POST", "/v1/responses", keyAlice, map[string]any{"model": "neuro-1-lite", "input": "Tell me a story.", "max_output_tokens": 8, "stream": true, "temperature": 0})
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", w.Code, w.Header())
	}
	var types []string
	var text string
	var final *wire.Response
	blocks := strings.Split(strings.TrimSpace(w.Body.String()), "\n\n")
	for i, blk := range blocks {
		lines := strings.Split(blk, "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			t.Fatalf("event %d: %q", i, blk)
		}
		var ev wire.ResponseEvent
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "data: ")), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != strings.TrimPrefix(lines[0], "event: ") || ev.SequenceNumber != i {
			t.Fatalf("event %d: type %q under %q, sequence %d", i, ev.Type, lines[0], ev.SequenceNumber)
		}
		types = append(types, ev.Type)
		if ev.Delta != nil {
			text += *ev.Delta
		}
		if ev.Type == "response.completed" || ev.Type == "response.incomplete" {
			final = ev.Response
		}
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}
	if len(types) < 8 || strings.Join(types[:4], ",") != strings.Join(want, ",") || types[len(types)-4] != "response.output_text.done" {
		t.Fatalf("events %v", types)
	}
	if final == nil || final.OutputText != text || text == "" {
		t.Fatalf("final %+v, deltas %q", final, text)
	}
	if strings.Contains(w.Body.String(), "[DONE]") {
		t.Fatal("a Responses stream has no [DONE]")
	}
	stored := do(s, "GET", "/v1/responses/"+final.ID, keyAlice, nil)
	if got := decodeResponse(t, stored, stored.Body.Bytes()); got.OutputText != text || got.Status != final.Status {
		t.Fatalf("stored %+v", got)
	}
}

// TestChatCachedTokens: chat completions report the prompt tokens the
// prefix-state cache resumed, in usage.prompt_tokens_details, and so do
// the caller's telemetry and /metrics.
func TestChatCachedTokens(t *testing.T) {
	rt := newTestRuntime(t, nil, 4)
	metrics := prom.New()
	metrics.WatchStates(rt)
	s := newTestServer(t, rt, &Options{Metrics: metrics})
	msgs := []map[string]string{{"role": "user", "content": "Tell me about the sea."}}
	w := do(s, "POST", "/v1/chat/completions", keyAlice, map[string]any{"model": "neuro-1-lite", "messages": msgs, "max_tokens": 6, "temperature": 0})
	var first wire.ChatCompletion
	json.Unmarshal(w.Body.Bytes(), &first)
	if !strings.Contains(w.Body.String(), `"prompt_tokens_details":{"cached_tokens":0}`) {
		t.Fatalf("first turn: %s", w.Body)
	}
	msgs = append(msgs, map[string]string{"role": "assistant", "content": first.Choices[0].Message.Content}, map[string]string{"role": "user", "content": "More."})
	w = do(s, "POST", "/v1/chat/completions", keyAlice, map[string]any{"model": "neuro-1-lite", "messages": msgs, "max_tokens": 6, "temperature": 0})
	var second wire.ChatCompletion
	json.Unmarshal(w.Body.Bytes(), &second)
	if c := second.Usage.PromptTokensDetails.CachedTokens; c == 0 || c >= second.Usage.PromptTokens {
		t.Fatalf("second turn resumed %d of %d prompt tokens", c, second.Usage.PromptTokens)
	}
	// Bob's identical request resumes nothing of Alice's.
	w = do(s, "POST", "/v1/chat/completions", keyBob, map[string]any{"model": "neuro-1-lite", "messages": msgs, "max_tokens": 6, "temperature": 0})
	var bob wire.ChatCompletion
	json.Unmarshal(w.Body.Bytes(), &bob)
	if bob.Usage.PromptTokensDetails.CachedTokens != 0 || bob.Choices[0].Message.Content != second.Choices[0].Message.Content {
		t.Fatalf("another key: %d cached tokens, answer %q vs %q", bob.Usage.PromptTokensDetails.CachedTokens, bob.Choices[0].Message.Content, second.Choices[0].Message.Content)
	}
	var tel wire.Telemetry
	json.Unmarshal(do(s, "GET", "/v1/telemetry", keyAlice, nil).Body.Bytes(), &tel)
	if tel.Tokens.Cached != second.Usage.PromptTokensDetails.CachedTokens || tel.Tokens.CacheHits != 1 {
		t.Fatalf("telemetry tokens %+v", tel.Tokens)
	}
	m := do(s, "GET", "/metrics", "", nil).Body.String()
	for _, want := range []string{`neuro_prefix_cache_lookups_total{result="hit"} 1`, `neuro_prefix_cache_resumed_tokens_total `,
		`neuro_prefix_cache_bytes `, `neuro_stored_responses 0`, `neuro_tokens_total{kind="cached",model="neuro-1-lite"} `} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestResponsesSurviveRestart: with a data directory, a conversation
// stored before a restart continues after it, from its stored state.
func TestResponsesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	rt := newTestRuntime(t, &runtime.Options{DataDir: dir, PrefixCacheBytes: -1}, 2)
	first := createResponse(t, newTestServer(t, rt, nil), keyAlice, map[string]any{"model": "neuro-1-lite", "input": "Tell me about the sea.", "max_output_tokens": 8, "temperature": 0})
	rt.Close()

	again := newTestServer(t, newTestRuntime(t, &runtime.Options{DataDir: dir, PrefixCacheBytes: -1}, 2), nil)
	got := do(again, "GET", "/v1/responses/"+first.ID, keyAlice, nil)
	if got.Code != 200 || decodeResponse(t, got, got.Body.Bytes()).OutputText != first.OutputText {
		t.Fatalf("after a restart: %d %s", got.Code, got.Body)
	}
	next := createResponse(t, again, keyAlice, map[string]any{"model": "neuro-1-lite", "input": "And the mountains?", "max_output_tokens": 8,
		"temperature": 0, "previous_response_id": first.ID})
	if next.Usage.InputTokensDetails.CachedTokens == 0 {
		t.Fatalf("the continued turn resumed nothing: %+v", next.Usage)
	}
}
