package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"

	_ "github.com/neuro-go/neuro/compile/onnx" // lets the server compile ONNX files
	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/httpapi/client"
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu" // the device networks are compiled for and run on
)

// A network's whole life through the client, against an httpapi server
// on an httptest listener: upload an ONNX digit classifier to be compiled
// into a spiking network, deploy it on the CPU simulator, classify three
// test images, and delete the deployment and the network.
func ExampleClient_Run() {
	ctx := context.Background()
	rt := runtime.New(nil)
	defer rt.Close()
	api, err := httpapi.New(rt, &httpapi.Options{Keys: map[string]string{"sk-example": "alice"}})
	if err != nil {
		panic(err)
	}
	defer api.Close()
	srv := httptest.NewServer(api)
	defer srv.Close()

	c, err := client.New(srv.URL, &client.Options{APIKey: "sk-example"})
	if err != nil {
		panic(err)
	}
	file, err := os.ReadFile("../../compile/testdata/digits/mlp.onnx")
	if err != nil {
		panic(err)
	}
	digits := loadDigits("../../compile/testdata/digits/digits_test.json")
	net, err := c.Compile(ctx, &client.CompileRequest{Format: "onnx", File: file, Name: "digits",
		Options: map[string]any{"timesteps": 32, "calibration": map[string]any{"samples": digits.Calibration.Inputs}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(net.Name, net.Status, net.OwnedBy, "neurons:", net.Network.Neurons)

	d, err := c.CreateDeployment(ctx, &client.CreateDeploymentRequest{Model: net.ID, ID: "digits-cpu", Device: "cpu"})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.ID, d.Status)

	var inputs []any
	for _, x := range digits.Test.Inputs[:3] {
		inputs = append(inputs, x)
	}
	run, err := c.Run(ctx, d.ID, &client.RunRequest{Inputs: inputs})
	if err != nil {
		panic(err)
	}
	for i, out := range run.Outputs {
		fmt.Printf("label %d, predicted %d\n", digits.Test.Labels[i], out.Prediction)
	}

	if _, err := c.DeleteDeployment(ctx, d.ID); err != nil {
		panic(err)
	}
	if _, err := c.DeleteModel(ctx, net.ID); err != nil {
		panic(err)
	}
	_, err = c.GetModel(ctx, net.ID)
	fmt.Println("deleted:", client.IsNotFound(err))
	// Output:
	// digits succeeded alice neurons: 202
	// digits-cpu ready
	// label 2, predicted 2
	// label 8, predicted 8
	// label 2, predicted 2
	// deleted: true
}

// digitsFile is the layout of the digits test fixture: the test split
// and the calibration images from the training split, pixel/16 row-major.
type digitsFile struct {
	Test struct {
		Inputs [][]float32 `json:"inputs"`
		Labels []int       `json:"labels"`
	} `json:"test"`
	Calibration struct {
		Inputs [][]float32 `json:"inputs"`
	} `json:"calibration"`
}

func loadDigits(path string) *digitsFile {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	var d digitsFile
	if err := json.Unmarshal(b, &d); err != nil {
		panic(err)
	}
	return &d
}
