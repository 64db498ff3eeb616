// Package compat holds the tests that run real OpenAI client libraries
// against a Neuro server on the loopback interface: the Go clients
// github.com/openai/openai-go (v3) and github.com/sashabaranov/go-openai
// here, and the npm package openai (v6) in js/, against the server that
// cmd/testserver starts: models, chat and text completions, and the
// Responses API (create, stream, chain, retrieve, delete).
//
// It is a module of its own, so that the library does not depend on the
// clients. Run it with
//
//	cd compat && go test ./...
//
// or, with the JavaScript client too, bash .ci/compat from the
// repository root.
package compat
