package compat

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/httpapi/client/clienttest"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// github.com/openai/openai-go (v3), pointed at the server as its README
// says: base URL .../v1 and the key.

func openaiGo(srv *clienttest.Server, key string) *openai.Client {
	c := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey(key), option.WithMaxRetries(0))
	return &c
}

func TestOpenAIGoModels(t *testing.T) {
	modes(t, func(t *testing.T, srv *clienttest.Server, mock bool) {
		c := openaiGo(srv, srv.Key)
		page, err := c.Models.List(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, m := range page.Data {
			ids[m.ID] = m.Object == "model" && m.OwnedBy != "" && m.Created > 0
		}
		for _, id := range clienttest.Models {
			if !ids[id] {
				t.Errorf("%s missing or malformed in %v", id, ids)
			}
		}
		m, err := c.Models.Get(testCtx(t), "neuro-1")
		if err != nil || m.ID != "neuro-1-standard" {
			t.Fatalf("get neuro-1: %+v %v", m, err)
		}
	})
}

func TestOpenAIGoChat(t *testing.T) {
	modes(t, func(t *testing.T, srv *clienttest.Server, mock bool) {
		c := openaiGo(srv, srv.Key)
		ctx := testCtx(t)
		params := openai.ChatCompletionNewParams{
			Model:       "neuro-1-lite",
			Messages:    []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Tell me a story.")},
			MaxTokens:   openai.Int(12),
			Temperature: openai.Float(0),
		}
		res, err := c.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if res.Object != "chat.completion" || res.Model != "neuro-1-lite" || len(res.Choices) != 1 || res.Choices[0].Message.Content == "" ||
			res.Usage.TotalTokens != res.Usage.PromptTokens+res.Usage.CompletionTokens || res.Usage.CompletionTokens == 0 {
			t.Fatalf("completion %+v", res)
		}

		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := c.Chat.Completions.NewStreaming(ctx, params)
		acc := openai.ChatCompletionAccumulator{}
		var usage *openai.CompletionUsage
		chunks := 0
		for stream.Next() {
			ch := stream.Current()
			acc.AddChunk(ch)
			chunks++
			if len(ch.Choices) == 0 && ch.Usage.TotalTokens > 0 {
				u := ch.Usage
				usage = &u
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		stream.Close()
		if usage == nil || usage.CompletionTokens != res.Usage.CompletionTokens || usage.PromptTokens != res.Usage.PromptTokens {
			t.Fatalf("include_usage: %+v, want %+v", usage, res.Usage)
		}
		if len(acc.Choices) != 1 || acc.Choices[0].FinishReason != res.Choices[0].FinishReason || chunks < 3 {
			t.Fatalf("accumulated %+v after %d chunks", acc.ChatCompletion, chunks)
		}
		if acc.Choices[0].Message.Content != res.Choices[0].Message.Content {
			t.Fatalf("streamed %q, not streamed %q", acc.Choices[0].Message.Content, res.Choices[0].Message.Content)
		}
	})
}

func TestOpenAIGoSampling(t *testing.T) {
	srv := start(t, false)
	c := openaiGo(srv, srv.Key)
	ctx := testCtx(t)
	params := openai.ChatCompletionNewParams{
		Model:     "neuro-1-standard",
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Once upon a time")},
		MaxTokens: openai.Int(16), Temperature: openai.Float(1), N: openai.Int(3), Seed: openai.Int(7),
		Logprobs: openai.Bool(true), TopLogprobs: openai.Int(2),
	}
	a, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Choices) != 3 {
		t.Fatalf("n=3 gave %d choices", len(a.Choices))
	}
	distinct := map[string]bool{}
	for i := range a.Choices {
		if a.Choices[i].Message.Content != b.Choices[i].Message.Content {
			t.Fatalf("seed 7, choice %d: %q then %q", i, a.Choices[i].Message.Content, b.Choices[i].Message.Content)
		}
		distinct[a.Choices[i].Message.Content] = true
		lp := a.Choices[i].Logprobs.Content
		if len(lp) == 0 || len(lp[0].TopLogprobs) != 2 || lp[0].Logprob > 0 {
			t.Fatalf("choice %d logprobs %+v", i, lp)
		}
	}
	if len(distinct) < 2 {
		t.Fatal("three sampled choices are identical")
	}

	// stop: a piece of the seeded text cuts it.
	text := a.Choices[0].Message.Content
	if len(text) < 8 {
		t.Fatalf("text too short to cut: %q", text)
	}
	stop := text[len(text)/2 : len(text)/2+2]
	params.N, params.Logprobs, params.TopLogprobs = openai.Int(1), openai.Bool(false), openai.Int(0)
	params.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"\x00none", stop}}
	cut, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if want := text[:strings.Index(text, stop)]; cut.Choices[0].Message.Content != want || cut.Choices[0].FinishReason != "stop" {
		t.Fatalf("stop %q: %q (%s), want %q", stop, cut.Choices[0].Message.Content, cut.Choices[0].FinishReason, want)
	}
}

