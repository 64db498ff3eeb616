package runtime

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
	"github.com/neuro-go/neuro/tokenizer"
)

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

func (r *Runtime) generate(ctx context.Context, req *Request, fn func(Event) error, start time.Time) (*Result, error) {
	d, prompts, err := r.prepare(req)
	if err != nil {
		return nil, err
	}
	m := d.Model
	for id := range req.Sampling.LogitBias {
		if id < 0 || id >= m.Tokenizer.VocabSize() {
			return nil, &ParamError{"logit_bias", fmt.Sprintf("token %d is not in the vocabulary of %d", id, m.Tokenizer.VocabSize())}
		}
	}
	points, err := r.resumePoints(d, req, prompts)
	if err != nil {
		return nil, err
	}
	n := max(req.N, 1)
	total := n * len(prompts)
	caller := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rs := &reqState{notify: make(chan struct{}, 1), remaining: total, start: start, now: r.opts.Now, streaming: fn != nil}
	seqs := newSeqs(ctx, req, prompts, m, rs)
	for i, s := range seqs {
		s.resume = points[i/n]
	}
	q := &promptQueue{d: d, rs: rs, seqs: seqs, n: n}
	if err := q.submit(); err != nil {
		if q.queued > 0 {
			cancel() // the prompts queued are not wanted any more
			rs.abandon()
		}
		return nil, err
	}
	res := &Result{Model: m.ID, Deployment: d.ID, Choices: make([]Choice, total), Prompts: make([]PromptResult, len(prompts))}
	for p, prompt := range prompts {
		res.Prompts[p].Tokens = prompt
		res.Usage.PromptTokens += len(prompt)
	}
	res.PromptTokens = prompts[0]
	var fnErr error
	texts := make([]strings.Builder, total) // the choices' text, grown by doubling
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
					q.close()
				}
			}
		}
		clear(evs) // drop the texts they hold before the buffer is reused
		spare = evs
		if done {
			break
		}
		if q.waiting() > 0 {
			if err := q.submit(); err != nil {
				// The rest cannot be served: stop the sequences queued.
				cancel()
				rs.abandon()
				setTexts()
				res.Stats.Latency = r.opts.Now().Sub(start)
				return res, err
			}
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
		if s.scores {
			res.Prompts[i/n].Logprobs = s.promptLogprobs
		}
		if i%n == 0 {
			res.Usage.CachedTokens += s.cached
		}
	}
	res.State = seqs[0].state
	res.PromptLogprobs = res.Prompts[0].Logprobs
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

// newSeqs makes a request's sequences, N per prompt in the order of
// Result.Choices.
func newSeqs(ctx context.Context, req *Request, prompts [][]int, m *Model, rs *reqState) []*seq {
	n := max(req.N, 1)
	stopIDs, _ := m.Tokenizer.StopIDs()
	if id, ok := m.Tokenizer.SpecialID(tokenizer.EndOfText); ok {
		stopIDs = append(stopIDs, id)
	}
	seqs := make([]*seq, n*len(prompts))
	for p, prompt := range prompts {
		// Every prompt's choices take the seeds one prompt alone would:
		// a prompt's completions do not depend on the prompts beside it.
		var seed uint64
		if req.Sampling.Seed != nil {
			seed = uint64(*req.Sampling.Seed)
		} else {
			seed = rand.Uint64()
		}
		for i := range n {
			seqs[p*n+i] = newSeq(ctx, req, p*n+i, i == 0, prompt, m, rs, seed+uint64(i)*0x632be59bd9b4e019, stopIDs)
			seqs[p*n+i].lead = i == 0
		}
	}
	return seqs
}

// promptQueue queues a request's sequences on its deployment, each
// prompt's n together, all or none. Prompts that do not fit the queue
// now wait for the request's own sequences to finish, so that a request
// of many prompts is not refused for the size of the queue.
type promptQueue struct {
	d      *Deployment
	rs     *reqState
	seqs   []*seq
	n      int // sequences per prompt
	queued int // prompts queued
}

// waiting is the number of sequences not yet queued.
func (q *promptQueue) waiting() int { return len(q.seqs) - q.queued*q.n }

// submit queues what fits. A full queue is an error only when none of
// the request's sequences is left to finish and make room.
func (q *promptQueue) submit() error {
	for q.waiting() > 0 {
		// Read before trying: one that finishes after this wakes the
		// caller, which tries again.
		running := q.rs.unfinished() - q.waiting()
		err := enqueue(q.d, q.d.queue, q.seqs[q.queued*q.n:(q.queued+1)*q.n], "n", "sequences")
		if err == nil {
			q.queued++
			continue
		}
		if errors.Is(err, ErrOverloaded) && running > 0 {
			return nil
		}
		return err
	}
	return nil
}

// close gives up the sequences not yet queued: they count as finished.
func (q *promptQueue) close() {
	q.rs.drop(q.waiting())
	q.queued = len(q.seqs) / q.n
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

// drop counts k sequences that will never run as finished, and wakes the
// caller, whose wait may be over.
func (rs *reqState) drop(k int) {
	rs.mu.Lock()
	rs.remaining -= k
	rs.mu.Unlock()
	select {
	case rs.notify <- struct{}{}:
	default:
	}
}

// unfinished is the number of sequences that have not finished, queued
// or not.
func (rs *reqState) unfinished() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.remaining
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
	choice  int  // index in Result.Choices
	scores  bool // it records its prompt's log-probabilities (Echo with Logprobs)
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

	// Resuming and saving states (conversation.go).
	lead        bool        // the first choice of its prompt: it leaves the prompt's state in the cache
	resume      resumePoint // where it starts
	fed         int         // tokens read: of the prompt and answer, or of closing when set
	cached      int         // prompt tokens resumed instead of read
	canSave     bool        // its device saves states (hal.Snapshotter)
	held        bool        // its answer is complete, but it is not counted finished until its turn is saved
	closing     []int       // the closed turn's tokens, read after the answer (Request.SaveState)
	promptState []byte      // the state after the prompt, kept to close a turn from
	state       *State
}

func newSeq(ctx context.Context, req *Request, choice int, first bool, prompt []int, m *Model, rs *reqState, seed uint64, stopIDs []int) *seq {
	s := &seq{
		ctx: ctx, req: req, choice: choice, scores: first && req.Echo && req.Logprobs, prompt: prompt, model: m, rs: rs,
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
	if s.closing != nil {
		return s.closing[s.fed]
	}
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
			if s.scores {
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
	s.rs.push(ev, final && !s.held)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func (s *seq) finish(reason FinishReason) {
	s.finishReason = reason
	s.finished = true
	s.held = s.req.SaveState && s.canSave
	s.emit(true)
}

// read returns the tokens the sequence has read: its prompt's, then its
// answer's.
func (s *seq) read() []int {
	if s.fed <= len(s.prompt) {
		return s.prompt[:s.fed]
	}
	return append(slices.Clip(s.prompt), s.generated[:s.fed-len(s.prompt)]...)
}

// release counts a held sequence finished.
func (s *seq) release() {
	if s.held {
		s.held = false
		s.rs.drop(1)
	}
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
		s.release() // a turn being closed: the answer stands, without its state
		return
	}
	s.err = err
	s.finished = true
	s.rs.push(Event{Choice: s.choice}, true)
}
