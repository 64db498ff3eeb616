package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/neuro-go/neuro/httpapi/wire"
)

// Options configure a Client. The zero value works against a server that
// needs no key (only /health).
type Options struct {
	// APIKey is sent as "Authorization: Bearer <APIKey>" on every /v1
	// call. Default none.
	APIKey string
	// HTTPClient sends the requests. Default: a new http.Client over
	// http.DefaultTransport, with no overall timeout (streams may be
	// long; bound calls with their context).
	HTTPClient *http.Client
	// UserAgent is sent as User-Agent. Default DefaultUserAgent.
	UserAgent string
}

// DefaultUserAgent is the User-Agent of a Client whose Options set none.
const DefaultUserAgent = "neuro-go-client/1"

// maxErrorBody bounds how much of an error or unexpected response is
// read: a misbehaving proxy cannot make the client buffer without limit.
const maxErrorBody = 1 << 20

// Client calls one server. It is safe for concurrent use.
type Client struct {
	base *url.URL // the server root: /health and /v1/... resolve against it
	key  string
	hc   *http.Client
	ua   string
}

// New returns a client for the server at baseURL, the server's root
// ("http://127.0.0.1:8080") or, as the OpenAI clients take it, its /v1
// ("http://127.0.0.1:8080/v1"); a server mounted under a prefix is
// reached through that prefix ("https://example.com/neuro").
func New(baseURL string, opts *Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("client: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q: want http(s)://host[:port][/prefix]", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("client: base URL %q: no query, fragment or user info", baseURL)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.RawPath = ""
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	return &Client{base: u, key: o.APIKey, hc: o.HTTPClient, ua: o.UserAgent}, nil
}

// BaseURL is the server root the client calls.
func (c *Client) BaseURL() string { return c.base.String() }

// endpoint returns the URL of path (which starts with "/"), with segments
// already escaped by the caller.
func (c *Client) endpoint(path string, q url.Values) string {
	u := *c.base
	u.RawPath = c.base.EscapedPath() + path
	u.Path, _ = url.PathUnescape(u.RawPath) // escaped by this package: cannot fail
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// newRequest builds a request; body, when not nil, is marshalled as JSON.
func (c *Client) newRequest(ctx context.Context, method, path string, q url.Values, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		var b []byte
		var err error
		if a, ok := body.(interface{ AppendJSON([]byte) ([]byte, error) }); ok {
			b, err = a.AppendJSON(nil)
		} else {
			b, err = json.Marshal(body)
		}
		if err != nil {
			return nil, fmt.Errorf("client: encoding request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint(path, q), rd)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.ua)
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	return req, nil
}

// send performs req and returns the response when its status is 2xx;
// otherwise it reads the error body and returns it as an *APIError (or a
// *ResponseError when the body is not one).
func (c *Client) send(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err // *url.Error, wrapping the context's error when cancelled
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	b, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var env wire.ErrorResponse
	if rerr == nil && json.Unmarshal(b, &env) == nil && env.Error != nil {
		return nil, apiError(env.Error, resp.StatusCode, resp.Header)
	}
	return nil, responseError(resp, b, rerr)
}

func responseError(resp *http.Response, body []byte, err error) *ResponseError {
	if len(body) > 512 {
		body = body[:512]
	}
	return &ResponseError{StatusCode: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
		RequestID: resp.Header.Get("X-Request-Id"), Body: string(body), Err: err}
}

// do sends a JSON request and decodes a JSON answer into out.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body, out any) error {
	req, err := c.newRequest(ctx, method, path, q, body)
	if err != nil {
		return err
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("client: reading %s %s: %w", method, path, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return responseError(resp, b, err)
	}
	return nil
}

type list[T any] struct {
	Object string `json:"object"`
	Data   []T    `json:"data"`
}

// ListModels lists the models the caller can use: the built-in language
// models and the networks the caller compiled.
func (c *Client) ListModels(ctx context.Context) ([]Model, error) {
	var l list[Model]
	if err := c.do(ctx, http.MethodGet, "/v1/models", nil, nil, &l); err != nil {
		return nil, err
	}
	return l.Data, nil
}

// GetModel describes one model.
func (c *Client) GetModel(ctx context.Context, id string) (*Model, error) {
	var m Model
	if err := c.do(ctx, http.MethodGet, "/v1/models/"+url.PathEscape(id), nil, nil, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// ListDeployments lists the deployments: models placed on devices.
func (c *Client) ListDeployments(ctx context.Context) ([]Deployment, error) {
	var l list[Deployment]
	if err := c.do(ctx, http.MethodGet, "/v1/deployments", nil, nil, &l); err != nil {
		return nil, err
	}
	return l.Data, nil
}

// GetDeployment describes one deployment, with its current load.
func (c *Client) GetDeployment(ctx context.Context, id string) (*Deployment, error) {
	var d Deployment
	if err := c.do(ctx, http.MethodGet, "/v1/deployments/"+url.PathEscape(id), nil, nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// CreateDeployment places a model (built-in, or a network the caller
// compiled) on a device. The deployment may still be loading: poll
// GetDeployment until its Status is "ready".
func (c *Client) CreateDeployment(ctx context.Context, req *CreateDeploymentRequest) (*Deployment, error) {
	var d Deployment
	if err := c.do(ctx, http.MethodPost, "/v1/deployments", nil, req, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// DeleteDeployment deletes one of the caller's deployments; requests
// already running on it finish.
func (c *Client) DeleteDeployment(ctx context.Context, id string) (*Deleted, error) {
	var d Deleted
	if err := c.do(ctx, http.MethodDelete, "/v1/deployments/"+url.PathEscape(id), nil, nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// DeleteModel deletes a network the caller compiled.
func (c *Client) DeleteModel(ctx context.Context, id string) (*Deleted, error) {
	var d Deleted
	if err := c.do(ctx, http.MethodDelete, "/v1/models/"+url.PathEscape(id), nil, nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Run runs samples through a network's deployment.
func (c *Client) Run(ctx context.Context, deployment string, req *RunRequest) (*Run, error) {
	var r Run
	if err := c.do(ctx, http.MethodPost, "/v1/deployments/"+url.PathEscape(deployment)+"/run", nil, req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ChatCompletion asks for a chat completion (req.Stream is ignored).
func (c *Client) ChatCompletion(ctx context.Context, req *ChatCompletionRequest) (*ChatCompletion, error) {
	return c.chat(ctx, "/v1/chat/completions", req)
}

// DeploymentChatCompletion asks deployment for a chat completion;
// req.Model may be left empty.
func (c *Client) DeploymentChatCompletion(ctx context.Context, deployment string, req *ChatCompletionRequest) (*ChatCompletion, error) {
	return c.chat(ctx, deploymentChatPath(deployment), req)
}

func deploymentChatPath(id string) string {
	return "/v1/deployments/" + url.PathEscape(id) + "/chat/completions"
}

func (c *Client) chat(ctx context.Context, path string, req *ChatCompletionRequest) (*ChatCompletion, error) {
	if req == nil {
		return nil, errors.New("client: nil ChatCompletionRequest")
	}
	r := *req
	r.Stream, r.StreamOptions = false, nil
	var out ChatCompletion
	if err := c.do(ctx, http.MethodPost, path, nil, &r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ChatCompletionStream streams a chat completion (req.Stream is set for
// the call). See the package documentation for how the iterator ends.
func (c *Client) ChatCompletionStream(ctx context.Context, req *ChatCompletionRequest) iter.Seq2[*ChatCompletionChunk, error] {
	return chatStream(c, ctx, "/v1/chat/completions", req)
}

// DeploymentChatCompletionStream streams a chat completion through
// deployment.
func (c *Client) DeploymentChatCompletionStream(ctx context.Context, deployment string, req *ChatCompletionRequest) iter.Seq2[*ChatCompletionChunk, error] {
	return chatStream(c, ctx, deploymentChatPath(deployment), req)
}

func chatStream(c *Client, ctx context.Context, path string, req *ChatCompletionRequest) iter.Seq2[*ChatCompletionChunk, error] {
	if req == nil {
		return errSeq[*ChatCompletionChunk](errors.New("client: nil ChatCompletionRequest"))
	}
	r := *req
	r.Stream = true
	return stream[ChatCompletionChunk](c, ctx, path, &r, nil)
}

// Completion asks for a text completion (req.Stream is ignored).
func (c *Client) Completion(ctx context.Context, req *CompletionRequest) (*Completion, error) {
	if req == nil {
		return nil, errors.New("client: nil CompletionRequest")
	}
	r := *req
	r.Stream = false
	var out Completion
	if err := c.do(ctx, http.MethodPost, "/v1/completions", nil, &r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CompletionStream streams a text completion: each chunk is a Completion
// holding the new text of one choice. (A server in mock mode answers 400
// stream_not_supported.)
func (c *Client) CompletionStream(ctx context.Context, req *CompletionRequest) iter.Seq2[*Completion, error] {
	if req == nil {
		return errSeq[*Completion](errors.New("client: nil CompletionRequest"))
	}
	r := *req
	r.Stream = true
	return stream[Completion](c, ctx, "/v1/completions", &r, nil)
}

// CreateResponse asks for a response (req.Stream is ignored). With
// req.PreviousResponseID it continues that stored conversation: the
// server reads only the new input, resuming from the model's state after
// the turn before.
func (c *Client) CreateResponse(ctx context.Context, req *ResponseRequest) (*Response, error) {
	if req == nil {
		return nil, errors.New("client: nil ResponseRequest")
	}
	r := *req
	r.Stream = false
	var out Response
	if err := c.do(ctx, http.MethodPost, "/v1/responses", nil, &r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateResponseStream streams a response: its events in order, the
// text in those of Type "response.output_text.delta" (Delta), the whole
// response in the last ("response.completed" or "response.incomplete").
// An error after the stream started ends it with an *APIError whose
// MidStream is set.
func (c *Client) CreateResponseStream(ctx context.Context, req *ResponseRequest) iter.Seq2[*ResponseEvent, error] {
	if req == nil {
		return errSeq[*ResponseEvent](errors.New("client: nil ResponseRequest"))
	}
	r := *req
	r.Stream = true
	return func(yield func(*ResponseEvent, error) bool) {
		for ev, err := range stream[ResponseEvent](c, ctx, "/v1/responses", &r, lastResponseEvent) {
			if err == nil && ev.Type == "error" {
				e := &APIError{StatusCode: http.StatusOK, Type: "server_error", Message: ev.Message, MidStream: true}
				if ev.Code != nil {
					e.Code = *ev.Code
				}
				if ev.Param != nil {
					e.Param = *ev.Param
				}
				yield(nil, e)
				return
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// lastResponseEvent reports the event that ends a response's stream.
func lastResponseEvent(ev *ResponseEvent) bool {
	switch ev.Type {
	case "response.completed", "response.incomplete", "response.failed":
		return true
	}
	return false
}

// GetResponse returns a stored response.
func (c *Client) GetResponse(ctx context.Context, id string) (*Response, error) {
	var out Response
	if err := c.do(ctx, http.MethodGet, "/v1/responses/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteResponse deletes a stored response.
func (c *Client) DeleteResponse(ctx context.Context, id string) (*ResponseDeleted, error) {
	var out ResponseDeleted
	if err := c.do(ctx, http.MethodDelete, "/v1/responses/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Compile uploads a network file (base64-encoded on the wire) and
// returns the compiled network, which the server then lists among the
// caller's models.
func (c *Client) Compile(ctx context.Context, req *CompileRequest) (*CompiledNetwork, error) {
	if req == nil {
		return nil, errors.New("client: nil CompileRequest")
	}
	body := struct {
		Format  string         `json:"model_format"`
		File    string         `json:"model_file"`
		Name    string         `json:"name,omitempty"`
		Target  string         `json:"target,omitempty"`
		Options map[string]any `json:"options,omitempty"`
	}{req.Format, base64.StdEncoding.EncodeToString(req.File), req.Name, req.Target, req.Options}
	var out CompiledNetwork
	if err := c.do(ctx, http.MethodPost, "/v1/compile", nil, &body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Telemetry reports the caller's own requests; q may be nil.
func (c *Client) Telemetry(ctx context.Context, q *TelemetryQuery) (*Telemetry, error) {
	v := url.Values{}
	if q != nil {
		if q.Window != "" {
			v.Set("window", q.Window)
		}
		if q.Model != "" {
			v.Set("model", q.Model)
		}
		if q.Deployment != "" {
			v.Set("deployment", q.Deployment)
		}
	}
	var out Telemetry
	if err := c.do(ctx, http.MethodGet, "/v1/telemetry", v, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Health asks whether the server can serve. A server that cannot (503)
// gives its report and an *APIError (matching ErrOverloaded) whose
// message is the reason.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	req, err := c.newRequest(ctx, http.MethodGet, "/health", nil, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return nil, fmt.Errorf("client: reading /health: %w", err)
	}
	var h Health
	if err := json.Unmarshal(b, &h); err != nil || !isJSON(resp.Header.Get("Content-Type")) {
		return nil, responseError(resp, b, err)
	}
	if resp.StatusCode == http.StatusOK {
		return &h, nil
	}
	eb := h.Error
	if eb == nil {
		eb = &wire.ErrorBody{Message: h.Reason, Type: "server_error"}
	}
	return &h, apiError(eb, resp.StatusCode, resp.Header)
}

func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}
