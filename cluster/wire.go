package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime"
)

// What travels between nodes: JSON, one message per call, per event and
// per result. A call is answered at once with an accept (or the reason it
// is refused); its events and final result then go to the caller's
// inbox. A reply's texts travel as bytes (base64), since a token's text
// may be part of a UTF-8 sequence that a JSON string would replace with
// U+FFFD, and its numbers as numbers or, where JSON has none (a
// log-probability of minus infinity), as the strings "-Inf", "+Inf" and
// "NaN".

// call is a request for a deployment another node serves.
type call struct {
	Kind  string              `json:"kind"` // "gen" or "run"
	Inbox string              `json:"inbox"`
	Gen   *runtime.Request    `json:"gen,omitempty"`
	Run   *runtime.RunRequest `json:"run,omitempty"`
	// Stream asks for the events of a generation as they happen.
	Stream bool `json:"stream,omitempty"`
}

// accept answers a call: Err is set when the node will not take it.
type accept struct {
	Node string   `json:"node"`
	Err  *wireErr `json:"err,omitempty"`
	// Gone says this node stopped serving the deployment a moment ago
	// (it moved): the caller tries again.
	Gone bool `json:"gone,omitempty"`
}

// reply is one message to a caller's inbox.
type reply struct {
	Event  *runtime.Event     `json:"ev,omitempty"`
	Result *runtime.Result    `json:"res,omitempty"`
	Run    *runtime.RunResult `json:"run,omitempty"`
	Err    *wireErr           `json:"err,omitempty"`
	// Done marks the last message of a call.
	Done bool `json:"done,omitempty"`
}

// wireErr is an error as it crosses the wire: its text, and the
// sentinel it wraps by name, so that the caller's node maps it to the
// same HTTP status as the serving node would have.
type wireErr struct {
	Code  string `json:"code,omitempty"`
	Param string `json:"param,omitempty"`
	Msg   string `json:"msg"`
}

var sentinels = []struct {
	code string
	err  error
}{
	{"model_not_found", runtime.ErrModelNotFound},
	{"deployment_not_found", runtime.ErrDeploymentNotFound},
	{"not_language_model", runtime.ErrNotLanguageModel},
	{"not_network", runtime.ErrNotNetwork},
	{"overloaded", runtime.ErrOverloaded},
	{"device_unavailable", runtime.ErrDeviceUnavailable},
	{"context_length", runtime.ErrContextLength},
	{"closed", runtime.ErrClosed},
	{"duplicate", runtime.ErrDuplicate},
	{"quota", runtime.ErrQuota},
	{"permission", runtime.ErrPermission},
	{"in_use", runtime.ErrInUse},
	{"unsupported", compile.ErrUnsupported},
	{"invalid", runtime.ErrInvalidRequest},
	{"deadline", context.DeadlineExceeded},
	{"canceled", context.Canceled},
}

func toWire(err error) *wireErr {
	if err == nil {
		return nil
	}
	var pe *runtime.ParamError
	if errors.As(err, &pe) {
		return &wireErr{Code: "param", Param: pe.Param, Msg: pe.Msg}
	}
	w := &wireErr{Msg: err.Error()}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			w.Code = s.code
			break
		}
	}
	return w
}

// remoteError is an error another node returned: its text, wrapping the
// same sentinel.
type remoteError struct {
	msg      string
	sentinel error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }

func (w *wireErr) err() error {
	if w == nil {
		return nil
	}
	if w.Code == "param" {
		return &runtime.ParamError{Param: w.Param, Msg: w.Msg}
	}
	for _, s := range sentinels {
		if s.code == w.Code {
			return &remoteError{w.Msg, s.err}
		}
	}
	return &remoteError{msg: w.Msg}
}

// token turns a deployment id into one subject token: ids may hold '.',
// which separates tokens, and never '~'.
func token(id string) string { return strings.ReplaceAll(id, ".", "~") }

func encode(v any) ([]byte, error) { return json.Marshal(v) }

func decode(data []byte, v any) error { return json.Unmarshal(data, v) }

