package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

// Error types and codes of API.md's error table.
const (
	typeInvalidRequest = "invalid_request_error"
	typeAuthentication = "authentication_error"
	typeNotFound       = "not_found_error"
	typeRateLimit      = "rate_limit_error"
	typeServer         = "server_error"
)

// Error is an OpenAI-shaped API error: the one type every failure becomes
// before it is written, so that the body is always
// {"error":{"message","type","param","code"}}.
type Error struct {
	Status  int
	Type    string
	Code    string // "" is written as null
	Param   string // "" is written as null
	Message string
	// RetryAfter, when positive, is sent as the Retry-After header in
	// whole seconds (at least 1).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("httpapi: %d %s: %s", e.Status, e.Code, e.Message)
}

func invalid(param, code, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: param, Code: code, Message: fmt.Sprintf(format, args...)}
}

func notFound(code, format string, args ...any) *Error {
	return &Error{Status: http.StatusNotFound, Type: typeNotFound, Code: code, Message: fmt.Sprintf(format, args...)}
}

var (
	errMethod = &Error{Status: http.StatusMethodNotAllowed, Type: typeInvalidRequest, Code: "method_not_allowed"}
	errAuth   = &Error{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "invalid_api_key",
		Message: "missing or invalid API key: send it as \"Authorization: Bearer <key>\""}
	errQueryKey = &Error{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "invalid_api_key",
		Message: "API keys are not accepted in the query string (it ends up in logs); send \"Authorization: Bearer <key>\" instead"}
	errAuthTwice = &Error{Status: http.StatusUnauthorized, Type: typeAuthentication, Code: "invalid_api_key",
		Message: "the request has more than one Authorization header; send exactly one, \"Authorization: Bearer <key>\""}
	errInternal = &Error{Status: http.StatusInternalServerError, Type: typeServer, Code: "internal_error",
		Message: "the server hit a bug while handling this request; it has been logged and the server keeps serving"}
)

func tooLarge(limit int64) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Type: typeInvalidRequest, Code: "request_too_large",
		Message: fmt.Sprintf("request body is larger than the limit of %d bytes", limit)}
}

// writeError writes e as the response. It is the only place error bodies
// are built.
func writeError(w http.ResponseWriter, e *Error) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(retrySeconds(e.RetryAfter), 10))
	}
	w.WriteHeader(e.Status)
	w.Write(appendErrorJSON(make([]byte, 0, 128+len(e.Message)), e))
	w.Write([]byte{'\n'})
}

func retrySeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// appendErrorJSON appends {"error":{...}}: a wire.ErrorResponse.
func appendErrorJSON(b []byte, e *Error) []byte {
	return wire.AppendError(b, e.Message, e.Type, e.Param, e.Code)
}

// toError maps an error from the runtime, the compiler or the request
// into an API error. Unknown errors are internal errors.
func toError(err error) *Error {
	var ae *Error
	var pe *runtime.ParamError
	var ue *runtime.UnsupportedError
	var fe *runtime.FitError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &pe):
		return invalid(pe.Param, "invalid_value", "%s", pe.Msg)
	case errors.Is(err, runtime.ErrModelNotFound):
		return notFound("model_not_found", "%s", trimPrefix(err))
	case errors.Is(err, runtime.ErrDeploymentNotFound):
		return notFound("deployment_not_found", "%s", trimPrefix(err))
	case errors.Is(err, runtime.ErrQuota):
		return &Error{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "insufficient_quota", Message: trimPrefix(err)}
	case errors.Is(err, runtime.ErrPermission):
		return &Error{Status: http.StatusForbidden, Type: typeInvalidRequest, Code: "permission_denied", Message: trimPrefix(err)}
	case errors.Is(err, runtime.ErrInUse):
		return &Error{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "model_in_use", Message: trimPrefix(err)}
	case errors.Is(err, runtime.ErrNotNetwork):
		return invalid("", "not_a_network", "%s: use its chat/completions endpoint", trimPrefix(err))
	case errors.Is(err, runtime.ErrNotLanguageModel):
		return invalid("model", "not_a_language_model", "%s: only language models can serve completions", trimPrefix(err))
	case errors.Is(err, runtime.ErrContextLength):
		return invalid("messages", "context_length_exceeded", "%s", trimPrefix(err))
	case errors.Is(err, runtime.ErrInvalidRequest):
		return invalid("", "invalid_value", "%s", trimPrefix(err))
	case errors.Is(err, runtime.ErrOverloaded), errors.Is(err, runtime.ErrDeviceUnavailable), errors.Is(err, runtime.ErrClosed):
		return &Error{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "overloaded", Message: trimPrefix(err), RetryAfter: time.Second}
	case errors.As(err, &ue):
		return &Error{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "unsupported_model",
			Message: fmt.Sprintf("node %q: %s", ue.Node, ue.Reason)}
	case errors.As(err, &fe):
		return &Error{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "unsupported_model",
			Message: fmt.Sprintf("node %q does not fit %s: %s needs %d, has %d", fe.Node, fe.Target, fe.Limit, fe.Need, fe.Have)}
	case errors.Is(err, runtime.ErrUnsupported):
		return &Error{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "unsupported_model", Message: err.Error()}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "timeout", Message: "the request took too long", RetryAfter: time.Second}
	}
	return errInternal
}

// trimPrefix drops the "runtime: " of a runtime error: API users do not
// need the package name.
func trimPrefix(err error) string {
	s := err.Error()
	const p = "runtime: "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}
