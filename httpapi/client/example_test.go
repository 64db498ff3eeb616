package client_test

import (
	"context"
	"fmt"

	"github.com/neuro-go/neuro/httpapi/client"
	"github.com/neuro-go/neuro/httpapi/client/clienttest"
)

func Example() {
	ctx := context.Background()
	srv, err := clienttest.Start(ctx, &clienttest.Options{Mock: true}) // a server on 127.0.0.1
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	c, err := client.New(srv.URL, &client.Options{APIKey: srv.Key})
	if err != nil {
		panic(err)
	}
	req := &client.ChatCompletionRequest{
		Model:         "neuro-1",
		Messages:      []client.ChatMessage{{Role: "user", Content: "Hello"}},
		MaxTokens:     client.Ptr(3),
		StreamOptions: &client.StreamOptions{IncludeUsage: true},
	}
	for chunk, err := range c.ChatCompletionStream(ctx, req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, ch := range chunk.Choices {
			if ch.FinishReason != "" {
				fmt.Println("model:", chunk.Model, "finish:", ch.FinishReason)
			}
		}
		if chunk.Usage != nil {
			fmt.Println("completion tokens:", chunk.Usage.CompletionTokens)
		}
	}

	_, err = c.GetModel(ctx, "gpt-4")
	fmt.Println("not found:", client.IsNotFound(err))
	// Output:
	// model: neuro-1-standard finish: length
	// completion tokens: 3
	// not found: true
}