// replyMsg is a reply as it travels.
type replyMsg struct {
	Event  *eventMsg     `json:"ev,omitempty"`
	Result *resultMsg    `json:"res,omitempty"`
	Run    *runResultMsg `json:"run,omitempty"`
	Err    *wireErr      `json:"err,omitempty"`
	Done   bool          `json:"done,omitempty"`
}

func (r reply) MarshalJSON() ([]byte, error) {
	m := replyMsg{Err: r.Err, Done: r.Done}
	if e := r.Event; e != nil {
		m.Event = &eventMsg{Choice: e.Choice, Text: []byte(e.Text), Logprobs: logprobsMsg(e.Logprobs), Finish: e.FinishReason, Activity: e.Activity}
	}
	if res := r.Result; res != nil {
		rm := &resultMsg{Model: res.Model, Deployment: res.Deployment, Usage: res.Usage, PromptTokens: res.PromptTokens,
			PromptLogprobs: logprobsMsg(res.PromptLogprobs), Stats: res.Stats, State: res.State}
		for _, c := range res.Choices {
			rm.Choices = append(rm.Choices, choiceMsg{Index: c.Index, Text: []byte(c.Text), Tokens: c.Tokens, Logprobs: logprobsMsg(c.Logprobs), Finish: c.FinishReason})
		}
		for _, p := range res.Prompts {
			rm.Prompts = append(rm.Prompts, promptMsg{Tokens: p.Tokens, Logprobs: logprobsMsg(p.Logprobs)})
		}
		m.Result = rm
	}
	if run := r.Run; run != nil {
		rm := &runResultMsg{Model: run.Model, Deployment: run.Deployment, Usage: run.Usage, Warnings: run.Warnings}
		for _, o := range run.Outputs {
			om := runOutputMsg{SpikeCounts: o.SpikeCounts, Prediction: o.Prediction, FinalState: o.FinalState, Spikes: o.Spikes}
			for _, row := range o.Membrane {
				om.Membrane = append(om.Membrane, row)
			}
			rm.Outputs = append(rm.Outputs, om)
		}
		m.Run = rm
	}
	return json.Marshal(&m)
}

func (r *reply) UnmarshalJSON(b []byte) error {
	var m replyMsg
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*r = reply{Err: m.Err, Done: m.Done}
	if e := m.Event; e != nil {
		r.Event = &runtime.Event{Choice: e.Choice, Text: string(e.Text), Logprobs: logprobsOf(e.Logprobs), FinishReason: e.Finish, Activity: e.Activity}
	}
	if rm := m.Result; rm != nil {
		res := &runtime.Result{Model: rm.Model, Deployment: rm.Deployment, Usage: rm.Usage, PromptTokens: rm.PromptTokens,
			PromptLogprobs: logprobsOf(rm.PromptLogprobs), Stats: rm.Stats, State: rm.State}
		for _, c := range rm.Choices {
			res.Choices = append(res.Choices, runtime.Choice{Index: c.Index, Text: string(c.Text), Tokens: c.Tokens, Logprobs: logprobsOf(c.Logprobs), FinishReason: c.Finish})
		}
		for _, p := range rm.Prompts {
			res.Prompts = append(res.Prompts, runtime.PromptResult{Tokens: p.Tokens, Logprobs: logprobsOf(p.Logprobs)})
		}
		r.Result = res
	}
	if rm := m.Run; rm != nil {
		run := &runtime.RunResult{Model: rm.Model, Deployment: rm.Deployment, Usage: rm.Usage, Warnings: rm.Warnings}
		for _, o := range rm.Outputs {
			ro := runtime.RunOutput{SpikeCounts: o.SpikeCounts, Prediction: o.Prediction, FinalState: o.FinalState, Spikes: o.Spikes}
			for _, row := range o.Membrane {
				ro.Membrane = append(ro.Membrane, row)
			}
			run.Outputs = append(run.Outputs, ro)
		}
		r.Run = run
	}
	return nil
}

type eventMsg struct {
	Choice   int                     `json:"c,omitempty"`
	Text     []byte                  `json:"t,omitempty"`
	Logprobs []logprobMsg            `json:"lp,omitempty"`
	Finish   runtime.FinishReason    `json:"f,omitempty"`
	Activity []runtime.LayerActivity `json:"a,omitempty"`
}

