package client

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/neuro-go/neuro/httpapi/wire"
)

// APIError is an error the server sent: the {"error":{...}} body of a
// failed response, or an error event in the middle of a stream.
type APIError struct {
	// StatusCode is the HTTP status of the response. For an error that
	// arrived as an event of a stream it is that stream's status, 200,
	// and MidStream is set.
	StatusCode int
	// Type, Code, Param and Message are the error body's fields; Code and
	// Param are empty when the server sent null.
	Type    string
	Code    string
	Param   string
	Message string
	// RequestID is the response's x-request-id, to quote in a report.
	RequestID string
	// RetryAfter is the wait the server asked for (Retry-After), or 0.
	RetryAfter time.Duration
	// MidStream is set when the error ended a stream that had started.
	MidStream bool
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("client: ")
	if e.MidStream {
		b.WriteString("stream error")
	} else {
		b.WriteString(strconv.Itoa(e.StatusCode))
	}
	if e.Code != "" {
		b.WriteString(" ")
		b.WriteString(e.Code)
	} else if e.Type != "" {
		b.WriteString(" ")
		b.WriteString(e.Type)
	}
	if e.Param != "" {
		b.WriteString(" (param ")
		b.WriteString(e.Param)
		b.WriteString(")")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" [request ")
		b.WriteString(e.RequestID)
		b.WriteString("]")
	}
	return b.String()
}

// Is lets errors.Is match an *APIError against the sentinels below, so
// that callers can branch without naming the type.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized || e.Type == "authentication_error"
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound || e.Type == "not_found_error"
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests || e.Type == "rate_limit_error"
	case ErrOverloaded:
		return e.StatusCode == http.StatusServiceUnavailable || e.Code == "overloaded"
	case ErrInvalidRequest:
		return e.StatusCode >= 400 && e.StatusCode < 500 && e.Type == "invalid_request_error" ||
			e.MidStream && e.Type == "invalid_request_error"
	case ErrServer:
		return e.StatusCode >= 500 || e.Type == "server_error"
	}
	return false
}

// Conditions an *APIError matches with errors.Is.
var (
	// ErrUnauthorized: 401, a missing or wrong API key.
	ErrUnauthorized = errors.New("client: unauthorized")
	// ErrNotFound: 404, an unknown model, deployment or route.
	ErrNotFound = errors.New("client: not found")
	// ErrRateLimited: 429, the key's rate or concurrency limit.
	ErrRateLimited = errors.New("client: rate limited")
	// ErrOverloaded: 503, a full queue or an unavailable device.
	ErrOverloaded = errors.New("client: overloaded")
	// ErrInvalidRequest: a 4xx invalid_request_error (400, 405, 413, 415,
	// 422); Param names the field at fault where the server knows it.
	ErrInvalidRequest = errors.New("client: invalid request")
	// ErrServer: a 5xx or a server_error.
	ErrServer = errors.New("client: server error")
)

// ErrStreamTruncated is wrapped by the error a stream yields when the
// connection ends before "data: [DONE]".
var ErrStreamTruncated = errors.New("client: stream ended before [DONE]")

// IsUnauthorized reports whether err is a 401 from the server.
func IsUnauthorized(err error) bool { return errors.Is(err, ErrUnauthorized) }

// IsNotFound reports whether err is a 404 from the server.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsRateLimited reports whether err is a 429 from the server.
func IsRateLimited(err error) bool { return errors.Is(err, ErrRateLimited) }

// IsOverloaded reports whether err is a 503 (overloaded) from the server.
func IsOverloaded(err error) bool { return errors.Is(err, ErrOverloaded) }

// IsInvalidRequest reports whether err is an invalid_request_error.
func IsInvalidRequest(err error) bool { return errors.Is(err, ErrInvalidRequest) }

// apiError is the error b says, in a response of status with headers h.
func apiError(b *wire.ErrorBody, status int, h http.Header) *APIError {
	e := &APIError{StatusCode: status, Type: b.Type, Message: b.Message}
	if b.Param != nil {
		e.Param = *b.Param
	}
	if b.Code != nil {
		e.Code = *b.Code
	}
	if h != nil {
		e.RequestID = h.Get("X-Request-Id")
		e.RetryAfter = parseRetryAfter(h.Get("Retry-After"))
	}
	return e
}

// parseRetryAfter reads delay-seconds or an HTTP date; anything else is 0.
func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
		if s < 0 || s > 1<<31 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// ResponseError is a response that is neither what was asked for nor an
// error body the server would write: a proxy's HTML page, a truncated
// body, a 200 that is not JSON.
type ResponseError struct {
	StatusCode  int
	ContentType string
	RequestID   string
	// Body is the start of the response, at most 512 bytes.
	Body string
	Err  error
}

func (e *ResponseError) Error() string {
	msg := fmt.Sprintf("client: unexpected response %d (%s)", e.StatusCode, e.ContentType)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Body != "" {
		msg += ": " + strconv.Quote(e.Body)
	}
	return msg
}

func (e *ResponseError) Unwrap() error { return e.Err }
