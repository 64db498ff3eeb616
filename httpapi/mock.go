package httpapi

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/neuro-go/neuro/models/tokenizers"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/tokenizer"
)

// mocker answers generation without a model: the text is words from a
// fixed list, picked by a hash of the request body (same request, same
// text), and every count comes from the project's 4k tokenizer.
type mocker struct {
	tok     *tokenizer.Tokenizer
	models  []*mockModel
	deps    []*mockDep
	created int64
}

type mockModel struct {
	id      string
	created int64
	devices []string
}

type mockDep struct {
	id, model string
	device    deviceRecord
	created   int64
}

// The neuro-1 family, which mock mode serves whether or not its weights
// are registered in the runtime.
var mockModelIDs = [...]string{"neuro-1-heavy", "neuro-1-lite", "neuro-1-standard"}

var mockWords = [...]string{
	"spike", "neuron", "synapse", "membrane", "threshold", "leak", "current", "pulse",
	"signal", "network", "layer", "event", "time", "step", "charge", "voltage",
	"the", "a", "of", "and", "to", "in", "with", "through", "quietly", "fires", "rests",
	"listens", "remembers", "integrates", "carries", "waits", "fox", "river", "light",
	"story", "garden", "morning", "small", "bright", "slow", "calm", "every", "many",
	"crow", "window", "forest", "song", "stone", "cloud", "path", "warm", "old", "new",
	"tells", "finds", "sees", "holds", "brings", "keeps", "turns", "opens", "grows", "learns",
}

func newMocker() (*mocker, error) {
	tok, err := tokenizers.Load("neuro-bpe-4k")
	if err != nil {
		return nil, fmt.Errorf("httpapi: mock mode: %w", err)
	}
	m := &mocker{tok: tok, created: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Unix()}
	devices := hal.Devices()
	for _, id := range mockModelIDs {
		m.models = append(m.models, &mockModel{id: id, created: m.created, devices: devices})
		m.deps = append(m.deps, &mockDep{id: id + "-cpu", model: id, device: mockDevice("cpu"), created: m.created})
	}
	for _, chip := range []string{"loihi", "xylo"} {
		for _, d := range devices {
			if d == chip {
				m.deps = append(m.deps, &mockDep{id: "neuro-1-lite-" + chip, model: "neuro-1-lite", device: mockDevice(chip), created: m.created})
			}
		}
	}
	return m, nil
}

func mockDevice(name string) deviceRecord {
	d := deviceRecord{Name: name, Kind: string(hal.KindCPU)}
	if dev, err := hal.Open(name, hal.Config{}); err == nil {
		c := dev.Capabilities()
		d = deviceRecord{Name: c.Name, Kind: string(c.Kind), Vendor: c.Vendor, Model: c.Model}
	}
	return d
}

func (m *mocker) model(id string) *mockModel {
	for _, mm := range m.models {
		if mm.id == id {
			return mm
		}
	}
	return nil
}

func (mm *mockModel) record() *modelRecord {
	return &modelRecord{
		ID: mm.id, Object: "model", Created: mm.created, OwnedBy: "neuro",
		Capabilities: capabilities{Chat: true, Completions: true, Streaming: true, Logprobs: true},
		Neuromorphic: &neuroInfo{Context: contextInfo{Handling: "recurrent spiking state (constant memory per sequence)"}, Devices: mm.devices, Mock: true},
		Description:  "mock mode: no weights are loaded; text is generated from a hash of the request",
	}
}

func (m *mocker) deployment(s *Server, id string) *mockDep {
	if _, err := s.rt.Deployment(id); err == nil {
		return nil // a real deployment of that name wins
	}
	for _, d := range m.deps {
		if d.id == id {
			return d
		}
	}
	return nil
}

func (d *mockDep) record() *deploymentRecord {
	return &deploymentRecord{ID: d.id, Object: "deployment", Model: d.model, Device: d.device, Status: string(runtime.StatusReady),
		Created: d.created, Replicas: 1, MaxBatchSize: 8, Mock: true}
}

// tokenizerFor returns the tokenizer that counts a model's tokens.
func (s *Server) tokenizerFor(model string) *tokenizer.Tokenizer {
	if m, err := s.rt.Model(model); err == nil && m.Tokenizer != nil {
		return m.Tokenizer
	}
	if s.mock != nil {
		return s.mock.tok
	}
	return nil
}

func (m *mocker) encode(s *Server, req *runtime.Request) ([]int, error) {
	model, err := s.resolveGenModel(req.Model, req.Deployment)
	if err != nil {
		return nil, err
	}
	return encodeMock(s.tokenizerFor(model), req)
}

func encodeMock(tok *tokenizer.Tokenizer, req *runtime.Request) ([]int, error) {
	if req.Messages != nil {
		ids, err := tok.EncodeChat(req.Messages, true)
		if err != nil {
			return nil, &runtime.ParamError{Param: "messages", Msg: err.Error()}
		}
		return ids, nil
	}
	ids := tok.Encode(req.Prompt)
	if len(ids) == 0 {
		if id, ok := tok.SpecialID(tokenizer.EndOfText); ok {
			ids = []int{id}
		}
	}
	return ids, nil
}

// mockGen is the mock bound to one request body.
type mockGen struct {
	m    *mocker
	s    *Server
	hash uint64
}

func (m *mocker) bind(s *Server, hash uint64) *mockGen {
	return &mockGen{m: m, s: s, hash: hash}
}

