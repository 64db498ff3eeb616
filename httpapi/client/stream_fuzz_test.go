package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// streamTransport answers every request with body as a 200 event stream.
type streamTransport []byte

func (b streamTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(b)), Request: r}, nil
}

// events reads every event's data until the reader stops, and the error
// it stopped with.
func events(b []byte) ([]string, error) {
	r := newEventReader(bytes.NewReader(b))
	var out []string
	for {
		data, err := r.next()
		if err != nil {
			return out, err
		}
		out = append(out, string(data))
	}
}

// FuzzEventStream feeds any bytes to the client as a server's event
// stream. The reader never panics and stops at the end of the input;
// what it reads, written out again as events, reads back the same; and a
// stream through ChatCompletionStream yields chunks until [DONE] or ends
// with one error, of a kind the documentation names.
func FuzzEventStream(f *testing.F) {
	for _, s := range []string{
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
		"data: {\"id\":\"c1\",\"choices\":[]}\r\n\r\n: keep-alive\r\n\r\ndata: [DONE]\r\n\r\n",
		"event: x\nid: 1\nretry: 10\ndata:a\ndata: b\ndata\n\n",
		"data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\",\"code\":\"overloaded\"}}\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {\"choi",
		"data: [1,2]\n\n", "data: \n\n", ":\n\n\n", "data:\r\r\n\n", "\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := events(raw)
		if err == nil {
			t.Fatal("the reader stopped without an error")
		}
		if len(got) > len(raw) {
			t.Fatalf("%d events from %d bytes", len(got), len(raw))
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			var again bytes.Buffer
			for _, ev := range got {
				for line := range strings.SplitSeq(ev, "\n") {
					again.WriteString("data: " + line + "\r\n")
				}
				again.WriteString("\r\n")
			}
			back, err := events(again.Bytes())
			if err != io.EOF || !slices.Equal(back, got) {
				t.Fatalf("events %q written out read back as %q (%v)", got, back, err)
			}
		}

		c, err := New("http://neuro.invalid", &Options{HTTPClient: &http.Client{Transport: streamTransport(raw)}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for chunk, err := range c.ChatCompletionStream(context.Background(), &ChatCompletionRequest{Model: "m"}) {
			n++
			if n > len(raw)+1 {
				t.Fatalf("%d items from %d bytes", n, len(raw))
			}
			if err == nil {
				if chunk == nil {
					t.Fatal("a nil chunk without an error")
				}
				continue
			}
			var api *APIError
			var re *ResponseError
			if !errors.Is(err, ErrStreamTruncated) && !errors.As(err, &api) && !errors.As(err, &re) && !strings.HasPrefix(err.Error(), "client: ") {
				t.Fatalf("an error of no documented kind: %v", err)
			}
		}
	})
}
