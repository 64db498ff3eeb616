package compat

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/httpapi/client/clienttest"
	goopenai "github.com/sashabaranov/go-openai"
)

// github.com/sashabaranov/go-openai, pointed at the server with
// DefaultConfig(key) and BaseURL .../v1. Its float and int fields are
// omitempty, so temperature 0 and logprobs 0 cannot be sent: seeds stand
// in for greedy decoding here.

func goOpenAI(srv *clienttest.Server, key string) *goopenai.Client {
	cfg := goopenai.DefaultConfig(key)
	cfg.BaseURL = srv.URL + "/v1"
	return goopenai.NewClientWithConfig(cfg)
}

func seedp(v int) *int { return &v }

func TestGoOpenAIModels(t *testing.T) {
	modes(t, func(t *testing.T, srv *clienttest.Server, mock bool) {
		list, err := goOpenAI(srv, srv.Key).ListModels(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, m := range list.Models {
			ids[m.ID] = m.Object == "model" && m.OwnedBy != ""
		}
		for _, id := range clienttest.Models {
			if !ids[id] {
				t.Errorf("%s missing or malformed in %v", id, ids)
			}
		}
	})
}

func TestGoOpenAIChat(t *testing.T) {
	modes(t, func(t *testing.T, srv *clienttest.Server, mock bool) {
		c := goOpenAI(srv, srv.Key)
		ctx := testCtx(t)
		req := goopenai.ChatCompletionRequest{
			Model:     "neuro-1-lite",
			Messages:  []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: "Tell me a story."}},
			MaxTokens: 12, Seed: seedp(5),
		}
		res, err := c.CreateChatCompletion(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Object != "chat.completion" || len(res.Choices) != 1 || res.Choices[0].Message.Content == "" || res.Choices[0].Message.Role != "assistant" ||
			res.Usage.TotalTokens != res.Usage.PromptTokens+res.Usage.CompletionTokens {
			t.Fatalf("completion %+v", res)
		}
		again, err := c.CreateChatCompletion(ctx, req)
		if err != nil || again.Choices[0].Message.Content != res.Choices[0].Message.Content {
			t.Fatalf("seed 5 again: %q (%v), first %q", again.Choices[0].Message.Content, err, res.Choices[0].Message.Content)
		}

		req.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
		stream, err := c.CreateChatCompletionStream(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		var text strings.Builder
		var usage *goopenai.Usage
		finish := goopenai.FinishReason("")
		for {
			ch, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if usage != nil {
				t.Fatal("a chunk after the usage chunk")
			}
			if ch.Usage != nil {
				usage = ch.Usage
				continue
			}
			text.WriteString(ch.Choices[0].Delta.Content)
			if ch.Choices[0].FinishReason != "" {
				finish = ch.Choices[0].FinishReason
			}
		}
		if usage == nil || usage.CompletionTokens != res.Usage.CompletionTokens || finish != res.Choices[0].FinishReason {
			t.Fatalf("stream usage %+v finish %q; want %+v %q", usage, finish, res.Usage, res.Choices[0].FinishReason)
		}
		if text.String() != res.Choices[0].Message.Content {
			t.Fatalf("streamed %q, not streamed %q", text.String(), res.Choices[0].Message.Content)
		}
	})
}

func TestGoOpenAISampling(t *testing.T) {
	srv := start(t, false)
	c := goOpenAI(srv, srv.Key)
	ctx := testCtx(t)
	req := goopenai.ChatCompletionRequest{
		Model:     "neuro-1-standard",
		Messages:  []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: "Once upon a time"}},
		MaxTokens: 16, N: 3, Seed: seedp(11), LogProbs: true, TopLogProbs: 3,
	}
	a, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Choices) != 3 {
		t.Fatalf("n=3 gave %d choices", len(a.Choices))
	}
	for i := range a.Choices {
		if a.Choices[i].Message.Content != b.Choices[i].Message.Content {
			t.Fatalf("seed 11, choice %d: %q then %q", i, a.Choices[i].Message.Content, b.Choices[i].Message.Content)
		}
		lp := a.Choices[i].LogProbs
		if lp == nil || len(lp.Content) == 0 || len(lp.Content[0].TopLogProbs) != 3 {
			t.Fatalf("choice %d logprobs %+v", i, lp)
		}
	}
	text := a.Choices[0].Message.Content
	if len(text) < 8 {
		t.Fatalf("text too short to cut: %q", text)
	}
	stop := text[len(text)/2 : len(text)/2+2]
	req.N, req.LogProbs, req.TopLogProbs, req.Stop = 1, false, 0, []string{stop}
	cut, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if want := text[:strings.Index(text, stop)]; cut.Choices[0].Message.Content != want || cut.Choices[0].FinishReason != goopenai.FinishReasonStop {
		t.Fatalf("stop %q: %q (%s), want %q", stop, cut.Choices[0].Message.Content, cut.Choices[0].FinishReason, want)
	}
}