type logprobMsg struct {
	Token   int          `json:"id"`
	Text    []byte       `json:"t"`
	Logprob number       `json:"lp"`
	Top     []logprobMsg `json:"top,omitempty"`
}

type resultMsg struct {
	Model          string         `json:"model"`
	Deployment     string         `json:"deployment"`
	Choices        []choiceMsg    `json:"choices"`
	Usage          runtime.Usage  `json:"usage"`
	PromptTokens   []int          `json:"prompt_tokens,omitempty"`
	PromptLogprobs []logprobMsg   `json:"prompt_logprobs,omitempty"`
	Prompts        []promptMsg    `json:"prompts,omitempty"`
	Stats          runtime.Stats  `json:"stats"`
	State          *runtime.State `json:"state,omitempty"`
}

type choiceMsg struct {
	Index    int                  `json:"index"`
	Text     []byte               `json:"text"`
	Tokens   []int                `json:"tokens"`
	Logprobs []logprobMsg         `json:"logprobs,omitempty"`
	Finish   runtime.FinishReason `json:"finish"`
}

type promptMsg struct {
	Tokens   []int        `json:"tokens"`
	Logprobs []logprobMsg `json:"logprobs,omitempty"`
}

type runResultMsg struct {
	Model      string           `json:"model"`
	Deployment string           `json:"deployment"`
	Outputs    []runOutputMsg   `json:"outputs"`
	Usage      runtime.RunUsage `json:"usage"`
	Warnings   []string         `json:"warnings,omitempty"`
}

type runOutputMsg struct {
	SpikeCounts numbers32            `json:"counts"`
	Prediction  int                  `json:"prediction"`
	FinalState  numbers32            `json:"final"`
	Spikes      []runtime.SpikeEvent `json:"spikes,omitempty"`
	Membrane    []numbers32          `json:"membrane,omitempty"`
}

func logprobsMsg(lps []runtime.TokenLogprob) []logprobMsg {
	if lps == nil {
		return nil
	}
	out := make([]logprobMsg, len(lps))
	for i, lp := range lps {
		out[i] = logprobMsg{Token: lp.Token, Text: []byte(lp.Text), Logprob: number(lp.Logprob), Top: logprobsMsg(lp.Top)}
	}
	return out
}

func logprobsOf(lps []logprobMsg) []runtime.TokenLogprob {
	if lps == nil {
		return nil
	}
	out := make([]runtime.TokenLogprob, len(lps))
	for i, lp := range lps {
		out[i] = runtime.TokenLogprob{Token: lp.Token, Text: string(lp.Text), Logprob: float64(lp.Logprob), Top: logprobsOf(lp.Top)}
	}
	return out
}

// number is a float64 that JSON can always hold: infinities and NaN are
// the strings "+Inf", "-Inf" and "NaN".
type number float64

func (f number) MarshalJSON() ([]byte, error) { return appendNumber(nil, float64(f), 64), nil }

func (f *number) UnmarshalJSON(b []byte) error {
	v, err := parseNumber(b, 64)
	*f = number(v)
	return err
}

// numbers32 is a []float32 that JSON can always hold (as number does).
type numbers32 []float32

func (s numbers32) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	b := []byte{'['}
	for i, f := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNumber(b, float64(f), 32)
	}
	return append(b, ']'), nil
}

func (s *numbers32) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*s = nil
		return nil
	}
	out := make(numbers32, len(raw))
	for i, r := range raw {
		v, err := parseNumber(r, 32)
		if err != nil {
			return err
		}
		out[i] = float32(v)
	}
	*s = out
	return nil
}

func appendNumber(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"+Inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Inf"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

func parseNumber(b []byte, bits int) (float64, error) {
	switch string(b) {
	case `"NaN"`:
		return math.NaN(), nil
	case `"+Inf"`:
		return math.Inf(1), nil
	case `"-Inf"`:
		return math.Inf(-1), nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return 0, err
	}
	if bits == 32 {
		f = float64(float32(f))
	}
	return f, nil
}
