package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"

	"github.com/neuro-go/neuro/httpapi/wire"
)

// maxEventBytes bounds one server-sent event: a chunk with many
// log-probabilities is a few kilobytes, so this is generous, and a broken
// server cannot make the client buffer without limit.
const maxEventBytes = 8 << 20

func errSeq[T any](err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yield(zero, err)
	}
}

// stream sends body to path and yields its events decoded as T. Leaving
// the loop early cancels the request, so the server sees the client go.
// The stream ends at [DONE], or, when last is not nil, after the event
// for which last reports true (the Responses API has no [DONE]); an end
// of input before it is ErrStreamTruncated.
func stream[T any](c *Client, ctx context.Context, path string, body any, last func(*T) bool) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		req, err := c.newRequest(ctx, http.MethodPost, path, nil, body)
		if err != nil {
			yield(nil, err)
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := c.send(req)
		if err != nil {
			yield(nil, err)
			return
		}
		// Closing the body of an unfinished response closes the
		// connection; the cancel above makes sure of it.
		defer resp.Body.Close()
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
			b, rerr := io.ReadAll(io.LimitReader(resp.Body, 512))
			if rerr == nil {
				rerr = errors.New("not an event stream")
			}
			yield(nil, responseError(resp, b, rerr))
			return
		}
		r := newEventReader(resp.Body)
		for {
			data, err := r.next()
			if err != nil {
				if ctx.Err() == nil && (err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF)) {
					err = fmt.Errorf("%w (request %s)", ErrStreamTruncated, resp.Header.Get("X-Request-Id"))
				} else {
					err = fmt.Errorf("client: reading stream: %w", err)
				}
				yield(nil, err)
				return
			}
			if bytes.Equal(data, doneEvent) {
				return
			}
			var ev wire.ErrorResponse
			// A chunk never has an "error" key (API.md), so an event that
			// has one is the server's last word.
			if bytes.Contains(data, errorKey) && json.Unmarshal(data, &ev) == nil && ev.Error != nil {
				e := apiError(ev.Error, resp.StatusCode, resp.Header)
				e.MidStream, e.RetryAfter = true, 0
				yield(nil, e)
				return
			}
			v := new(T)
			if err := json.Unmarshal(data, v); err != nil {
				yield(nil, responseError(resp, data, fmt.Errorf("decoding stream event: %w", err)))
				return
			}
			if !yield(v, nil) || (last != nil && last(v)) {
				return
			}
		}
	}
}

var (
	doneEvent = []byte("[DONE]")
	errorKey  = []byte(`"error"`)
)

// eventReader reads the data of server-sent events (the WHATWG
// EventSource format): "data:" lines are joined with newlines, a blank
// line ends an event, comments and other fields are skipped.
type eventReader struct {
	br   *bufio.Reader
	data []byte
	line []byte
}

func newEventReader(r io.Reader) *eventReader {
	return &eventReader{br: bufio.NewReaderSize(r, 16<<10)}
}

// next returns the data of the next event with data; the slice is valid
// until the following call. At the end of the input it returns io.EOF,
// or io.ErrUnexpectedEOF when an event was cut off.
func (r *eventReader) next() ([]byte, error) {
	r.data = r.data[:0]
	have := false
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && have {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if len(line) == 0 {
			if have {
				return r.data, nil
			}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		if string(field) != "data" {
			continue
		}
		if have {
			r.data = append(r.data, '\n')
		}
		if len(r.data)+len(value) > maxEventBytes {
			return nil, fmt.Errorf("client: event larger than %d bytes", maxEventBytes)
		}
		r.data = append(r.data, value...)
		have = true
	}
}

// readLine returns a line without its end, \n or \r\n. (The format
// also allows a lone \r as a line end; no server of this API sends one.)
func (r *eventReader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		r.line = append(r.line, frag...)
		if len(r.line) > maxEventBytes {
			return nil, fmt.Errorf("client: line longer than %d bytes", maxEventBytes)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(r.line) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line := r.line[:len(r.line)-1]
		return bytes.TrimSuffix(line, []byte("\r")), nil
	}
}
