package runtime

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
	"github.com/neuro-go/neuro/tokenizer"
)

// Request asks for a completion: of a text (Prompt) or of a chat
// (Messages).
type Request struct {
	// Model names the model (ID or alias). With Deployment set it may be
	// empty; if both are set they must agree.
	Model      string
	Deployment string
	Prompt     string
	Messages   []tokenizer.Message
	Sampling   Sampling
	// MaxTokens bounds the completion; 0 means until the model stops or
	// the context is full. Use EchoOnly for a completion of no tokens.
	MaxTokens int
	// EchoOnly asks for no completion at all (max_tokens 0): with Echo and
	// Logprobs it scores the prompt.
	EchoOnly bool
	// Stop lists up to 4 strings that end the completion; they are not
	// part of the text.
	Stop []string
	// N is the number of choices; default 1.
	N int
	// Logprobs asks for the log-probability of each generated token, and
	// TopLogprobs for that many alternatives at each position.
	Logprobs    bool
	TopLogprobs int
	// Echo asks for the prompt's token log-probabilities (text completion).
	Echo bool
	// Activity asks for the spiking activity behind each token on its
	// events (Event.Activity), where the device can report it.
	Activity bool
	// Principal identifies the caller for telemetry; Endpoint names the
	// API call.
	Principal string
	Endpoint  string
}

// Event is a piece of a streamed completion.
type Event struct {
	Choice int
	// Text is new text of the choice; never part of a stop sequence.
	Text string
	// Logprobs are those of the tokens consumed since the last event.
	Logprobs []TokenLogprob
	// FinishReason is set on the last event of a choice.
	FinishReason FinishReason
	// Activity is, when the request asked for it, which neurons of each
	// spiking layer fired for the tokens consumed since the last event.
	Activity []LayerActivity
}

// LayerActivity is the neurons of one spiking layer that fired for a
// token (during any of its timesteps), at most MaxActivitySpikes of them.
type LayerActivity struct {
	Layer   string `json:"layer"`
	Neurons int    `json:"neurons"`
	Spikes  []int  `json:"spikes"`
}

// MaxActivitySpikes caps the neurons listed per layer and token.
const MaxActivitySpikes = 512

// Choice is one finished completion.
type Choice struct {
	Index        int
	Text         string
	Tokens       []int
	Logprobs     []TokenLogprob
	FinishReason FinishReason
}

// FinishReason says why a choice ended, in the OpenAI API's words.
type FinishReason string

const (
	// FinishStop: the model emitted a stop token or a stop sequence matched.
	FinishStop FinishReason = "stop"
	// FinishLength: max_tokens or the model's context was reached.
	FinishLength FinishReason = "length"
)

// Usage counts tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Result is a finished request.
type Result struct {
	Model      string
	Deployment string
	Choices    []Choice
	Usage      Usage
	// PromptTokens are the prompt's token ids, and PromptLogprobs their
	// log-probabilities (Echo with Logprobs; the first has none).
	PromptTokens   []int
	PromptLogprobs []TokenLogprob
	Stats          Stats
}

// Stats is what a request cost on the device. A batch step's cost is
// shared equally by the sequences stepped in it.
type Stats struct {
	Timesteps     int64
	Spikes        float64
	SynapticOps   float64
	NeuronUpdates float64
	// SpikingUpdates are the updates of neurons that can fire: spikes
	// divided by these is the spike rate.
	SpikingUpdates   float64
	EnergyMicrojoule float64
	TimeToFirstToken time.Duration
	Latency          time.Duration
}

// stepStats prices the counters of steps shared by active slots with the
// target's energy model: each slot's equal share.
func stepStats(before, after snn.Counters, steps, active int, t compile.Target) Stats {
	share := 1 / float64(active)
	st := Stats{
		Timesteps:      int64(steps),
		Spikes:         float64(after.Spikes-before.Spikes) * share,
		SynapticOps:    float64(after.SynapticOps-before.SynapticOps) * share,
		NeuronUpdates:  float64(after.NeuronUpdates-before.NeuronUpdates) * share,
		SpikingUpdates: float64(after.SpikingUpdates-before.SpikingUpdates) * share,
	}
	e := t.Energy
	st.EnergyMicrojoule = (st.NeuronUpdates*e.NeuronUpdatePJ + st.Spikes*e.SpikePJ + st.SynapticOps*e.SynapticOpPJ +
		float64(steps)*e.StaticPerStepPJ*share) * 1e-6
	return st
}

