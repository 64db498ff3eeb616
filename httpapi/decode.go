package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/tokenizer"
)

// readBody reads a request body of at most limit bytes. A declared
// Content-Length over the limit is refused before reading; an undeclared
// one is cut off by http.MaxBytesReader as it streams in, so a huge body
// is never held in memory.
//
// The read also has a deadline that moves with the data: a client gets
// Options.BodyReadTimeout for the first bytes and must then keep up
// Options.MinBodyRate on average, so that a body trickled a byte at a
// time cannot hold a goroutine and a connection for minutes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *Error) {
	return s.readBodyHeld(w, r, limit, 0, nil)
}

// readBodyHeld is readBody for a caller that holds memory for held
// bytes of the body (the run endpoint reserves its declared length):
// once the first 64 KiB have come, the buffer takes the rest of them at
// once, instead of doubling its way there, which allocates, clears and
// copies a body of megabytes about twice over.
//
// A caller that reserves memory as the body arrives passes reserve
// instead: it is called with the buffer's capacity before each
// allocation, so that an upload holds what it has sent, not what it
// declares, and its error ends the read.
func (s *Server) readBodyHeld(w http.ResponseWriter, r *http.Request, limit, held int64, reserve func(capacity int64) *Error) ([]byte, *Error) {
	if r.ContentLength > limit {
		abandonBody(w)
		return nil, tooLarge(limit)
	}
	body := io.Reader(http.MaxBytesReader(w, r.Body, limit))
	rc := http.NewResponseController(w)
	start := time.Now() // the connection's clock, not Options.Now
	deadline := func(read int) time.Time {
		return start.Add(s.opts.BodyReadTimeout + time.Duration(float64(read)/float64(s.opts.MinBodyRate)*float64(time.Second)))
	}
	canDeadline := rc.SetReadDeadline(deadline(0)) == nil
	done := false
	if canDeadline {
		defer func() {
			if done {
				rc.SetReadDeadline(time.Time{})
			} else {
				abandonBody(w) // an error left the body unread
			}
		}()
	}
	n := r.ContentLength
	if n < 0 || n > 64<<10 {
		n = 512
	}
	if reserve != nil {
		if e := reserve(n + 1); e != nil {
			return nil, e
		}
	}
	buf := make([]byte, 0, n+1)
	for {
		if len(buf) == cap(buf) {
			// Doubling: append grows a large slice by a quarter, which
			// copies a body of megabytes a dozen times.
			more := len(buf)
			if rest := held + 1 - int64(len(buf)); len(buf) >= 64<<10 && rest > int64(more) {
				more = int(rest) // + 1: room to find the end
			}
			if reserve != nil {
				if e := reserve(int64(len(buf) + more)); e != nil {
					return nil, e
				}
			}
			buf = slices.Grow(buf, more)
		}
		m, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			var ne interface{ Timeout() bool }
			switch {
			case errors.As(err, &mbe):
				return nil, tooLarge(limit)
			case errors.As(err, &ne) && ne.Timeout():
				return nil, &Error{Status: http.StatusRequestTimeout, Type: typeInvalidRequest, Code: "request_timeout",
					Message: fmt.Sprintf("the request body came too slowly: %d bytes in %v (the server expects the first bytes within %v, then %d bytes/s)",
						len(buf), time.Since(start).Round(time.Millisecond), s.opts.BodyReadTimeout, s.opts.MinBodyRate)}
			}
			return nil, invalid("", "invalid_body", "reading the request body: %v", err)
		}
		if canDeadline && m > 0 {
			rc.SetReadDeadline(deadline(len(buf)))
		}
	}
	done = true
	if len(buf) == 0 {
		return nil, invalid("", "missing_body", "the request body is empty; send a JSON object")
	}
	if !utf8.Valid(buf) {
		return nil, invalid("", "invalid_json", "the request body is not valid UTF-8")
	}
	return buf, nil
}

// decodeObject unmarshals a JSON object into v, turning every failure
// into a 400 (syntax errors, nesting beyond encoding/json's depth limit,
// a top level that is not an object).
func decodeObject(b []byte, v any) *Error {
	err := json.Unmarshal(b, v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return invalid("", "invalid_json", "malformed JSON at byte %d: %s", se.Offset, se.Error())
	case errors.As(err, &te) && te.Field == "":
		return invalid("", "invalid_json", "the request body must be a JSON object, not %s", te.Value)
	case errors.As(err, &te):
		return invalid(te.Field, "invalid_type", "%s must not be %s", te.Field, te.Value)
	}
	return invalid("", "invalid_json", "malformed JSON: %v", err)
}

