// Command generate runs a built-in neuro-1 model in this process, with no
// server, and streams what it writes:
//
//	go run ./examples/generate -chat "Do you like music?"
//	go run ./examples/generate -model neuro-1-lite -prompt "Once upon a time" -max-tokens 80
//
// Flags:
//
//	-model ID          neuro-1-lite, neuro-1-standard (alias neuro-1) or neuro-1-heavy
//	-chat TEXT         one user message, answered as the assistant
//	-prompt TEXT       plain text to continue (when -chat is not given)
//	-max-tokens N      at most N tokens (default 100)
//	-temperature T     0 is greedy (default 0.8)
//	-seed S            makes sampling reproducible (default 1)
//	-device NAME       the hal device to run on (default cpu)
//
// It prints the text as it is generated, then one line of figures: tokens,
// tokens per second, timesteps, spikes and the device's energy estimate.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all" // the neuro-1 language models
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	_ "github.com/neuro-go/neuro/runtime/hal/loihi"
	"github.com/neuro-go/neuro/tokenizer"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	model := fs.String("model", models.Lite, "model id")
	chat := fs.String("chat", "", "a user message to answer")
	prompt := fs.String("prompt", "", "text to continue (without -chat)")
	maxTokens := fs.Int("max-tokens", 100, "most tokens to generate")
	temp := fs.Float64("temperature", 0.8, "sampling temperature; 0 is greedy")
	seed := fs.Int64("seed", 1, "sampling seed")
	device := fs.String("device", "cpu", "device to run on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *chat == "" && *prompt == "" {
		return fmt.Errorf("give -chat TEXT or -prompt TEXT")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rt := runtime.New(nil)
	defer rt.Close()
	m, err := models.Load(*model)
	if err != nil {
		return err
	}
	m.Aliases = nil // only this model is registered: no alias clash to avoid
	if err := rt.RegisterModel(m); err != nil {
		return err
	}
	if _, err := rt.Deploy(ctx, runtime.DeploymentSpec{ID: m.ID + "-" + *device, Model: m.ID, Device: *device, MaxBatch: 1}); err != nil {
		return err
	}
	req := &runtime.Request{Model: m.ID, Prompt: *prompt, MaxTokens: *maxTokens,
		Sampling: runtime.Sampling{Temperature: *temp, Seed: seed}}
	if *chat != "" {
		req.Prompt, req.Messages = "", []tokenizer.Message{{Role: "user", Content: *chat}}
	}
	start := time.Now()
	res, err := rt.Generate(ctx, req, func(ev runtime.Event) error {
		_, err := io.WriteString(out, ev.Text)
		return err
	})
	if err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	n := res.Usage.CompletionTokens
	fmt.Fprintf(out, "\n\n[%s on %s: %d prompt + %d tokens, %.0f tokens/s counting the prompt, %d timesteps, %.0f spikes, %.1f µJ estimated, finish %s]\n",
		m.ID, *device, res.Usage.PromptTokens, n, float64(res.Usage.PromptTokens+n)/secs, res.Stats.Timesteps, res.Stats.Spikes, res.Stats.EnergyMicrojoule, res.Choices[0].FinishReason)
	return nil
}
