package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

// sse writes one stream. Chunks are built by appending to one reused
// buffer, so a streamed token allocates nothing here.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	now     func() time.Time
	chat    bool
	g       *genRequest
	prefix  []byte // `data: {"id":...,"model":...,"choices":[`
	buf     []byte
	started bool
	err     error // the first write error: the reader has gone or stalled
	offsets []int // text_offset per choice (text completions with logprobs)
}

var errStreamWrite = errors.New("httpapi: stream write failed")

func newSSE(w http.ResponseWriter, s *Server, g *genRequest, id string, created int64, model string) *sse {
	st := &sse{w: w, rc: http.NewResponseController(w), timeout: s.opts.StreamWriteTimeout, now: s.opts.Now, chat: g.chat, g: g, buf: make([]byte, 0, 512)}
	p := append(make([]byte, 0, 128), `data: {"id":`...)
	p = wire.AppendString(p, id)
	if g.chat {
		p = append(p, `,"object":"chat.completion.chunk","created":`...)
	} else {
		p = append(p, `,"object":"text_completion","created":`...)
	}
	p = strconv.AppendInt(p, created, 10)
	p = append(p, `,"model":`...)
	p = wire.AppendString(p, model)
	st.prefix = append(p, `,"choices":[`...)
	if !g.chat && g.logprobs {
		st.offsets = make([]int, len(g.prompts)*g.n)
	}
	return st
}

// start sends the headers and, for chat, each choice's role chunk.
func (st *sse) start() {
	if st.started {
		return
	}
	st.started = true
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	st.w.WriteHeader(http.StatusOK)
	if st.chat {
		for i := 0; i < st.g.n; i++ {
			b := append(st.buf[:0], st.prefix...)
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
			st.buf = b
			st.write(b, i == st.g.n-1)
		}
	} else {
		st.rc.Flush()
	}
}

// write sends b, flushing when flush is set, under the per-write deadline.
func (st *sse) write(b []byte, flush bool) {
	if st.err != nil {
		return
	}
	if st.timeout > 0 {
		if err := st.rc.SetWriteDeadline(st.now().Add(st.timeout)); err != nil {
			st.timeout = 0 // a writer without deadlines (a test recorder): stop asking
		}
	}
	if _, err := st.w.Write(b); err != nil {
		st.err = err
		return
	}
	if flush {
		if err := st.rc.Flush(); err != nil {
			st.err = err
		}
	}
}

// event sends one runtime event: a content chunk when it carries text or
// log-probabilities, then a finish chunk when it ends its choice.
func (st *sse) event(ev runtime.Event) error {
	st.start()
	idx := ev.Choice
	if ev.Text != "" || len(ev.Logprobs) > 0 || ev.Activity != nil {
		b := append(st.buf[:0], st.prefix...)
		if st.chat {
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(idx), 10)
			b = append(b, `,"delta":{"content":`...)
			b = wire.AppendString(b, ev.Text)
			b = append(b, `},"logprobs":`...)
			b = st.appendChatLogprobs(b, ev.Logprobs)
		} else {
			b = append(b, `{"text":`...)
			b = wire.AppendString(b, ev.Text)
			b = append(b, `,"index":`...)
			b = strconv.AppendInt(b, int64(idx), 10)
			b = append(b, `,"logprobs":`...)
			b = st.appendTextLogprobs(b, idx, ev.Logprobs)
		}
		b = append(b, `,"finish_reason":null}]`...)
		if st.g.activity {
			b = appendActivity(b, ev.Activity)
		}
		b = append(b, "}\n\n"...)
		st.buf = b
		st.write(b, ev.FinishReason == "")
	}
	if ev.FinishReason != "" {
		b := append(st.buf[:0], st.prefix...)
		if st.chat {
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(idx), 10)
			b = append(b, `,"delta":{},"logprobs":null,"finish_reason":`...)
		} else {
			b = append(b, `{"text":"","index":`...)
			b = strconv.AppendInt(b, int64(idx), 10)
			b = append(b, `,"logprobs":null,"finish_reason":`...)
		}
		b = wire.AppendString(b, string(ev.FinishReason))
		b = append(b, "}]}\n\n"...)
		st.buf = b
		st.write(b, true)
	}
	if st.err != nil {
		return errStreamWrite
	}
	return nil
}

