package models_test

import (
	"context"
	"fmt"

	"github.com/neuro-go/neuro/models"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/tokenizer"
)

// The built-in models in a Go program, without a server: register them,
// deploy them on the CPU simulator, and generate.
func Example() {
	ctx := context.Background()
	rt := runtime.New(nil)
	defer rt.Close()
	if err := models.Register(rt); err != nil { // neuro-1-lite, neuro-1-standard (alias neuro-1), neuro-1-heavy
		panic(err)
	}
	if _, err := models.Deploy(ctx, rt, nil); err != nil { // each on cpu; lite also on every chip linked in
		panic(err)
	}
	res, err := rt.Generate(ctx, &runtime.Request{Model: "neuro-1-lite",
		Messages: []tokenizer.Message{{Role: "user", Content: "Do you like music?"}}, MaxTokens: 12}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Model, res.Usage.CompletionTokens <= 12, res.Choices[0].Text != "")
	// Output: neuro-1-lite true true
}
