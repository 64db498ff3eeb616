package cluster

import (
	"math"
	"reflect"
	"testing"

	"github.com/neuro-go/neuro/runtime"
)

// A reply keeps what JSON strings and numbers cannot hold: a text cut
// inside a UTF-8 sequence, and infinite log-probabilities.
func TestReplyRoundTrip(t *testing.T) {
	lp := []runtime.TokenLogprob{{Token: 7, Text: "\xe2\x82", Logprob: math.Inf(-1), Top: []runtime.TokenLogprob{{Token: 8, Text: "<&>", Logprob: -1e-9}}}}
	for _, r := range []reply{
		{Event: &runtime.Event{Choice: 1, Text: "\xe2\x82", Logprobs: lp, Activity: []runtime.LayerActivity{{Layer: "l", Neurons: 3, Spikes: []int{2}}}}},
		{Done: true, Result: &runtime.Result{Model: "m", Choices: []runtime.Choice{{Index: 0, Text: "a\xff", Tokens: []int{1}, Logprobs: lp, FinishReason: runtime.FinishLength}},
			Usage: runtime.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}, PromptTokens: []int{3}, PromptLogprobs: lp,
			Prompts: []runtime.PromptResult{{Tokens: []int{3}, Logprobs: lp}}, Stats: runtime.Stats{Timesteps: 5, Spikes: 1.5, Latency: 3}}},
		{Done: true, Run: &runtime.RunResult{Model: "n", Outputs: []runtime.RunOutput{{SpikeCounts: []float32{1, float32(math.Inf(1))}, Prediction: 1,
			FinalState: []float32{0.1}, Spikes: []runtime.SpikeEvent{{T: 1, I: 2}}, Membrane: [][]float32{{-0.5, 3e38}}}}, Warnings: []string{"w"}}},
		{Done: true, Err: &wireErr{Code: "overloaded", Msg: "busy"}},
	} {
		b, err := encode(&r)
		if err != nil {
			t.Fatal(err)
		}
		var got reply
		if err := decode(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("%s decodes as %+v, want %+v", b, got, r)
		}
	}
}
