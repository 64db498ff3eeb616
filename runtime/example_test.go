package runtime_test

import (
	"context"
	"fmt"
	"os"

	"github.com/neuro-go/neuro/compile"
	_ "github.com/neuro-go/neuro/compile/onnx" // the importer Compile uses below
	"github.com/neuro-go/neuro/models/tokenizers"
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu" // the device the deployment runs on
	"github.com/neuro-go/neuro/runtime/runtimetest"
)

// A language model registered, deployed on the CPU simulator, and asked
// for a greedy completion (temperature 0).
func Example() {
	ctx := context.Background()
	tok, err := tokenizers.Load("neuro-bpe-1k")
	if err != nil {
		panic(err)
	}
	rt := runtime.New(nil)
	defer rt.Close()
	lm := &runtime.Model{ID: "tiny", Program: runtimetest.Program("tiny", tok.VocabSize(), 32, 1, 256), Tokenizer: tok}
	if err := rt.RegisterModel(lm); err != nil {
		panic(err)
	}
	if _, err := rt.Deploy(ctx, runtime.DeploymentSpec{ID: "tiny-cpu", Model: "tiny", Device: "cpu", MaxBatch: 4}); err != nil {
		panic(err)
	}
	res, err := rt.Generate(ctx, &runtime.Request{Model: "tiny", Prompt: "Once upon a time", MaxTokens: 5}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Deployment, res.Usage.CompletionTokens, res.Choices[0].FinishReason)
	// Output: tiny-cpu 5 length
}

// A network file compiled and stored by the runtime, as POST /v1/compile
// does: an ONNX digits classifier, converted to a spiking network.
func ExampleRuntime_Compile() {
	data, err := os.ReadFile("../compile/testdata/digits/mlp.onnx")
	if err != nil {
		panic(err)
	}
	rt := runtime.New(nil)
	defer rt.Close()
	n, err := rt.Compile(context.Background(), &runtime.CompileRequest{Format: "onnx", Data: data, Name: "digits", Owner: "alice",
		Import: compile.ImportOptions{Conversion: compile.ConversionOptions{Timesteps: 32}}})
	if err != nil {
		panic(err)
	}
	m, _ := rt.Model(n.ID)
	fmt.Println(n.Name, n.Owner, n.Network.Inputs, n.Network.Outputs, n.Target.Fits, m.Program.Task)
	// Output: digits alice 64 10 true classification
}