// Generate runs a request to completion, calling fn (if not nil) with each
// event as it happens; an error from fn stops generation and is returned.
// fn runs on the caller's goroutine.
func (r *Runtime) Generate(ctx context.Context, req *Request, fn func(Event) error) (*Result, error) {
	start := r.opts.Now()
	res, err := r.generate(ctx, req, fn, start)
	r.telemetry.record(req, res, err, start, r.opts.Now())
	return res, err
}

// Stream runs a request and yields its events; breaking out of the loop
// cancels it. The final error, if any, is yielded last.
func (r *Runtime) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		stopped := errors.New("stopped")
		_, err := r.Generate(ctx, req, func(ev Event) error {
			if !yield(ev, nil) {
				return stopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, stopped) {
			yield(Event{}, err)
		}
	}
}

// Prepare validates a request and encodes its prompt, without running it:
// what Generate would refuse, Prepare refuses with the same error.
func (r *Runtime) Prepare(req *Request) (*Deployment, []int, error) {
	d, err := r.resolve(req)
	if err != nil {
		return nil, nil, err
	}
	prompt, err := r.encodePrompt(d.Model, req)
	if err != nil {
		return nil, nil, err
	}
	return d, prompt, nil
}

func (r *Runtime) resolve(req *Request) (*Deployment, error) {
	if req.Deployment != "" {
		d, err := r.deploymentOf(req.Deployment, req.Model)
		if err != nil {
			return nil, err
		}
		if !d.Model.IsLanguageModel() {
			return nil, fmt.Errorf("%w: %q", ErrNotLanguageModel, d.Model.ID)
		}
		if d.Status() != StatusReady {
			return nil, fmt.Errorf("%w: deployment %q is %s", ErrDeviceUnavailable, d.ID, d.Status())
		}
		return d, nil
	}
	m, err := r.Model(req.Model)
	if err != nil {
		return nil, err
	}
	if !m.IsLanguageModel() {
		return nil, fmt.Errorf("%w: %q", ErrNotLanguageModel, m.ID)
	}
	return r.DeploymentFor(m.ID)
}

// deploymentOf finds a deployment and checks that it serves model, when
// a request names both.
func (r *Runtime) deploymentOf(id, model string) (*Deployment, error) {
	d, err := r.Deployment(id)
	if err != nil {
		return nil, err
	}
	if model != "" {
		m, err := r.Model(model)
		if err != nil {
			return nil, err
		}
		if m.ID != d.Model.ID {
			return nil, &ParamError{"model", fmt.Sprintf("deployment %q serves %q, not %q", d.ID, d.Model.ID, model)}
		}
	}
	return d, nil
}

func (r *Runtime) encodePrompt(m *Model, req *Request) ([]int, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	var ids []int
	if req.Messages != nil {
		var err error
		ids, err = m.Tokenizer.EncodeChat(req.Messages, true)
		if err != nil {
			return nil, &ParamError{"messages", err.Error()}
		}
	} else {
		ids = m.Tokenizer.Encode(req.Prompt)
	}
	if len(ids) == 0 {
		// An empty prompt starts from the end-of-text token, where every
		// training document starts.
		id, ok := m.Tokenizer.SpecialID(tokenizer.EndOfText)
		if !ok {
			return nil, &ParamError{"prompt", "empty prompt, and the tokenizer has no end-of-text token to start from"}
		}
		ids = []int{id}
	}
	if n := m.ContextLength(); n > 0 && len(ids) > n {
		return nil, fmt.Errorf("%w: %d prompt tokens, the context holds %d", ErrContextLength, len(ids), n)
	}
	return ids, nil
}

