// Package clienttest starts Neuro API servers on the loopback interface
// for the tests of clients (this module's client, the OpenAI clients in
// the compat module) and for load tests: the real httpapi handler over a
// runtime that serves small random-weight language models under the
// built-in ids, on the CPU simulator or, in mock mode, on mock devices.
//
// # Overview
//
//	srv, err := clienttest.Start(ctx, nil)
//	defer srv.Close()
//	c, _ := client.New(srv.URL, &client.Options{APIKey: srv.Key})
//
// The models are recurrent LIF networks with random weights over the
// project's 1k BPE tokenizer: their text is gibberish, but every
// mechanism (sampling, stop sequences, log-probabilities, batching,
// cancellation, telemetry) is the real one. They are small enough that a
// token costs tens of microseconds on the CPU simulator.
//
// # Invariants
//
//   - Servers listen on 127.0.0.1 only, on a port the kernel picks.
//   - Nothing is shared between two Servers: each has its own runtime.
package clienttest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"

	"github.com/neuro-go/neuro/runtime/runtimetest"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/httpapi/prom"
	"github.com/neuro-go/neuro/models/tokenizers"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"   // the CPU simulator, for the deployments
	_ "github.com/neuro-go/neuro/runtime/hal/loihi" // the Loihi 2 emulator, for the chip deployment
	"github.com/neuro-go/neuro/runtime/hal/mock"
	"github.com/neuro-go/neuro/tokenizer"
)

// Models are the ids the test models are registered under, as the
// built-in models are.
var Models = [...]string{"neuro-1-lite", "neuro-1-standard", "neuro-1-heavy"}

// LoihiDeployment is the id of the deployment of neuro-1-lite on the
// Loihi 2 emulator; every model also has a CPU deployment "<id>-cpu".
const LoihiDeployment = "neuro-1-lite-loihi"

// ContextLength is the context, in tokens, of neuro-1-lite and
// neuro-1-standard. neuro-1-heavy's is unbounded (its state does not grow
// with the context), so a request to it without max_tokens runs to the
// server's MaxTokens: long enough to test that a client going away stops
// it.
const ContextLength = 256

// Options configure a test server. The zero value works.
type Options struct {
	// Mock serves in mock mode: the same models and deployments on mock
	// devices (runtime/hal/mock), which run nothing.
	Mock bool
	// Keys maps API keys to principals. Default {DefaultKey: "test"}.
	Keys map[string]string
	// API, when set, is the base of the server's options (Keys and Mock
	// above override its fields).
	API *httpapi.Options
	// Runtime, when set, configures the runtime.
	Runtime *runtime.Options
	// MaxBatch is each deployment's batch. Default 8.
	MaxBatch int
	// NoLoihi leaves out the Loihi deployment (it is slower than the CPU
	// simulator).
	NoLoihi bool
}

// DefaultKey is the API key of a server whose Options set none.
const DefaultKey = "sk-neuro-test"

// Server is a running test server.
type Server struct {
	// URL is the server root, such as http://127.0.0.1:41234; the OpenAI
	// clients take URL+"/v1".
	URL string
	// Key is one valid API key.
	Key     string
	Runtime *runtime.Runtime
	API     *httpapi.Server
	srv     *httptest.Server
}

// Start starts a server on 127.0.0.1.
func Start(ctx context.Context, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Keys == nil {
		o.Keys = map[string]string{DefaultKey: "test"}
	}
	key := ""
	for k := range o.Keys {
		if key == "" || k < key { // deterministic choice
			key = k
		}
	}
	rt := runtime.New(o.Runtime)
	if err := AddModels(ctx, rt, &ModelOptions{MaxBatch: o.MaxBatch, Loihi: !o.NoLoihi, Mock: o.Mock}); err != nil {
		rt.Close()
		return nil, err
	}
	var api httpapi.Options
	if o.API != nil {
		api = *o.API
	}
	api.Keys, api.Mock = o.Keys, o.Mock
	if api.Metrics == nil {
		api.Metrics = prom.New()
	}
	h, err := httpapi.New(rt, &api)
	if err != nil {
		rt.Close()
		return nil, err
	}
	srv := httptest.NewServer(h)
	return &Server{URL: srv.URL, Key: key, Runtime: rt, API: h, srv: srv}, nil
}

// Close stops the server (closing open connections) and the runtime.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.API.Close()
	s.Runtime.Close()
}

// ModelOptions choose the test models' deployments. The zero value
// works.
type ModelOptions struct {
	// MaxBatch is each deployment's batch. Default 8.
	MaxBatch int
	// Loihi deploys neuro-1-lite on the Loihi 2 emulator too.
	Loihi bool
	// Mock places every deployment on a mock device standing in for its
	// device.
	Mock bool
}

// AddModels registers the three test models in rt and deploys each on
// the CPU simulator ("<id>-cpu"), and, with Loihi, neuro-1-lite on the
// Loihi 2 emulator too. neuro-1-standard answers to "neuro-1" as well.
func AddModels(ctx context.Context, rt *runtime.Runtime, opts *ModelOptions) error {
	var o ModelOptions
	if opts != nil {
		o = *opts
	}
	tok, err := tokenizers.Load("neuro-bpe-1k")
	if err != nil {
		return fmt.Errorf("clienttest: %w", err)
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = 8
	}
	deploy := func(id, device string, batch int) error {
		spec := runtime.DeploymentSpec{ID: id + "-" + device, Model: id, Device: device, MaxBatch: batch}
		if o.Mock {
			base, err := hal.Open(device, hal.Config{})
			if err != nil {
				return err
			}
			spec.Dev = mock.New(base, &mock.Options{Tokens: runtime.MockTokens(tok)})
		}
		_, err := rt.Deploy(ctx, spec)
		return err
	}
	for i, id := range Models {
		p := Program(id, tok.VocabSize(), 32+16*i, uint64(i+1))
		if id == "neuro-1-heavy" {
			delete(p.Metadata, "context_length")
		}
		m := &runtime.Model{ID: id, Program: p, Tokenizer: tok,
			Card: runtime.Card{Description: "test model: random weights"}}
		if id == "neuro-1-standard" {
			m.Aliases = []string{"neuro-1"}
		}
		if err := rt.RegisterModel(m); err != nil {
			return fmt.Errorf("clienttest: %w", err)
		}
		if err := deploy(id, "cpu", o.MaxBatch); err != nil {
			return fmt.Errorf("clienttest: %w", err)
		}
	}
	if o.Loihi {
		if err := deploy(Models[0], "loihi", 2); err != nil {
			return fmt.Errorf("clienttest: %w", err)
		}
	}
	return nil
}

// EndlessBias is a logit_bias that keeps the test models from ever
// ending a completion on their own (it bans their end-of-text and
// end-of-turn tokens), so that a request runs to its max_tokens.
func EndlessBias() (map[string]float64, error) {
	tok, err := tokenizers.Load("neuro-bpe-1k")
	if err != nil {
		return nil, fmt.Errorf("clienttest: %w", err)
	}
	ids, _ := tok.StopIDs()
	if id, ok := tok.SpecialID(tokenizer.EndOfText); ok {
		ids = append(ids, id)
	}
	bias := map[string]float64{}
	for _, id := range ids {
		bias[strconv.Itoa(id)] = -100
	}
	return bias, nil
}

// Program is runtimetest.Program with this package's context length.
func Program(name string, vocab, hidden int, seed uint64) *compile.Program {
	return runtimetest.Program(name, vocab, hidden, seed, ContextLength)
}
