package runtime_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/neuro-go/neuro/models/lite"
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu" // registers the "cpu" device
	"github.com/neuro-go/neuro/tokenizer"
)

// The built-in neuro-1-lite answering a chat message on the CPU
// simulator, its text streamed through the callback as it is generated.
// Temperature 0 takes the most likely token at every step, so the answer
// is the same on every run.
func ExampleRuntime_Generate() {
	ctx := context.Background()
	m, err := lite.Load() // the embedded weights, imported and compiled for the CPU
	if err != nil {
		panic(err)
	}
	rt := runtime.New(nil)
	defer rt.Close()
	if err := rt.RegisterModel(m); err != nil {
		panic(err)
	}
	if _, err := rt.Deploy(ctx, runtime.DeploymentSpec{ID: "lite-cpu", Model: lite.ID, Device: "cpu"}); err != nil {
		panic(err)
	}
	var text strings.Builder
	res, err := rt.Generate(ctx, &runtime.Request{
		Model:     lite.ID,
		Messages:  []tokenizer.Message{{Role: "user", Content: "Do you like music?"}},
		Sampling:  runtime.Sampling{Temperature: 0},
		MaxTokens: 8,
	}, func(ev runtime.Event) error {
		text.WriteString(ev.Text)
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s on %s: %q\n", res.Model, res.Deployment, text.String())
	fmt.Println(res.Usage.CompletionTokens, "tokens, finish:", res.Choices[0].FinishReason, "same text:", res.Choices[0].Text == text.String())
	// Output:
	// neuro-1-lite on lite-cpu: "I think that's a good idea."
	// 8 tokens, finish: length same text: true
}