func checkRequest(req *Request) error {
	s := req.Sampling
	switch {
	case len(req.Messages) == 0 && req.Messages != nil:
		return &ParamError{"messages", "at least one message is required"}
	case s.Temperature < 0 || s.Temperature > 2:
		return &ParamError{"temperature", fmt.Sprintf("%v is outside [0, 2]", s.Temperature)}
	case s.TopP < 0 || s.TopP > 1:
		return &ParamError{"top_p", fmt.Sprintf("%v is outside [0, 1]", s.TopP)}
	case s.PresencePenalty < -2 || s.PresencePenalty > 2:
		return &ParamError{"presence_penalty", fmt.Sprintf("%v is outside [-2, 2]", s.PresencePenalty)}
	case s.FrequencyPenalty < -2 || s.FrequencyPenalty > 2:
		return &ParamError{"frequency_penalty", fmt.Sprintf("%v is outside [-2, 2]", s.FrequencyPenalty)}
	case req.N < 0 || req.N > 8:
		return &ParamError{"n", fmt.Sprintf("%d is outside [1, 8]", req.N)}
	case req.MaxTokens < 0:
		return &ParamError{"max_tokens", fmt.Sprintf("%d is negative", req.MaxTokens)}
	case len(req.Stop) > 4:
		return &ParamError{"stop", fmt.Sprintf("%d stop sequences, at most 4", len(req.Stop))}
	case req.TopLogprobs < 0 || req.TopLogprobs > 20:
		return &ParamError{"top_logprobs", fmt.Sprintf("%d is outside [0, 20]", req.TopLogprobs)}
	}
	for _, st := range req.Stop {
		if st == "" {
			return &ParamError{"stop", "empty stop sequence"}
		}
	}
	for id, b := range s.LogitBias {
		if b < -100 || b > 100 {
			return &ParamError{"logit_bias", fmt.Sprintf("bias %v for token %d is outside [-100, 100]", b, id)}
		}
	}
	return nil
}

func (r *Runtime) generate(ctx context.Context, req *Request, fn func(Event) error, start time.Time) (*Result, error) {
	d, prompt, err := r.Prepare(req)
	if err != nil {
		return nil, err
	}
	m := d.Model
	for id := range req.Sampling.LogitBias {
		if id < 0 || id >= m.Tokenizer.VocabSize() {
			return nil, &ParamError{"logit_bias", fmt.Sprintf("token %d is not in the vocabulary of %d", id, m.Tokenizer.VocabSize())}
		}
	}
	n := max(req.N, 1)
	caller := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rs := &reqState{notify: make(chan struct{}, 1), remaining: n, start: start, now: r.opts.Now, streaming: fn != nil}
	var seed uint64
	if req.Sampling.Seed != nil {
		seed = uint64(*req.Sampling.Seed)
	} else {
		seed = rand.Uint64()
	}
	stopIDs, _ := m.Tokenizer.StopIDs()
	if id, ok := m.Tokenizer.SpecialID(tokenizer.EndOfText); ok {
		stopIDs = append(stopIDs, id)
	}
	seqs := make([]*seq, n)
	for i := range seqs {
		seqs[i] = newSeq(ctx, req, i, prompt, m, rs, seed+uint64(i)*0x632be59bd9b4e019, stopIDs)
	}
	if err := enqueue(d, d.queue, seqs, "n", "sequences"); err != nil {
		return nil, err
	}
	res := &Result{Model: m.ID, Deployment: d.ID, Choices: make([]Choice, n), PromptTokens: prompt}
	var fnErr error
	texts := make([]strings.Builder, n) // the choices' text, grown by doubling
	setTexts := func() {
		for i := range texts {
			res.Choices[i].Text = texts[i].String()
		}
	}
	var spare []Event // the event buffers alternate: none is allocated per token
	for {
		rs.mu.Lock()
		evs := rs.events
		rs.events = spare[:0]
		done := rs.remaining == 0
		rs.mu.Unlock()
		for _, ev := range evs {
			c := &res.Choices[ev.Choice]
			c.Index = ev.Choice
			texts[ev.Choice].WriteString(ev.Text)
			c.Logprobs = append(c.Logprobs, ev.Logprobs...)
			if ev.FinishReason != "" {
				c.FinishReason = ev.FinishReason
			}
			// A caller that has gone gets no more events: its callback may
			// block (it has stopped reading).
			if fn != nil && fnErr == nil && caller.Err() == nil {
				if fnErr = fn(ev); fnErr != nil {
					cancel()
				}
			}
		}
		clear(evs) // drop the texts they hold before the buffer is reused
		spare = evs
		if done {
			break
		}
		select {
		case <-rs.notify:
		case <-caller.Done():
			// Return at once: a sequence still queued is dropped when a
			// worker takes it, one in a slot leaves it before the next
			// token.
			if !rs.abandon() {
				continue // everything finished meanwhile: collect it
			}
			setTexts()
			res.Usage.PromptTokens = len(prompt)
			res.Stats.Latency = r.opts.Now().Sub(start)
			return res, caller.Err()
		}
	}
	setTexts()
	for i, s := range seqs {
		res.Choices[i].Tokens = s.generated
		res.Usage.CompletionTokens += len(s.generated)
		res.Stats.add(s.stats)
		if s.err != nil && err == nil {
			err = s.err
		}
	}
	res.PromptLogprobs = seqs[0].promptLogprobs
	res.Usage.PromptTokens = len(prompt)
	res.Usage.TotalTokens = res.Usage.PromptTokens + res.Usage.CompletionTokens
	res.Stats.Latency = r.opts.Now().Sub(start)
	res.Stats.TimeToFirstToken = rs.ttft
	if fnErr != nil {
		return res, fnErr
	}
	if err != nil {
		return res, err
	}
	return res, nil
}