// appendActivity appends the "neuro" extension of a content chunk:
// which neurons of each spiking layer fired for its tokens.
func appendActivity(b []byte, layers []runtime.LayerActivity) []byte {
	b = append(b, `,"neuro":{"activity":[`...)
	for k, l := range layers {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"layer":`...)
		b = wire.AppendString(b, l.Layer)
		b = append(b, `,"neurons":`...)
		b = strconv.AppendInt(b, int64(l.Neurons), 10)
		b = append(b, `,"spikes":[`...)
		for j, i := range l.Spikes {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(i), 10)
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}"...)
}

func (st *sse) appendChatLogprobs(b []byte, lps []runtime.TokenLogprob) []byte {
	if !st.g.logprobs {
		return append(b, "null"...)
	}
	b = append(b, `{"content":[`...)
	for i := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendChatTokenLogprob(b, &lps[i])
		b = b[:len(b)-1] // reopen the object for top_logprobs
		b = append(b, `,"top_logprobs":[`...)
		for j := range lps[i].Top {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendChatTokenLogprob(b, &lps[i].Top[j])
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}"...)
}

func appendChatTokenLogprob(b []byte, lp *runtime.TokenLogprob) []byte {
	b = append(b, `{"token":`...)
	b = wire.AppendString(b, lp.Text)
	b = append(b, `,"logprob":`...)
	b = wire.AppendFloat(b, lp.Logprob)
	b = append(b, `,"bytes":`...)
	b = wire.AppendBytes(b, lp.Text)
	return append(b, '}')
}

func (st *sse) appendTextLogprobs(b []byte, idx int, lps []runtime.TokenLogprob) []byte {
	if !st.g.logprobs {
		return append(b, "null"...)
	}
	b = append(b, `{"tokens":[`...)
	for i := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, lps[i].Text)
	}
	b = append(b, `],"token_logprobs":[`...)
	for i := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendFloat(b, lps[i].Logprob)
	}
	b = append(b, `],"top_logprobs":[`...)
	for i := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTopMap(b, lps[i].Top)
	}
	b = append(b, `],"text_offset":[`...)
	for i := range lps {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(st.offsets[idx]), 10)
		st.offsets[idx] += len(lps[i].Text)
	}
	return append(b, "]}"...)
}

// appendTopMap appends a token's alternatives as the legacy format's
// map, as encoding/json writes a map[string]float64: keys sorted, and of
// two alternatives with the same text the first (more likely) kept.
// There are at most runtime.MaxTopLogprobs of them, so a fixed array
// holds their order and nothing is allocated.
func appendTopMap(b []byte, top []runtime.TokenLogprob) []byte {
	var order [runtime.MaxTopLogprobs]int
	n := 0
	for j := range top {
		if n == len(order) {
			break
		}
		dup := false
		for _, k := range order[:n] {
			if top[k].Text == top[j].Text {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		// insertion sort by text
		k := n
		for k > 0 && top[order[k-1]].Text > top[j].Text {
			order[k] = order[k-1]
			k--
		}
		order[k] = j
		n++
	}
	b = append(b, '{')
	for i, j := range order[:n] {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, top[j].Text)
		b = append(b, ':')
		b = wire.AppendFloat(b, top[j].Logprob)
	}
	return append(b, '}')
}

// finish sends the usage chunk when asked for, then [DONE].
func (st *sse) finish(usage *wire.Usage) {
	st.start()
	if st.g.includeUsage {
		b := append(st.buf[:0], st.prefix...)
		b = append(b, `],"usage":{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(usage.PromptTokens), 10)
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(usage.CompletionTokens), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(usage.TotalTokens), 10)
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(usage.PromptTokensDetails.CachedTokens), 10)
		b = append(b, '}')
		n := usage.Neuromorphic
		b = append(b, `,"neuromorphic":{"timesteps":`...)
		b = strconv.AppendInt(b, n.Timesteps, 10)
		b = append(b, `,"spikes":`...)
		b = wire.AppendFloat(b, n.Spikes)
		b = append(b, `,"synaptic_ops":`...)
		b = wire.AppendFloat(b, n.SynapticOps)
		b = append(b, `,"energy_uj":`...)
		b = wire.AppendFloat(b, n.EnergyUJ)
		b = append(b, "}}}\n\n"...)
		st.buf = b
		st.write(b, false)
	}
	st.write([]byte("data: [DONE]\n\n"), true)
}

// fail ends a started stream with one error event.
func (st *sse) fail(e *Error) {
	st.write(appendErrorEvent(st.buf[:0], e), true)
}

func appendErrorEvent(b []byte, e *Error) []byte {
	b = append(b, "data: "...)
	b = appendErrorJSON(b, e)
	return append(b, "\n\n"...)
}

// stream serves a request with stream:true. Headers go out with the first
// event, so an error before any (a full queue, a prompt too long) is
// still an ordinary HTTP error.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, g *genRequest, m *runtime.Model, req *runtime.Request) {
	prefix := "cmpl-"
	if g.chat {
		prefix = "chatcmpl-"
	}
	st := newSSE(w, s, g, newID(prefix), s.opts.Now().Unix(), m.ID)
	ctx, cancel := s.streamContext(r)
	defer cancel()
	fn := st.event
	if g.echo && !g.chat {
		// Every choice's echoed prompt goes out with the first event.
		echoed := false
		fn = func(ev runtime.Event) error {
			if !echoed {
				echoed = true
				for p, prompt := range g.prompts {
					for c := 0; c < g.n; c++ {
						if err := st.event(runtime.Event{Choice: p*g.n + c, Text: prompt}); err != nil {
							return err
						}
					}
				}
			}
			return st.event(ev)
		}
	}
	var usage wire.Usage
	res, err := s.be.Generate(ctx, req, fn)
	if res != nil {
		s.observe(res)
		addUsage(&usage, res)
	}
	if err != nil {
		switch {
		case st.err != nil || r.Context().Err() != nil:
			// The reader is gone or stalled: nothing more can be sent.
		case !st.started:
			writeError(w, s.genError(r, err, g.chat))
		default:
			st.fail(s.genError(r, err, g.chat))
		}
		return
	}
	st.finish(&usage)
}