func TestGoOpenAICompletion(t *testing.T) {
	modes(t, func(t *testing.T, srv *clienttest.Server, mock bool) {
		c := goOpenAI(srv, srv.Key)
		ctx := testCtx(t)
		req := goopenai.CompletionRequest{Model: "neuro-1-lite", Prompt: "The fox", MaxTokens: 8, Seed: seedp(3), LogProbs: 2}
		res, err := c.CreateCompletion(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		ch := res.Choices[0]
		if res.Object != "text_completion" || ch.Text == "" || res.Usage.CompletionTokens == 0 ||
			len(ch.LogProbs.Tokens) != res.Usage.CompletionTokens || strings.Join(ch.LogProbs.Tokens, "") != ch.Text && !mock {
			t.Fatalf("completion %+v", res)
		}
		stream, err := c.CreateCompletionStream(ctx, req)
		var apiErr *goopenai.APIError
		if mock {
			if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || apiErr.Code != "stream_not_supported" {
				t.Fatalf("mock completion stream: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		var text strings.Builder
		for {
			r, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range r.Choices {
				text.WriteString(c.Text)
			}
		}
		if text.String() != ch.Text {
			t.Fatalf("streamed %q, want %q", text.String(), ch.Text)
		}
	})
}

func TestGoOpenAIErrors(t *testing.T) {
	modes(t, func(t *testing.T, srv *clienttest.Server, mock bool) {
		ctx := testCtx(t)
		var apiErr *goopenai.APIError
		_, err := goOpenAI(srv, "sk-wrong").ListModels(ctx)
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusUnauthorized || apiErr.Type != "authentication_error" || apiErr.Code != "invalid_api_key" {
			t.Fatalf("wrong key: %v", err)
		}
		c := goOpenAI(srv, srv.Key)
		msgs := []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: "x"}}
		_, err = c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "gpt-4o", Messages: msgs})
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" {
			t.Fatalf("unknown model: %v", err)
		}
		_, err = c.CreateChatCompletion(ctx, goopenai.ChatCompletionRequest{Model: "neuro-1-lite", Messages: msgs, TopP: 1.5})
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusBadRequest || apiErr.Param == nil || *apiErr.Param != "top_p" {
			t.Fatalf("top_p 1.5: %v", err)
		}
		_, err = c.CreateChatCompletionStream(ctx, goopenai.ChatCompletionRequest{Model: "neuro-1-lite", Messages: []goopenai.ChatCompletionMessage{{Role: "robot", Content: "x"}}})
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusBadRequest || apiErr.Param == nil || !strings.HasPrefix(*apiErr.Param, "messages") {
			t.Fatalf("stream with a bad role: %v", err)
		}
	})
}

func TestGoOpenAIBreakOff(t *testing.T) {
	srv := start(t, false)
	c := goOpenAI(srv, srv.Key)
	bias := map[string]int{}
	for k, v := range endless(t) {
		bias[k] = int(v)
	}
	stream, err := c.CreateChatCompletionStream(testCtx(t), goopenai.ChatCompletionRequest{
		Model: "neuro-1-heavy", Messages: []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: "Go on"}}, LogitBias: bias,
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	stream.Close()
	waitAbandoned(t, srv, "neuro-1-heavy-cpu")
}
