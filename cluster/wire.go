package cluster

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"strings"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime"
)

// What travels between nodes: gob, one message per call, per event and
// per result. Not JSON: a token's text may be part of a UTF-8 sequence,
// which JSON would replace with U+FFFD; gob keeps strings' bytes. A call is answered at once with an accept (or the reason
// it is refused); its events, pings and final result then go to the
// caller's inbox.

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

func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(v)
	return b.Bytes(), err
}

func decode(data []byte, v any) error { return gob.NewDecoder(bytes.NewReader(data)).Decode(v) }
