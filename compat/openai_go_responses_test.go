package compat

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/httpapi/client/clienttest"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// The Responses API through openai-go (v3): client.Responses.New, its
// streaming form, Get and Delete, and turns chained by
// PreviousResponseID.

const respMaxTokens = 16

func respParams(input string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:           "neuro-1-lite",
		Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String(input)},
		MaxOutputTokens: openai.Int(respMaxTokens),
		Temperature:     openai.Float(0),
	}
}

// checkResponse checks a response object as openai-go reads it.
func checkResponse(t *testing.T, r *responses.Response) {
	t.Helper()
	if r.Object != "response" || !strings.HasPrefix(r.ID, "resp_") || r.Model != "neuro-1-lite" {
		t.Fatalf("response %s", r.RawJSON())
	}
	if r.Status != responses.ResponseStatusCompleted && r.Status != responses.ResponseStatusIncomplete {
		t.Fatalf("status %q", r.Status)
	}
	if (r.Status == responses.ResponseStatusIncomplete) != (r.IncompleteDetails.Reason == "max_output_tokens") {
		t.Fatalf("status %q, incomplete_details %s", r.Status, r.IncompleteDetails.RawJSON())
	}
	if r.OutputText() == "" || len(r.Output) != 1 {
		t.Fatalf("output %s", r.RawJSON())
	}
	msg := r.Output[0].AsMessage()
	if msg.Type != "message" || msg.Role != "assistant" || !strings.HasPrefix(msg.ID, "msg_") || len(msg.Content) != 1 ||
		msg.Content[0].Type != "output_text" || msg.Content[0].Text != r.OutputText() {
		t.Fatalf("output message %s", r.Output[0].RawJSON())
	}
	u := r.Usage
	if !r.JSON.Usage.Valid() || !u.InputTokensDetails.JSON.CachedTokens.Valid() || u.InputTokens == 0 || u.OutputTokens == 0 ||
		u.OutputTokens > respMaxTokens || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Fatalf("usage %s", u.RawJSON())
	}
}

