// Package client is a Go client for the Neuro REST API (the surface that
// package httpapi serves): the OpenAI-compatible calls (models, chat and
// text completions) and Neuro's own (deployments, compile, telemetry,
// health).
//
// # Overview
//
//	c, err := client.New("http://127.0.0.1:8080", &client.Options{APIKey: key})
//	res, err := c.ChatCompletion(ctx, &client.ChatCompletionRequest{
//		Model:    "neuro-1-lite",
//		Messages: []client.ChatMessage{{Role: "user", Content: "Hello"}},
//	})
//
// Streams are iterators. The request is sent when the loop starts; the
// stream ends at the server's "data: [DONE]"; breaking out of the loop
// closes the connection, which makes the server stop generating at once:
//
//	for chunk, err := range c.ChatCompletionStream(ctx, req) {
//		if err != nil {
//			return err // an HTTP error, a mid-stream error event, or a broken stream
//		}
//		fmt.Print(chunk.Choices[0].Delta.Content)
//	}
//
// Every error the server sends, before or during a stream, is an
// *APIError; branch on it with errors.As, or with IsNotFound,
// IsRateLimited and the other helpers. A stream that ends without
// "data: [DONE]" yields an error wrapping ErrStreamTruncated.
//
// The request and response types are aliases of package
// httpapi/wire's, the types the server encodes with.
//
// # Invariants
//
//   - A Client holds no per-call state: it is safe for concurrent use.
//   - Nothing is retried: a 429 or 503 comes back as an *APIError whose
//     RetryAfter says how long the server asked the caller to wait.
//   - Each range over a stream iterator sends one request; an iterator
//     ranged twice sends two.
//   - The API key is sent only in the Authorization header, and never
//     appears in an error.
package client