func (s *Stats) add(o Stats) {
	s.Timesteps += o.Timesteps
	s.Spikes += o.Spikes
	s.SynapticOps += o.SynapticOps
	s.NeuronUpdates += o.NeuronUpdates
	s.SpikingUpdates += o.SpikingUpdates
	s.EnergyMicrojoule += o.EnergyMicrojoule
}

// reqState collects the events of one request's sequences for the
// caller's goroutine.
type reqState struct {
	mu        sync.Mutex
	events    []Event
	remaining int
	notify    chan struct{}
	start     time.Time
	ttft      time.Duration
	now       func() time.Time
	// streaming callers are woken for every event; the others only when a
	// sequence finishes, which saves a goroutine switch per token.
	streaming bool
	gone      bool // the caller returned: drop events
}

// abandon records that the caller has gone; it reports false when every
// sequence had already finished, so that the results can still be taken.
func (rs *reqState) abandon() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.remaining == 0 {
		return false
	}
	rs.gone = true
	return true
}

// pending is the number of events not yet taken by the caller.
func (rs *reqState) pending() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.events)
}

func (rs *reqState) push(ev Event, finished bool) {
	rs.mu.Lock()
	if rs.gone {
		if finished {
			rs.remaining--
		}
		rs.mu.Unlock()
		return
	}
	if rs.ttft == 0 && ev.Text != "" {
		rs.ttft = rs.now().Sub(rs.start)
	}
	rs.events = append(rs.events, ev)
	if finished {
		rs.remaining--
	}
	rs.mu.Unlock()
	if !rs.streaming && !finished {
		return
	}
	select {
	case rs.notify <- struct{}{}:
	default:
	}
}

// seq is one choice being generated, owned by a deployment worker once
// admitted.
type seq struct {
	ctx     context.Context
	req     *Request
	choice  int
	prompt  []int
	pos     int // next prompt token to present
	last    int // last sampled token
	model   *Model
	rs      *reqState
	sampler *sampler
	decoder *tokenizer.Decoder
	stopIDs []int

	generated      []int
	text           strings.Builder
	emitted        int // bytes of text already sent
	holdback       int // bytes kept back in case they start a stop sequence
	pending        []TokenLogprob
	activity       []LayerActivity // since the last event, when asked for
	promptLogprobs []TokenLogprob
	stats          Stats
	err            error
	finished       bool
	finishReason   FinishReason
}

func newSeq(ctx context.Context, req *Request, choice int, prompt []int, m *Model, rs *reqState, seed uint64, stopIDs []int) *seq {
	s := &seq{
		ctx: ctx, req: req, choice: choice, prompt: prompt, model: m, rs: rs,
		sampler: newSampler(req.Sampling, m.Tokenizer.VocabSize(), seed),
		decoder: m.Tokenizer.NewDecoder(), stopIDs: stopIDs,
	}
	// A special token (a chat turn marker, say) counts as a token but is
	// never text: neither returned nor matched against stop sequences.
	s.decoder.SkipSpecial = true
	s.text.Grow(4 * min(max(req.MaxTokens, 16), 1024)) // most completions' text in one allocation
	for _, st := range req.Stop {
		s.holdback = max(s.holdback, len(st)-1)
	}
	return s
}

// input is the token to present at the next tick.
func (s *seq) input() int {
	if s.pos < len(s.prompt) {
		return s.prompt[s.pos]
	}
	return s.last
}

