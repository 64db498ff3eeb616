package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/tokenizer"
)

// respRequest is a validated POST /v1/responses body.
type respRequest struct {
	model        string
	input        []tokenizer.Message
	instructions *string
	previous     string
	store        bool
	maxTokens    int
	maxSet       bool
	temperature  float64
	topP         float64
	stream       bool
	activity     bool // the "neuro":{"activity":true} extension, as on chat
	metadata     map[string]string
	user         *string
}

// respFields are the fields a response request may carry; any other,
// unless null, is refused by name, for a client that sends one expects
// what it asks for.
var respFields = map[string]bool{
	"model": true, "input": true, "instructions": true, "previous_response_id": true, "store": true,
	"max_output_tokens": true, "temperature": true, "top_p": true, "stream": true, "metadata": true,
	"user": true, "neuro": true, "text": true, "truncation": true, "parallel_tool_calls": true,
}

const (
	maxMetadataPairs = 16
	maxMetadataKey   = 64
	maxMetadataValue = 512
)

func parseResponseRequest(body []byte, maxTokens int) (*respRequest, *Error) {
	var raw map[string]json.RawMessage
	if e := decodeObject(body, &raw); e != nil {
		return nil, e
	}
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !respFields[k] && !absent(raw[k]) {
			return nil, invalid(k, "unsupported_parameter", "%s is not supported", k)
		}
	}
	p := &respRequest{}
	var e *Error
	if p.model, e = parseString(raw["model"], "model"); e != nil {
		return nil, e
	}
	if p.model == "" {
		return nil, invalid("model", "missing_field", "model is required")
	}
	if p.input, e = parseResponseInput(raw["input"]); e != nil {
		return nil, e
	}
	if !absent(raw["instructions"]) {
		s, e := parseString(raw["instructions"], "instructions")
		if e != nil {
			return nil, e
		}
		p.instructions = &s
	}
	if p.previous, e = parseString(raw["previous_response_id"], "previous_response_id"); e != nil {
		return nil, e
	}
	p.store = true
	if !absent(raw["store"]) {
		if p.store, e = parseBool(raw["store"], "store"); e != nil {
			return nil, e
		}
	}
	mt, set, e := parseInt(raw["max_output_tokens"], "max_output_tokens", 1, int64(maxTokens))
	if e != nil {
		return nil, e
	}
	p.maxTokens, p.maxSet = int(mt), set
	if p.temperature, e = parseNumber(raw["temperature"], "temperature", 0, runtime.MaxTemperature, 1); e != nil {
		return nil, e
	}
	if p.topP, e = parseNumber(raw["top_p"], "top_p", 0, runtime.MaxTopP, 1); e != nil {
		return nil, e
	}
	if p.stream, e = parseBool(raw["stream"], "stream"); e != nil {
		return nil, e
	}
	if p.activity, e = parseNeuroActivity(raw["neuro"], p.stream); e != nil {
		return nil, e
	}
	if p.metadata, e = parseMetadata(raw["metadata"]); e != nil {
		return nil, e
	}
	if !absent(raw["user"]) {
		u, e := parseString(raw["user"], "user")
		if e != nil {
			return nil, e
		}
		p.user = &u
	}
	if e := checkTextOptions(raw["text"], raw["truncation"], raw["parallel_tool_calls"]); e != nil {
		return nil, e
	}
	return p, nil
}

// checkTextOptions accepts the options that ask for what the server does
// anyway: plain text, no truncation, no tools.
func checkTextOptions(text, truncation, parallel json.RawMessage) *Error {
	if !absent(text) {
		var t struct {
			Format *struct {
				Type string `json:"type"`
			} `json:"format"`
			Verbosity json.RawMessage `json:"verbosity"`
		}
		if err := json.Unmarshal(text, &t); err != nil {
			return invalid("text", "invalid_type", "text must be an object")
		}
		if t.Format != nil && t.Format.Type != "text" {
			return invalid("text.format", "unsupported_parameter", "text.format %q is not supported; only plain text is", t.Format.Type)
		}
		if !absent(t.Verbosity) {
			return invalid("text.verbosity", "unsupported_parameter", "text.verbosity is not supported")
		}
	}
	if s, e := parseString(truncation, "truncation"); e != nil {
		return e
	} else if s != "" && s != "disabled" {
		return invalid("truncation", "unsupported_parameter", "truncation %q is not supported; a conversation longer than the context is refused", s)
	}
	if _, e := parseBool(parallel, "parallel_tool_calls"); e != nil {
		return e
	}
	return nil
}