// streamResponse runs a streamed response and returns its event types,
// its joined deltas, the text of response.output_text.done and the
// response of the last event.
func streamResponse(t *testing.T, ctx context.Context, c *openai.Client, p responses.ResponseNewParams) (types []string, deltas, done string, final *responses.Response) {
	t.Helper()
	stream := c.Responses.NewStreaming(ctx, p)
	defer stream.Close()
	for stream.Next() {
		ev := stream.Current()
		if int(ev.SequenceNumber) != len(types) {
			t.Fatalf("event %d (%s) has sequence_number %d", len(types), ev.Type, ev.SequenceNumber)
		}
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			deltas += ev.AsResponseOutputTextDelta().Delta
		case "response.output_text.done":
			done = ev.AsResponseOutputTextDone().Text
		case "response.completed":
			r := ev.AsResponseCompleted().Response
			final = &r
		case "response.incomplete":
			r := ev.AsResponseIncomplete().Response
			final = &r
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if final == nil {
		t.Fatalf("no response.completed or response.incomplete in %v", types)
	}
	return types, deltas, done, final
}

func TestOpenAIGoResponses(t *testing.T) {
	modes(t, func(t *testing.T, srv *clienttest.Server, mock bool) {
		c := openaiGo(srv, srv.Key)
		ctx := testCtx(t)
		p := respParams("Tell me a story.")
		a, err := c.Responses.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		checkResponse(t, a)
		if a.PreviousResponseID != "" || a.Usage.InputTokensDetails.CachedTokens != 0 {
			t.Fatalf("a first turn: %s", a.RawJSON())
		}

		types, deltas, done, final := streamResponse(t, ctx, c, p)
		for _, typ := range []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
			"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done"} {
			if !slices.Contains(types, typ) {
				t.Errorf("no %s in %v", typ, types)
			}
		}
		if last := types[len(types)-1]; types[0] != "response.created" || (last != "response.completed" && last != "response.incomplete") {
			t.Errorf("events %v", types)
		}
		checkResponse(t, final)
		if deltas != final.OutputText() || done != final.OutputText() || final.OutputText() != a.OutputText() {
			t.Fatalf("deltas %q, done %q, streamed %q, not streamed %q", deltas, done, final.OutputText(), a.OutputText())
		}

		// The second turn continues the first from its stored state.
		p2 := respParams("And then?")
		p2.PreviousResponseID = openai.String(a.ID)
		b, err := c.Responses.New(ctx, p2)
		if err != nil {
			t.Fatal(err)
		}
		checkResponse(t, b)
		if b.PreviousResponseID != a.ID || b.Usage.InputTokens <= a.Usage.InputTokens || b.Usage.InputTokensDetails.CachedTokens == 0 {
			t.Fatalf("second turn after %s: %s", a.ID, b.RawJSON())
		}
		if !mock {
			whole, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model: "neuro-1-lite", MaxTokens: openai.Int(respMaxTokens), Temperature: openai.Float(0),
				Messages: []openai.ChatCompletionMessageParamUnion{
					openai.UserMessage("Tell me a story."), openai.AssistantMessage(a.OutputText()), openai.UserMessage("And then?"),
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if b.OutputText() != whole.Choices[0].Message.Content || b.Usage.InputTokens != whole.Usage.PromptTokens {
				t.Fatalf("chained %q (%d input tokens), whole conversation to chat %q (%d prompt tokens)",
					b.OutputText(), b.Usage.InputTokens, whole.Choices[0].Message.Content, whole.Usage.PromptTokens)
			}
		}
		if _, deltas, _, final := streamResponse(t, ctx, c, p2); deltas != b.OutputText() || final.PreviousResponseID != a.ID {
			t.Fatalf("chained and streamed %q, not streamed %q", deltas, b.OutputText())
		}

		got, err := c.Responses.Get(ctx, a.ID, responses.ResponseGetParams{})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != a.ID || got.OutputText() != a.OutputText() || got.Usage.InputTokens != a.Usage.InputTokens {
			t.Fatalf("got %s, made %s", got.RawJSON(), a.RawJSON())
		}
		if err := c.Responses.Delete(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		var apiErr *openai.Error
		if _, err := c.Responses.Get(ctx, b.ID, responses.ResponseGetParams{}); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
			t.Fatalf("get after delete: %v", err)
		}
		if err := c.Responses.Delete(ctx, b.ID); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
			t.Fatalf("delete after delete: %v", err)
		}
		p2.PreviousResponseID = openai.String(b.ID)
		if _, err := c.Responses.New(ctx, p2); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Param != "previous_response_id" {
			t.Fatalf("continuing a deleted response: %v", err)
		}

		// A tool is refused by name, as a stream too.
		p.Tools = []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "f", Parameters: map[string]any{}, Strict: openai.Bool(false)}}}
		if _, err := c.Responses.New(ctx, p); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest ||
			apiErr.Param != "tools" || apiErr.Code != "unsupported_parameter" {
			t.Fatalf("tools: %v", err)
		}
		stream := c.Responses.NewStreaming(ctx, p)
		for stream.Next() {
			t.Fatalf("an event for a refused request: %s", stream.Current().RawJSON())
		}
		if !errors.As(stream.Err(), &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != "tools" {
			t.Fatalf("tools, streamed: %v", stream.Err())
		}
		stream.Close()
	})
}

// TestOpenAIGoResponsesOwner checks that a stored response is its key's
// only: another key can neither read, delete nor continue it.
func TestOpenAIGoResponsesOwner(t *testing.T) {
	srv, err := clienttest.Start(context.Background(), &clienttest.Options{Mock: true, NoLoihi: true, Keys: map[string]string{"sk-a": "alice", "sk-b": "bob"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ctx := testCtx(t)
	alice, bob := openaiGo(srv, "sk-a"), openaiGo(srv, "sk-b")
	a, err := alice.Responses.New(ctx, respParams("Hello"))
	if err != nil {
		t.Fatal(err)
	}
	var apiErr *openai.Error
	if _, err := bob.Responses.Get(ctx, a.ID, responses.ResponseGetParams{}); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Fatalf("another key's get: %v", err)
	}
	if err := bob.Responses.Delete(ctx, a.ID); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Fatalf("another key's delete: %v", err)
	}
	p := respParams("Hi")
	p.PreviousResponseID = openai.String(a.ID)
	if _, err := bob.Responses.New(ctx, p); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Param != "previous_response_id" {
		t.Fatalf("another key's continuation: %v", err)
	}
	if _, err := alice.Responses.Get(ctx, a.ID, responses.ResponseGetParams{}); err != nil {
		t.Fatalf("the owner's get: %v", err)
	}
}
