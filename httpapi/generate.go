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
		s.fail(w, r, g.model, s.genError(err, chat))
		return
	}
	model := m.ID
	reqs := make([]*runtime.Request, 0, max(1, len(g.prompts)))
	base := runtime.Request{
		Model: model, Deployment: deployment, Messages: g.messages,
		Sampling: runtime.Sampling{Temperature: g.temperature, TopP: g.topP, PresencePenalty: g.presence,
			FrequencyPenalty: g.frequency, LogitBias: g.logitBias, Seed: g.seed},
		MaxTokens: g.maxTokens, EchoOnly: g.maxSet && g.maxTokens == 0, Stop: g.stop, N: g.n,
		Logprobs: g.logprobs, TopLogprobs: g.topLogprobs, Echo: g.echo, Activity: g.activity,
		Principal: ri.principal, Endpoint: ri.endpoint,
	}
	if !g.maxSet {
		base.MaxTokens = s.opts.MaxTokens
	}
	if chat {
		reqs = append(reqs, &base)
	} else {
		for _, p := range g.prompts {
			req := base
			req.Prompt = p
			reqs = append(reqs, &req)
		}
	}
	if e := s.checkPromptLength(reqs, chat); e != nil {
		s.fail(w, r, model, e)
		return
	}
	ri.recorded = true // the backend records generations
	if g.stream {
		s.stream(w, r, g, m, reqs)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	results := make([]*runtime.Result, len(reqs))
	for i, req := range reqs {
		res, err := s.be.Generate(ctx, req, nil)
		if err != nil {
			if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
				return // the client has gone; nobody reads an answer
			}
			writeError(w, s.genError(err, chat))
			return
		}
		s.observe(res)
		results[i] = res
	}
	if chat {
		writeJSON(w, http.StatusOK, chatResponse(newID("chatcmpl-"), s.opts.Now().Unix(), model, g, results[0]))
	} else {
		writeJSON(w, http.StatusOK, completionResponse(newID("cmpl-"), s.opts.Now().Unix(), model, g, results, m.Tokenizer))
	}
}

// genError maps a generation error, naming the prompt field of the
// endpoint for a prompt that is too long.
func (s *Server) genError(err error, chat bool) *Error {
	e := toError(err)
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

// checkPromptLength refuses prompts over MaxPromptTokens. A prompt of
// fewer bytes than the limit cannot hold more tokens, so most requests
// skip the encoding.
func (s *Server) checkPromptLength(reqs []*runtime.Request, chat bool) *Error {
	for _, req := range reqs {
		n := len(req.Prompt)
		for _, m := range req.Messages {
			n += len(m.Content) + 16 // the template's tokens per turn
		}
		if n <= s.opts.MaxPromptTokens {
			continue
		}
		_, ids, err := s.be.Prepare(req)
		if err != nil {
			return s.genError(err, chat)
		}
		if len(ids) > s.opts.MaxPromptTokens {
			param := "messages"
			if !chat {
				param = "prompt"
			}
			return invalid(param, "context_length_exceeded", "the prompt has %d tokens, the limit is %d", len(ids), s.opts.MaxPromptTokens)
		}
	}
	return nil
}

// observe counts a finished generation in the metrics.
func (s *Server) observe(res *runtime.Result) {
	if s.opts.Metrics == nil || res == nil {
		return
	}
	s.opts.Metrics.Generation(res)
}

// streamTimeout bounds the whole of a stream's generation loosely; the
// per-write deadline is what stops slow readers.
func (s *Server) streamContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.opts.RequestTimeout+time.Minute)
}
