package client_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/httpapi/client"
	"github.com/neuro-go/neuro/httpapi/client/clienttest"
)

// TestResponses: a conversation through the Responses calls: created,
// continued from the stored turn (which the server resumes from its
// state), streamed, read back and deleted.
func TestResponses(t *testing.T) {
	for _, mock := range []bool{false, true} {
		t.Run(map[bool]string{false: "real", true: "mock"}[mock], func(t *testing.T) {
			_, c := start(t, &clienttest.Options{Mock: mock})
			ctx := ctxT(t)
			first, err := c.CreateResponse(ctx, &client.ResponseRequest{Model: "neuro-1-lite", Input: "Tell me a story.",
				Instructions: "Be brief.", MaxOutputTokens: 12, Temperature: client.Ptr(0.0)})
			if err != nil {
				t.Fatal(err)
			}
			if first.Object != "response" || !strings.HasPrefix(first.ID, "resp_") || first.OutputText == "" || first.Usage == nil || first.Usage.InputTokens == 0 {
				t.Fatalf("first turn %+v", first)
			}
			next := &client.ResponseRequest{Model: "neuro-1-lite", PreviousResponseID: first.ID, Instructions: "Be brief.",
				Input:           []client.InputMessage{{Role: "user", Content: []client.InputText{{Type: "input_text", Text: "And then?"}}}},
				MaxOutputTokens: 8, Temperature: client.Ptr(0.0)}
			var text string
			var final *client.Response
			for ev, err := range c.CreateResponseStream(ctx, next) {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Delta != nil {
					text += *ev.Delta
				}
				if ev.Response != nil && (ev.Type == "response.completed" || ev.Type == "response.incomplete") {
					final = ev.Response
				}
			}
			if final == nil || final.OutputText != text || *final.PreviousResponseID != first.ID {
				t.Fatalf("streamed second turn %+v, deltas %q", final, text)
			}
			if !mock && final.Usage.InputTokensDetails.CachedTokens == 0 {
				t.Fatalf("the second turn resumed nothing: %+v", final.Usage)
			}
			got, err := c.GetResponse(ctx, final.ID)
			if err != nil || got.OutputText != final.OutputText {
				t.Fatalf("read back %+v, %v", got, err)
			}
			if del, err := c.DeleteResponse(ctx, final.ID); err != nil || !del.Deleted {
				t.Fatalf("delete %+v, %v", del, err)
			}
			_, err = c.GetResponse(ctx, final.ID)
			var ae *client.APIError
			if !errors.As(err, &ae) || ae.StatusCode != 404 || ae.Code != "response_not_found" {
				t.Fatalf("a deleted response: %v", err)
			}
		})
	}
}