func fnv64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// mix is splitmix64's finaliser: a well-spread value for each (seed, i).
func mix(seed, i uint64) uint64 {
	z := seed + (i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// text is the mock completion of choice c: 8 to 47 words in sentences.
func mockText(h uint64) string {
	n := 8 + int(h%40)
	var sb strings.Builder
	for i := 0; i < n; i++ {
		w := mockWords[mix(h, uint64(i))%uint64(len(mockWords))]
		start := i == 0 || i%9 == 0
		if i > 0 {
			if start {
				sb.WriteString(". ")
			} else {
				sb.WriteByte(' ')
			}
		}
		if start {
			sb.WriteString(strings.ToUpper(w[:1]))
			sb.WriteString(w[1:])
		} else {
			sb.WriteString(w)
		}
	}
	sb.WriteByte('.')
	return sb.String()
}

func mockLogprob(tok *tokenizer.Tokenizer, h uint64, k int, id int, top int) runtime.TokenLogprob {
	x := mix(h, uint64(k)+1<<32)
	lp := runtime.TokenLogprob{Token: id, Text: tok.Decode([]int{id}), Logprob: -0.01 - float64(x%3000)/1000}
	if top > 0 {
		lp.Top = make([]runtime.TokenLogprob, 0, top)
		lp.Top = append(lp.Top, runtime.TokenLogprob{Token: id, Text: lp.Text, Logprob: lp.Logprob})
		v := tok.VocabSize()
		for j := 1; j < top; j++ {
			alt := int((x>>16)+uint64(j)*7919) % v
			lp.Top = append(lp.Top, runtime.TokenLogprob{Token: alt, Text: tok.Decode([]int{alt}), Logprob: lp.Logprob - 0.25*float64(j)})
		}
	}
	return lp
}

// Generate answers req as the runtime would, event for event, and records
// it in the runtime's telemetry.
func (g *mockGen) Generate(ctx context.Context, req *runtime.Request, fn func(runtime.Event) error) (*runtime.Result, error) {
	s := g.s
	start := s.opts.Now()
	res, err := g.generate(ctx, req, fn, start)
	s.rt.Telemetry().Record(req, res, err, start, s.opts.Now())
	return res, err
}

func (g *mockGen) generate(ctx context.Context, req *runtime.Request, fn func(runtime.Event) error, start time.Time) (*runtime.Result, error) {
	s := g.s
	model, err := s.resolveGenModel(req.Model, req.Deployment)
	if err != nil {
		return nil, err
	}
	tok := s.tokenizerFor(model)
	for id := range req.Sampling.LogitBias {
		if id >= tok.VocabSize() {
			return nil, &runtime.ParamError{Param: "logit_bias", Msg: fmt.Sprintf("token %d is not in the vocabulary of %d", id, tok.VocabSize())}
		}
	}
	prompt, err := encodeMock(tok, req)
	if err != nil {
		return nil, err
	}
	dep := req.Deployment
	if dep == "" {
		dep = model + "-cpu"
	}
	res := &runtime.Result{Model: model, Deployment: dep, PromptTokens: prompt, Choices: make([]runtime.Choice, max(req.N, 1))}
	h := g.hash ^ fnv64([]byte(req.Prompt))
	if req.Echo && req.Logprobs {
		for k := 1; k < len(prompt); k++ {
			res.PromptLogprobs = append(res.PromptLogprobs, mockLogprob(tok, h^0x5bd1e995, k, prompt[k], req.TopLogprobs))
		}
	}
	var ttft time.Duration
	for c := range res.Choices {
		hc := mix(h, uint64(c)+1<<40)
		text := mockText(hc)
		finish := "stop"
		for _, st := range req.Stop {
			if i := strings.Index(text, st); i >= 0 {
				text = text[:i]
			}
		}
		ids := tok.Encode(text)
		limit := req.MaxTokens
		if req.EchoOnly {
			limit = 0
		}
		if (limit > 0 || req.EchoOnly) && len(ids) > limit {
			ids, finish = ids[:limit], "length"
		}
		ch := &res.Choices[c]
		ch.Index, ch.Tokens, ch.FinishReason = c, ids, finish
		var sb strings.Builder
		for k, id := range ids {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			ev := runtime.Event{Choice: c, Text: tok.Decode(ids[k : k+1])}
			if req.Logprobs {
				lp := mockLogprob(tok, hc, k, id, req.TopLogprobs)
				ch.Logprobs = append(ch.Logprobs, lp)
				ev.Logprobs = ch.Logprobs[len(ch.Logprobs)-1:]
			}
			sb.WriteString(ev.Text)
			if k == len(ids)-1 {
				ev.FinishReason = finish
			}
			if ttft == 0 {
				ttft = s.opts.Now().Sub(start)
			}
			if fn != nil {
				if err := fn(ev); err != nil {
					return res, err
				}
			}
		}
		ch.Text = sb.String()
		if len(ids) == 0 && fn != nil {
			if err := fn(runtime.Event{Choice: c, FinishReason: finish}); err != nil {
				return res, err
			}
		}
		res.Usage.CompletionTokens += len(ids)
	}
	res.Usage.PromptTokens = len(prompt)
	res.Usage.TotalTokens = res.Usage.PromptTokens + res.Usage.CompletionTokens
	res.Stats.TimeToFirstToken = ttft
	res.Stats.Latency = s.opts.Now().Sub(start)
	return res, nil
}