func (s *seq) tokenText(id int) string {
	b, _ := s.model.Tokenizer.TokenBytes(id)
	return string(b)
}

// advance consumes the logits read after the tick; it returns true when
// the sequence has finished.
func (s *seq) advance(logits []float32) bool {
	if s.pos < len(s.prompt) {
		s.pos++
		if s.pos < len(s.prompt) {
			s.activity = nil // what a prompt token caused is no completion token's
			if s.req.Echo && s.req.Logprobs && s.choice == 0 {
				s.sampler.process(logits)
				next := s.prompt[s.pos]
				lp := TokenLogprob{Token: next, Text: s.tokenText(next), Logprob: s.sampler.logSoftmax(next)}
				lp.Top = s.sampler.top(nil, s.req.TopLogprobs, s.tokenText)
				s.promptLogprobs = append(s.promptLogprobs, lp)
			}
			return false
		}
	}
	if s.req.EchoOnly {
		s.finish(FinishLength)
		return true
	}
	if s.req.MaxTokens > 0 && len(s.generated) >= s.req.MaxTokens {
		s.finish(FinishLength)
		return true
	}
	if n := s.model.ContextLength(); n > 0 && len(s.prompt)+len(s.generated) >= n {
		s.finish(FinishLength)
		return true
	}
	id := s.sampler.next(logits)
	s.last = id
	s.generated = append(s.generated, id)
	var lp TokenLogprob
	if s.req.Logprobs {
		lp = TokenLogprob{Token: id, Text: s.tokenText(id), Logprob: s.sampler.logSoftmax(id)}
		lp.Top = s.sampler.top(nil, s.req.TopLogprobs, s.tokenText)
	}
	for _, st := range s.stopIDs {
		if id == st {
			if s.req.Logprobs {
				s.pending = append(s.pending, lp)
			}
			s.finish(FinishStop)
			return true
		}
	}
	piece, _ := s.decoder.NextBytes(id) // a special token is no text (SkipSpecial)
	s.text.Write(piece)
	if s.req.Logprobs {
		s.pending = append(s.pending, lp)
	}
	if s.stopMatched() {
		s.finish(FinishStop)
		return true
	}
	if s.req.MaxTokens > 0 && len(s.generated) >= s.req.MaxTokens {
		s.text.WriteString(s.decoder.Flush())
		s.finish(FinishLength)
		return true
	}
	s.emit(false)
	return false
}

// stopMatched truncates the text at the first stop sequence, if any.
func (s *seq) stopMatched() bool {
	if len(s.req.Stop) == 0 {
		return false
	}
	text := s.text.String()
	from := max(0, s.emitted-s.holdback)
	cut := -1
	for _, st := range s.req.Stop {
		if i := strings.Index(text[from:], st); i >= 0 && (cut < 0 || from+i < cut) {
			cut = from + i
		}
	}
	if cut < 0 {
		return false
	}
	s.text.Reset()
	s.text.WriteString(text[:cut])
	return true
}

// emit sends the text that can no longer turn into a stop sequence (all of
// it when final).
func (s *seq) emit(final bool) {
	text := s.text.String()
	upto := len(text)
	if !final {
		upto -= s.holdback
		for upto > s.emitted && upto < len(text) && !isRuneStart(text[upto]) {
			upto--
		}
	}
	ev := Event{Choice: s.choice}
	if upto > s.emitted {
		ev.Text = text[s.emitted:upto]
		s.emitted = upto
	}
	ev.Logprobs, s.pending = s.pending, nil
	if ev.Text == "" && ev.Logprobs == nil && s.activity == nil && !final {
		return
	}
	ev.Activity, s.activity = s.activity, nil
	if final {
		ev.FinishReason = s.finishReason
	}
	s.rs.push(ev, final)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func (s *seq) finish(reason FinishReason) {
	s.finishReason = reason
	s.finished = true
	s.emit(true)
}

// expired fails the sequence if its caller has gone (cancelled while
// queued).
func (s *seq) expired() bool {
	if err := s.ctx.Err(); err != nil {
		s.fail(err)
		return true
	}
	return false
}

// fail ends the sequence with an error.
func (s *seq) fail(err error) {
	if s.finished {
		return
	}
	s.err = err
	s.finished = true
	s.rs.push(Event{Choice: s.choice}, true)
}