func TestOpenAIGoCompletion(t *testing.T) {
	modes(t, func(t *testing.T, srv *clienttest.Server, mock bool) {
		c := openaiGo(srv, srv.Key)
		ctx := testCtx(t)
		params := openai.CompletionNewParams{
			Model: "neuro-1-lite", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("The fox")},
			MaxTokens: openai.Int(8), Temperature: openai.Float(0),
		}
		res, err := c.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if res.Object != "text_completion" || len(res.Choices) != 1 || res.Choices[0].Text == "" || res.Usage.CompletionTokens == 0 {
			t.Fatalf("completion %+v", res)
		}
		stream := c.Completions.NewStreaming(ctx, params)
		var text strings.Builder
		for stream.Next() {
			for _, ch := range stream.Current().Choices {
				text.WriteString(ch.Text)
			}
		}
		err = stream.Err()
		stream.Close()
		var apiErr *openai.Error
		if mock {
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "stream_not_supported" {
				t.Fatalf("mock completion stream: %v", err)
			}
		} else if err != nil || text.String() != res.Choices[0].Text {
			t.Fatalf("streamed %q (%v), want %q", text.String(), err, res.Choices[0].Text)
		}

		// Scoring a prompt: echo, logprobs 0, max_tokens 0.
		score, err := c.Completions.New(ctx, openai.CompletionNewParams{
			Model: "neuro-1-lite", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("The quick brown fox")},
			MaxTokens: openai.Int(0), Echo: openai.Bool(true), Logprobs: openai.Int(0),
		})
		if err != nil {
			t.Fatal(err)
		}
		lp := score.Choices[0].Logprobs
		if score.Choices[0].Text != "The quick brown fox" || len(lp.Tokens) != int(score.Usage.PromptTokens) || len(lp.TokenLogprobs) != len(lp.Tokens) || lp.JSON.TokenLogprobs.Raw() == "" {
			t.Fatalf("echo scoring %+v", score.Choices[0])
		}
		if !strings.HasPrefix(lp.JSON.TokenLogprobs.Raw(), "[null,") {
			t.Fatalf("the first token of an echoed prompt has a logprob: %s", lp.JSON.TokenLogprobs.Raw())
		}
	})
}

func TestOpenAIGoErrors(t *testing.T) {
	modes(t, func(t *testing.T, srv *clienttest.Server, mock bool) {
		ctx := testCtx(t)
		var apiErr *openai.Error
		_, err := openaiGo(srv, "sk-wrong").Models.List(ctx)
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized || apiErr.Type != "authentication_error" || apiErr.Code != "invalid_api_key" {
			t.Fatalf("wrong key: %v", err)
		}
		c := openaiGo(srv, srv.Key)
		_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" {
			t.Fatalf("unknown model: %v", err)
		}
		_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "neuro-1-lite", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}, Temperature: openai.Float(3)})
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != "temperature" || apiErr.Type != "invalid_request_error" {
			t.Fatalf("temperature 3: %v", err)
		}
		// The same errors through a stream.
		stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "nope", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")}})
		for stream.Next() {
			t.Fatal("a chunk for an unknown model")
		}
		if !errors.As(stream.Err(), &apiErr) || apiErr.StatusCode != http.StatusNotFound {
			t.Fatalf("stream, unknown model: %v", stream.Err())
		}
		stream.Close()
	})
}

func TestOpenAIGoBreakOff(t *testing.T) {
	srv := start(t, false)
	c := openaiGo(srv, srv.Key)
	bias := map[string]int64{}
	for k, v := range endless(t) {
		bias[k] = int64(v)
	}
	stream := c.Chat.Completions.NewStreaming(testCtx(t), openai.ChatCompletionNewParams{
		Model: "neuro-1-heavy", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Go on")}, LogitBias: bias,
	})
	for i := 0; i < 3 && stream.Next(); i++ {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	waitAbandoned(t, srv, "neuro-1-heavy-cpu")
}
