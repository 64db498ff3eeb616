package client_test

import (
	"context"
	"os"
	"testing"

	_ "github.com/neuro-go/neuro/compile/onnx" // the format compiled below
	"github.com/neuro-go/neuro/httpapi/client"
)

// A network compiled, deployed, run in each input form and deleted
// through the client.
func TestRunLifecycle(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, nil)
	file, err := os.ReadFile("../../compile/testdata/digits/mlp.onnx")
	if err != nil {
		t.Fatal(err)
	}
	net, err := c.Compile(ctx, &client.CompileRequest{Format: "onnx", File: file, Options: map[string]any{"timesteps": 16}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.CreateDeployment(ctx, &client.CreateDeploymentRequest{Model: net.ID, Device: "cpu", ID: "digits", MaxBatchSize: 2, Precision: "bfloat16"})
	if err != nil || d.Status != "ready" || d.OwnedBy != "test" || d.Device.Model != "bfloat16 simulator" {
		t.Fatalf("%+v %v", d, err)
	}
	x := make([]float32, 64)
	x[10], x[20] = 1, 0.5
	rows := make([][]float32, 16)
	for i := range rows {
		rows[i] = x
	}
	run, err := c.Run(ctx, "digits", &client.RunRequest{Inputs: []any{x, rows, client.EventSample{Events: [][2]int{{0, 3}, {2, 9}}, Timesteps: 8}},
		Record: []string{"spikes"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Outputs) != 3 || run.Usage.Samples != 3 || run.Usage.Timesteps != 16+16+8 {
		t.Fatalf("%+v", run)
	}
	for i, v := range run.Outputs[0].SpikeCounts {
		if run.Outputs[1].SpikeCounts[i] != v {
			t.Fatalf("vector %v and matrix %v differ", run.Outputs[0].SpikeCounts, run.Outputs[1].SpikeCounts)
		}
	}
	if _, err := c.Run(ctx, "digits", &client.RunRequest{Inputs: []any{[]float32{1, 2}}}); !client.IsInvalidRequest(err) {
		t.Errorf("a short sample: %v", err)
	}
	if _, err := c.DeleteModel(ctx, net.ID); err == nil {
		t.Error("a network in use was deleted")
	}
	if del, err := c.DeleteDeployment(ctx, "digits"); err != nil || !del.Deleted {
		t.Fatalf("%+v %v", del, err)
	}
	if del, err := c.DeleteModel(ctx, net.ID); err != nil || !del.Deleted {
		t.Fatalf("%+v %v", del, err)
	}
	if _, err := c.GetModel(ctx, net.ID); !client.IsNotFound(err) {
		t.Errorf("deleted network: %v", err)
	}
}