// parseResponseInput accepts a string (one user message) or a list of
// message items, whose content is a string or a list of text parts.
func parseResponseInput(raw json.RawMessage) ([]tokenizer.Message, *Error) {
	if absent(raw) {
		return nil, invalid("input", "missing_field", "input is required")
	}
	if raw[0] == '"' {
		s, e := parseString(raw, "input")
		if e != nil {
			return nil, e
		}
		return []tokenizer.Message{{Role: "user", Content: s}}, nil
	}
	if raw[0] != '[' {
		return nil, invalid("input", "invalid_type", "input must be a string or an array of messages, not %s", kindOf(raw))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalid("input", "invalid_type", "input must be an array of message objects")
	}
	if len(items) == 0 {
		return nil, invalid("input", "invalid_value", "input must hold at least one message")
	}
	out := make([]tokenizer.Message, len(items))
	for i, it := range items {
		p := "input[" + strconv.Itoa(i) + "]"
		if len(it) == 0 || it[0] != '{' {
			return nil, invalid(p, "invalid_type", "%s must be an object, not %s", p, kindOf(it))
		}
		var m struct {
			Type    json.RawMessage `json:"type"`
			Role    json.RawMessage `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(it, &m); err != nil {
			return nil, invalid(p, "invalid_type", "%s must be an object with role and content", p)
		}
		typ, e := parseString(m.Type, p+".type")
		if e != nil {
			return nil, e
		}
		if typ != "" && typ != "message" {
			return nil, invalid(p+".type", "unsupported_parameter", "%s.type %q is not supported; only messages are", p, typ)
		}
		role, e := parseString(m.Role, p+".role")
		if e != nil {
			return nil, e
		}
		if !validRoles[role] {
			return nil, invalid(p+".role", "invalid_value", "%s.role %q is not one of system, developer, user, assistant", p, role)
		}
		content, e := parseInputContent(m.Content, p+".content")
		if e != nil {
			return nil, e
		}
		out[i] = tokenizer.Message{Role: role, Content: content}
	}
	return out, nil
}

func parseInputContent(raw json.RawMessage, param string) (string, *Error) {
	if absent(raw) {
		return "", invalid(param, "missing_field", "%s is required", param)
	}
	return joinText(raw, param, responseParts)
}

func parseMetadata(raw json.RawMessage) (map[string]string, *Error) {
	if absent(raw) {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, invalid("metadata", "invalid_type", "metadata must be an object of strings, not %s", kindOf(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, invalid("metadata", "invalid_type", "metadata must be an object of strings")
	}
	if len(m) > maxMetadataPairs {
		return nil, invalid("metadata", "invalid_value", "metadata has %d pairs, at most %d", len(m), maxMetadataPairs)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, e := parseString(v, "metadata."+k)
		if e != nil {
			return nil, e
		}
		if len(k) > maxMetadataKey || len(s) > maxMetadataValue {
			return nil, invalid("metadata", "invalid_value", "metadata keys are at most %d characters and values %d", maxMetadataKey, maxMetadataValue)
		}
		out[k] = s
	}
	return out, nil
}

func responseNotFound(param, id string) *Error {
	e := notFound("response_not_found", "no response %q", id)
	e.Param = param
	return e
}

// resolveResponseModel finds what a response's model names: a model or
// alias, or else a deployment.
func (s *Server) resolveResponseModel(model, principal string) (*runtime.Model, string, error) {
	m, err := s.resolveGenModel(model, "", principal)
	if err == nil || !errors.Is(err, runtime.ErrModelNotFound) {
		return m, "", err
	}
	if dm, derr := s.resolveGenModel("", model, principal); derr == nil {
		return dm, model, nil
	}
	return nil, "", err
}

// respTurn is one turn being answered.
type respTurn struct {
	p       *respRequest
	id      string
	created int64
	model   string
	history []tokenizer.Message // the conversation before the answer, without instructions
	prev    *runtime.StoredResponse
}

func (s *Server) handleCreateResponse(w http.ResponseWriter, r *http.Request) {
	ri := info(r)
	body, e := s.readBody(w, r, s.opts.MaxBodyBytes)
	if e != nil {
		s.fail(w, r, "", e)
		return
	}
	p, e := parseResponseRequest(body, s.opts.MaxTokens)
	if e != nil {
		s.fail(w, r, "", e)
		return
	}
	m, deployment, err := s.resolveResponseModel(p.model, ri.principal)
	if err != nil {
		s.fail(w, r, p.model, s.internalError(r, err))
		return
	}
	t := &respTurn{p: p, id: runtime.NewResponseID("resp_"), created: s.opts.Now().Unix(), model: m.ID}
	if p.previous != "" {
		prev, err := s.be.Response(r.Context(), p.previous, ri.principal)
		if err != nil {
			s.fail(w, r, p.model, s.responseError(r, err, "previous_response_id", p.previous))
			return
		}
		if prev.Model != m.ID {
			s.fail(w, r, p.model, invalid("model", "invalid_value",
				"response %q continues a conversation with model %q; it cannot continue with %q", p.previous, prev.Model, m.ID))
			return
		}
		t.prev, t.history = prev, slices.Clip(prev.Messages)
	}
	t.history = append(t.history, p.input...)
	if p.store {
		if err := s.be.CheckResponseQuota(ri.principal); err != nil {
			s.fail(w, r, p.model, s.internalError(r, err))
			return
		}
	}
	msgs := t.history
	if p.instructions != nil && *p.instructions != "" {
		msgs = append([]tokenizer.Message{{Role: "system", Content: *p.instructions}}, t.history...)
	}
	req := &runtime.Request{
		Model: m.ID, Deployment: deployment, Messages: msgs,
		Sampling:  runtime.Sampling{Temperature: p.temperature, TopP: p.topP},
		MaxTokens: s.opts.MaxTokens, MaxPromptTokens: s.opts.MaxPromptTokens,
		SaveState: p.store, Principal: ri.principal, Endpoint: ri.endpoint, Activity: p.activity,
	}
	if p.maxSet {
		req.MaxTokens = p.maxTokens
	}
	if t.prev != nil {
		req.Resume = t.prev.State
	}
	ri.recorded = true // the backend records generations
	if p.stream {
		s.streamResponse(w, r, t, req)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	res, err := s.be.Generate(ctx, req, nil)
	if err != nil {
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			return
		}
		writeError(w, s.genError(r, err, true))
		return
	}
	s.observe(res)
	obj := t.response(res)
	if e := s.storeTurn(r, t, res, obj); e != nil {
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, obj)
}

// responseError maps a failed lookup of a stored response.
func (s *Server) responseError(r *http.Request, err error, param, id string) *Error {
	if errors.Is(err, runtime.ErrResponseNotFound) {
		return responseNotFound(param, id)
	}
	return s.internalError(r, err)
}

// response builds the response object of a finished turn.
func (t *respTurn) response(res *runtime.Result) *wire.Response {
	obj := t.object("completed")
	text := res.Choices[0].Text
	obj.Output = []wire.OutputMessage{{Type: "message", ID: msgID(t.id), Status: "completed", Role: "assistant",
		Content: []wire.OutputText{{Type: "output_text", Text: text, Annotations: []json.RawMessage{}}}}}
	obj.OutputText = text
	if res.Choices[0].FinishReason == runtime.FinishLength {
		obj.Status = "incomplete"
		obj.IncompleteDetails = &wire.IncompleteDetails{Reason: "max_output_tokens"}
		obj.Output[0].Status = "incomplete"
	}
	u := res.Usage
	obj.Usage = &wire.ResponseUsage{InputTokens: u.PromptTokens, InputTokensDetails: wire.InputTokensDetails{CachedTokens: u.CachedTokens},
		OutputTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
	obj.Neuro = &wire.NeuromorphicUsage{Timesteps: res.Stats.Timesteps, Spikes: res.Stats.Spikes, SynapticOps: res.Stats.SynapticOps, EnergyUJ: res.Stats.EnergyMicrojoule}
	return obj
}

// object is the response object before its output.
func (t *respTurn) object(status string) *wire.Response {
	p := t.p
	obj := &wire.Response{ID: t.id, Object: "response", CreatedAt: t.created, Status: status, Model: t.model,
		Instructions: p.instructions, Output: []wire.OutputMessage{}, Store: p.store, Temperature: p.temperature, TopP: p.topP,
		Metadata: p.metadata, User: p.user, Tools: []json.RawMessage{}, ToolChoice: "auto", ParallelToolCalls: true, Truncation: "disabled"}
	obj.Text.Format.Type = "text"
	if obj.Metadata == nil {
		obj.Metadata = map[string]string{}
	}
	if p.previous != "" {
		obj.PreviousResponseID = &p.previous
	}
	if p.maxSet {
		obj.MaxOutputTokens = &p.maxTokens
	}
	return obj
}

// msgID is the id of a response's output message, derived from the
// response's.
func msgID(respID string) string { return "msg_" + strings.TrimPrefix(respID, "resp_") }

// storeTurn keeps a stored turn: its object, its conversation with the
// answer, and the model's state after it.
func (s *Server) storeTurn(r *http.Request, t *respTurn, res *runtime.Result, obj *wire.Response) *Error {
	if !t.p.store {
		return nil
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return s.internalError(r, err)
	}
	msgs := append(slices.Clip(t.history), tokenizer.Message{Role: "assistant", Content: runtime.ValidText(res.Choices[0].Text)})
	rec := &runtime.StoredResponse{ID: t.id, Owner: info(r).principal, Created: s.opts.Now(), Model: t.model, Deployment: res.Deployment,
		Messages: msgs, Object: b, State: res.State}
	if err := s.be.StoreResponse(r.Context(), rec); err != nil {
		return s.internalError(r, err)
	}
	return nil
}

func (s *Server) handleGetResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("response_id")
	rec, err := s.be.Response(r.Context(), id, info(r).principal)
	if err != nil {
		s.fail(w, r, "", s.responseError(r, err, "response_id", id))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(rec.Object)
	w.Write([]byte{'\n'})
}

func (s *Server) handleDeleteResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("response_id")
	if err := s.be.DeleteResponse(r.Context(), id, info(r).principal); err != nil {
		s.fail(w, r, "", s.responseError(r, err, "response_id", id))
		return
	}
	writeJSON(w, http.StatusOK, wire.ResponseDeleted{ID: id, Object: "response", Deleted: true})
}

// respStream writes a streamed response's events.
type respStream struct {
	st  *sse
	t   *respTurn
	seq int
	buf []byte
}

// send writes one event: `event: <type>` and its data.
func (rs *respStream) send(ev *wire.ResponseEvent) {
	ev.SequenceNumber = rs.seq
	rs.seq++
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	rs.buf = append(rs.buf[:0], "event: "...)
	rs.buf = append(rs.buf, ev.Type...)
	rs.buf = append(rs.buf, "\ndata: "...)
	rs.buf = append(rs.buf, b...)
	rs.buf = append(rs.buf, "\n\n"...)
	rs.st.write(rs.buf, true)
}

func intp(i int) *int { return &i }

// start sends the headers and the events that open the answer.
func (rs *respStream) start() {
	if rs.st.started {
		return
	}
	rs.st.started = true
	h := rs.st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	rs.st.w.WriteHeader(http.StatusOK)
	obj := rs.t.object("in_progress")
	rs.send(&wire.ResponseEvent{Type: "response.created", Response: obj})
	rs.send(&wire.ResponseEvent{Type: "response.in_progress", Response: obj})
	item := &wire.OutputMessage{Type: "message", ID: msgID(rs.t.id), Status: "in_progress", Role: "assistant", Content: []wire.OutputText{}}
	rs.send(&wire.ResponseEvent{Type: "response.output_item.added", OutputIndex: intp(0), Item: item})
	rs.send(&wire.ResponseEvent{Type: "response.content_part.added", ItemID: item.ID, OutputIndex: intp(0), ContentIndex: intp(0),
		Part: &wire.OutputText{Type: "output_text", Text: "", Annotations: []json.RawMessage{}}})
}

// delta sends a piece of the answer's text, with the spiking activity
// behind it when the request asked for it (an empty piece then too, so
// that no step's activity is lost).
func (rs *respStream) delta(ev runtime.Event) error {
	rs.start()
	activity := rs.t.p.activity && ev.Activity != nil
	if ev.Text != "" || activity {
		b := append(rs.buf[:0], "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":"...)
		b = strconv.AppendInt(b, int64(rs.seq), 10)
		rs.seq++
		b = append(b, `,"item_id":`...)
		b = wire.AppendString(b, msgID(rs.t.id))
		b = append(b, `,"output_index":0,"content_index":0,"delta":`...)
		b = wire.AppendString(b, ev.Text)
		b = append(b, `,"logprobs":[]`...)
		if activity {
			b = appendActivity(b, ev.Activity)
		}
		b = append(b, "}\n\n"...)
		rs.buf = b
		rs.st.write(b, true)
	}
	return rs.st.err
}

// finish sends the events that close the answer, then the whole
// response.
func (rs *respStream) finish(obj *wire.Response) {
	rs.start()
	text, item := obj.OutputText, obj.Output[0]
	rs.send(&wire.ResponseEvent{Type: "response.output_text.done", ItemID: item.ID, OutputIndex: intp(0), ContentIndex: intp(0), Text: &text})
	rs.send(&wire.ResponseEvent{Type: "response.content_part.done", ItemID: item.ID, OutputIndex: intp(0), ContentIndex: intp(0), Part: &item.Content[0]})
	rs.send(&wire.ResponseEvent{Type: "response.output_item.done", OutputIndex: intp(0), Item: &item})
	typ := "response.completed"
	if obj.Status == "incomplete" {
		typ = "response.incomplete"
	}
	rs.send(&wire.ResponseEvent{Type: typ, Response: obj})
}

// fail sends an error event, then response.failed.
func (rs *respStream) fail(e *Error) {
	rs.start()
	ev := &wire.ResponseEvent{Type: "error", Message: e.Message}
	if e.Code != "" {
		ev.Code = &e.Code
	}
	if e.Param != "" {
		ev.Param = &e.Param
	}
	rs.send(ev)
	obj := rs.t.object("failed")
	obj.Error = &wire.ResponseError{Code: e.Code, Message: e.Message}
	rs.send(&wire.ResponseEvent{Type: "response.failed", Response: obj})
}

func (s *Server) streamResponse(w http.ResponseWriter, r *http.Request, t *respTurn, req *runtime.Request) {
	rs := &respStream{st: &sse{w: w, rc: http.NewResponseController(w), timeout: s.opts.StreamWriteTimeout, now: s.opts.Now}, t: t}
	ctx, cancel := s.streamContext(r)
	defer cancel()
	res, err := s.be.Generate(ctx, req, rs.delta)
	if res != nil {
		s.observe(res)
	}
	if err != nil {
		switch {
		case rs.st.err != nil || r.Context().Err() != nil:
		case !rs.st.started:
			writeError(w, s.genError(r, err, true))
		default:
			rs.fail(s.genError(r, err, true))
		}
		return
	}
	obj := t.response(res)
	if e := s.storeTurn(r, t, res, obj); e != nil {
		rs.fail(e)
		return
	}
	rs.finish(obj)
}