// The field parsers below take a field's raw JSON (nil when absent) and
// return a 400 naming the field when its type or range is wrong. JSON null
// is the same as absent.

func absent(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

func kindOf(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func parseString(raw json.RawMessage, param string) (string, *Error) {
	if absent(raw) {
		return "", nil
	}
	if raw[0] != '"' {
		return "", invalid(param, "invalid_type", "%s must be a string, not %s", param, kindOf(raw))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalid(param, "invalid_type", "%s must be a string", param)
	}
	return s, nil
}

func parseBool(raw json.RawMessage, param string) (bool, *Error) {
	switch string(raw) {
	case "", "null", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, invalid(param, "invalid_type", "%s must be a boolean, not %s", param, kindOf(raw))
}

// parseNumber returns def when absent.
func parseNumber(raw json.RawMessage, param string, lo, hi, def float64) (float64, *Error) {
	if absent(raw) {
		return def, nil
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, invalid(param, "invalid_type", "%s must be a number, not %s", param, kindOf(raw))
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, invalid(param, "invalid_value", "%s: %s is out of range [%g, %g]", param, raw, lo, hi)
	}
	if f < lo || f > hi {
		return 0, invalid(param, "invalid_value", "%s: %g is out of range [%g, %g]", param, f, lo, hi)
	}
	return f, nil
}

// parseInt accepts integers (and numbers with a zero fraction, such as 5.0,
// which some clients write); set is false when absent.
func parseInt(raw json.RawMessage, param string, lo, hi int64) (v int64, set bool, e *Error) {
	if absent(raw) {
		return 0, false, nil
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, false, invalid(param, "invalid_type", "%s must be an integer, not %s", param, kindOf(raw))
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		v = n
	} else {
		f, ferr := strconv.ParseFloat(string(raw), 64)
		switch {
		case ferr == nil && f != math.Trunc(f):
			return 0, false, invalid(param, "invalid_type", "%s must be an integer, not %s", param, raw)
		case ferr != nil || f < math.MinInt64 || f >= math.MaxInt64:
			return 0, false, invalid(param, "invalid_value", "%s: %s is out of range [%d, %d]", param, raw, lo, hi)
		}
		v = int64(f)
	}
	if v < lo || v > hi {
		return 0, false, invalid(param, "invalid_value", "%s: %d is out of range [%d, %d]", param, v, lo, hi)
	}
	return v, true, nil
}

// parseStop accepts a string or an array of at most runtime.MaxStops
// non-empty strings.
func parseStop(raw json.RawMessage) ([]string, *Error) {
	if absent(raw) {
		return nil, nil
	}
	var stops []string
	switch raw[0] {
	case '"':
		s, e := parseString(raw, "stop")
		if e != nil {
			return nil, e
		}
		stops = []string{s}
	case '[':
		if err := json.Unmarshal(raw, &stops); err != nil {
			return nil, invalid("stop", "invalid_type", "stop must be a string or an array of strings")
		}
		if len(stops) > runtime.MaxStops {
			return nil, invalid("stop", "invalid_value", "stop: %d sequences, at most %d", len(stops), runtime.MaxStops)
		}
	default:
		return nil, invalid("stop", "invalid_type", "stop must be a string or an array of strings, not %s", kindOf(raw))
	}
	for _, s := range stops {
		if s == "" {
			return nil, invalid("stop", "invalid_value", "stop: empty stop sequence")
		}
	}
	return stops, nil
}

// parseLogitBias accepts {"token id": bias in [-runtime.MaxLogitBias,
// runtime.MaxLogitBias]}.
func parseLogitBias(raw json.RawMessage) (map[int]float64, *Error) {
	if absent(raw) {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, invalid("logit_bias", "invalid_type", "logit_bias must be an object mapping token ids to numbers, not %s", kindOf(raw))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, invalid("logit_bias", "invalid_type", "logit_bias must be an object mapping token ids to numbers")
	}
	out := make(map[int]float64, len(m))
	for k, v := range m {
		id, err := strconv.Atoi(k)
		if err != nil || id < 0 {
			return nil, invalid("logit_bias", "invalid_value", "logit_bias: key %q is not a token id", k)
		}
		b, e := parseNumber(v, "logit_bias", -runtime.MaxLogitBias, runtime.MaxLogitBias, 0)
		if e != nil {
			return nil, e
		}
		out[id] = b
	}
	return out, nil
}

var validRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true}

// parseMessages accepts an array of {role, content} with content a string
// or an array of text parts (joined).
func parseMessages(raw json.RawMessage) ([]tokenizer.Message, *Error) {
	if absent(raw) {
		return nil, invalid("messages", "missing_field", "messages is required")
	}
	if raw[0] != '[' {
		return nil, invalid("messages", "invalid_type", "messages must be an array, not %s", kindOf(raw))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalid("messages", "invalid_type", "messages must be an array of objects")
	}
	if len(items) == 0 {
		return nil, invalid("messages", "invalid_value", "messages must hold at least one message")
	}
	out := make([]tokenizer.Message, len(items))
	for i, it := range items {
		p := "messages[" + strconv.Itoa(i) + "]"
		if len(it) == 0 || it[0] != '{' {
			return nil, invalid(p, "invalid_type", "%s must be an object, not %s", p, kindOf(it))
		}
		var m struct {
			Role    json.RawMessage `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(it, &m); err != nil {
			return nil, invalid(p, "invalid_type", "%s must be an object with role and content", p)
		}
		role, e := parseString(m.Role, p+".role")
		if e != nil {
			return nil, e
		}
		if role == "" {
			return nil, invalid(p+".role", "missing_field", "%s.role is required", p)
		}
		if !validRoles[role] {
			return nil, invalid(p+".role", "invalid_value", "%s.role %q is not one of system, developer, user, assistant", p, role)
		}
		content, e := parseContent(m.Content, p+".content", role)
		if e != nil {
			return nil, e
		}
		out[i] = tokenizer.Message{Role: role, Content: content}
	}
	return out, nil
}

func parseContent(raw json.RawMessage, param, role string) (string, *Error) {
	if absent(raw) {
		if role == "assistant" { // an assistant turn that only called tools
			return "", nil
		}
		return "", invalid(param, "missing_field", "%s is required", param)
	}
	return joinText(raw, param, chatParts)
}

// textParts are the content parts an endpoint takes, and the error code
// of any other.
type textParts struct {
	types []string // the first is named in the error
	code  string
}

var (
	chatParts     = textParts{[]string{"text"}, "invalid_value"}
	responseParts = textParts{[]string{"input_text", "output_text", "text"}, "unsupported_parameter"}
)

// joinText reads content that is a string or an array of text parts of
// the types allowed, and joins the parts' texts.
func joinText(raw json.RawMessage, param string, allowed textParts) (string, *Error) {
	switch raw[0] {
	case '"':
		return parseString(raw, param)
	case '[':
		var parts []struct {
			Type json.RawMessage `json:"type"`
			Text json.RawMessage `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", invalid(param, "invalid_type", "%s must be a string or an array of text parts", param)
		}
		var sb strings.Builder
		for j, part := range parts {
			pp := param + "[" + strconv.Itoa(j) + "]"
			typ, e := parseString(part.Type, pp+".type")
			if e != nil {
				return "", e
			}
			if !slices.Contains(allowed.types, typ) {
				return "", invalid(pp+".type", allowed.code, "%s.type %q is not supported; only text parts (%s) are", pp, typ, allowed.types[0])
			}
			text, e := parseString(part.Text, pp+".text")
			if e != nil {
				return "", e
			}
			sb.WriteString(text)
		}
		return sb.String(), nil
	}
	return "", invalid(param, "invalid_type", "%s must be a string or an array of text parts, not %s", param, kindOf(raw))
}

// parsePrompt accepts a string, a non-empty array of at most maxPrompts
// strings, an array of token ids, or an array of at most maxPrompts
// arrays of token ids, as the OpenAI API does. Prompts of token ids come
// back as tokens, and are checked against the model's vocabulary by the
// runtime.
func parsePrompt(raw json.RawMessage) ([]string, [][]int, *Error) {
	const maxPrompts = 16
	const want = "prompt must be a string, an array of strings, an array of token ids or an array of arrays of token ids"
	if absent(raw) {
		return nil, nil, invalid("prompt", "missing_field", "prompt is required")
	}
	switch raw[0] {
	case '"':
		s, e := parseString(raw, "prompt")
		return []string{s}, nil, e
	case '[':
		var ps []string
		var ids []int
		var idss [][]int
		switch {
		case json.Unmarshal(raw, &ps) == nil:
		case json.Unmarshal(raw, &ids) == nil:
			idss = [][]int{ids}
		case json.Unmarshal(raw, &idss) == nil:
		default:
			return nil, nil, invalid("prompt", "invalid_type", "%s (token ids are integers)", want)
		}
		if n := max(len(ps), len(idss)); n == 0 || n > maxPrompts {
			return nil, nil, invalid("prompt", "invalid_value", "prompt: %d prompts, want 1 to %d", n, maxPrompts)
		}
		return ps, idss, nil
	}
	return nil, nil, invalid("prompt", "invalid_type", "%s, not %s", want, kindOf(raw))
}
