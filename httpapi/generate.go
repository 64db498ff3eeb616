package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/neuro-go/neuro/runtime"
)

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) { s.serveGen(w, r, true, "") }

func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	s.serveGen(w, r, false, "")
}

func (s *Server) handleDeploymentChat(w http.ResponseWriter, r *http.Request) {
	s.serveGen(w, r, true, r.PathValue("id"))
}

// fail writes e and records the failed request in the caller's telemetry.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, model string, e *Error) {
	ri := info(r)
	writeError(w, e)
	// Only a model the caller may use names a by_model entry: a request
	// for gpt-4 is an error of no model.
	if m, err := s.lookupModel(model, ri.principal); err == nil {
		model = m.ID
	} else {
		model = ""
	}
	if ri.principal != "" && !ri.recorded {
		ri.recorded = true
		s.be.Telemetry().RecordError(ri.principal, ri.endpoint, model, s.opts.Now().Sub(ri.start))
	}
}

func (s *Server) serveGen(w http.ResponseWriter, r *http.Request, chat bool, deployment string) {
	ri := info(r)
	body, e := s.readBody(w, r, s.opts.MaxBodyBytes)
	if e != nil {
		s.fail(w, r, "", e)
		return
	}
	g, e := parseGen(body, chat, s.opts.MaxTokens)
	if e != nil {
		s.fail(w, r, "", e)
		return
	}
	if g.model == "" && deployment == "" {
		s.fail(w, r, "", invalid("model", "missing_field", "model is required"))
		return
	}
	if !chat && g.stream && s.opts.Mock {
		s.fail(w, r, g.model, invalid("stream", "stream_not_supported", "streaming text completions is not supported in mock mode"))
		return
	}
	m, err := s.resolveGenModel(g.model, deployment, ri.principal)
	if err != nil {
		s.fail(w, r, g.model, s.genError(r, err, chat))
		return
	}
	model := m.ID
	req := &runtime.Request{
		Model: model, Deployment: deployment, Messages: g.messages,
		Sampling: runtime.Sampling{Temperature: g.temperature, TopP: g.topP, PresencePenalty: g.presence,
			FrequencyPenalty: g.frequency, LogitBias: g.logitBias, Seed: g.seed},
		MaxTokens: g.maxTokens, EchoOnly: g.maxSet && g.maxTokens == 0, Stop: g.stop, N: g.n, MaxPromptTokens: s.opts.MaxPromptTokens,
		Logprobs: g.logprobs, TopLogprobs: g.topLogprobs, Echo: g.echo, Activity: g.activity,
		Principal: ri.principal, Endpoint: ri.endpoint,
	}
	if !g.maxSet {
		req.MaxTokens = s.opts.MaxTokens
	}
	// Several prompts are one request: the backend steps their sequences
	// together.
	switch {
	case chat:
	case g.promptTokens != nil:
		req.PromptTokens = g.promptTokens
		// An echo shows the prompts' text.
		g.prompts = make([]string, len(g.promptTokens))
		for i, ids := range g.promptTokens {
			g.prompts[i] = m.Tokenizer.Decode(ids)
		}
	case len(g.prompts) == 1:
		req.Prompt = g.prompts[0]
	default:
		req.Prompts = g.prompts
	}
	ri.recorded = true // the backend records generations
	if g.stream {
		s.stream(w, r, g, m, req)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	res, err := s.be.Generate(ctx, req, nil)
	if err != nil {
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			return // the client has gone; nobody reads an answer
		}
		writeError(w, s.genError(r, err, chat))
		return
	}
	s.observe(res)
	if chat {
		writeJSON(w, http.StatusOK, chatResponse(newID("chatcmpl-"), s.opts.Now().Unix(), model, g, res))
	} else {
		writeJSON(w, http.StatusOK, completionResponse(newID("cmpl-"), s.opts.Now().Unix(), model, g, res, m.Tokenizer))
	}
}

// genError maps a generation error, naming the prompt field of the
// endpoint for a prompt that is too long.
func (s *Server) genError(r *http.Request, err error, chat bool) *Error {
	e := s.internalError(r, err)
	if e.Code == "context_length_exceeded" && !chat {
		c := *e
		c.Param = "prompt"
		return &c
	}
	return e
}

// resolveGenModel returns the model that will answer, or the error the
// backend would give. A network another caller compiled is not found.
func (s *Server) resolveGenModel(model, deployment, principal string) (*runtime.Model, error) {
	if deployment == "" {
		m, err := s.lookupModel(model, principal)
		if err != nil {
			return nil, err
		}
		if !m.IsLanguageModel() {
			return nil, notLanguageModel(m.ID)
		}
		return m, nil
	}
	d, err := s.lookupDeployment(deployment, principal)
	if err != nil {
		return nil, err
	}
	if !visible(d.Model, principal) {
		return nil, fmt.Errorf("%w: %q", runtime.ErrDeploymentNotFound, deployment)
	}
	if model != "" {
		m, err := s.lookupModel(model, principal)
		if err != nil {
			return nil, err
		}
		if m.ID != d.Model.ID {
			return nil, &runtime.ParamError{Param: "model", Msg: "deployment " + deployment + " serves " + d.Model.ID + ", not " + model}
		}
	}
	if !d.Model.IsLanguageModel() {
		return nil, notLanguageModel(d.Model.ID)
	}
	return d.Model, nil
}

func notLanguageModel(id string) error {
	return fmt.Errorf("%w: %s is a compiled network", runtime.ErrNotLanguageModel, id)
}

// observe counts a finished generation in the metrics.
func (s *Server) observe(res *runtime.Result) {
	if s.opts.Metrics == nil || res == nil {
		return
	}
	// /metrics answers anyone: a language model a caller compiled is
	// counted under one label, as runs of networks are, neither naming
	// it nor adding a series per network.
	if m, err := s.be.Model(res.Model); err != nil || m.Network != nil {
		public := *res
		public.Model = MetricsNetworkLabel
		res = &public
	}
	s.opts.Metrics.Generation(res)
}

// streamTimeout bounds the whole of a stream's generation loosely; the
// per-write deadline is what stops slow readers.
func (s *Server) streamContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.opts.RequestTimeout+time.Minute)
}
