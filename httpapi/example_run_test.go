package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu" // registers the "cpu" device
	"github.com/neuro-go/neuro/snn"
)

// A spiking network (not a language model) served over HTTP: compiled
// in code, deployed on the CPU simulator, and run with
// POST /v1/deployments/{id}/run. Each input vector is presented at every
// timestep; the answer holds each sample's output spike counts and
// prediction (the output with the most spikes).
func ExampleNew_run() {
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{2}}).
		Add("syn", &snn.Linear{Weight: &snn.Tensor{Shape: []int{2, 2}, Data: []float32{1, 0, 0, 1}}}).
		Add("lif", &snn.LIF{Shape: []int{2},
			Tau: []float64{10e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}).
		Add("out", &snn.Output{}).
		Connect("in", "syn", "lif", "out")
	prog, _, err := compile.Compile(g, &compile.Options{Name: "pair", Task: compile.TaskClassification, Timesteps: 50})
	if err != nil {
		panic(err)
	}
	rt := runtime.New(nil)
	defer rt.Close()
	if err := rt.RegisterModel(&runtime.Model{ID: "pair", Program: prog}); err != nil {
		panic(err)
	}
	if _, err := rt.Deploy(context.Background(), runtime.DeploymentSpec{ID: "pair-cpu", Model: "pair"}); err != nil {
		panic(err)
	}
	srv, err := httpapi.New(rt, &httpapi.Options{Keys: map[string]string{"sk-example": "alice"}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	req := httptest.NewRequest("POST", "/v1/deployments/pair-cpu/run",
		strings.NewReader(`{"inputs":[[3,1.5],[1.5,3]]}`))
	req.Header.Set("Authorization", "Bearer sk-example")
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	var res struct {
		Outputs []struct {
			SpikeCounts []float32 `json:"spike_counts"`
			Prediction  int       `json:"prediction"`
		} `json:"outputs"`
		Usage struct {
			Timesteps int `json:"timesteps"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		panic(err)
	}
	fmt.Println(w.Code, http.StatusText(w.Code))
	for _, o := range res.Outputs {
		fmt.Println("spikes", o.SpikeCounts, "prediction", o.Prediction)
	}
	fmt.Println("timesteps", res.Usage.Timesteps)
	// Output:
	// 200 OK
	// spikes [10 4] prediction 0
	// spikes [4 10] prediction 1
	// timesteps 100
}
