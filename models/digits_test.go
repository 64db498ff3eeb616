package models_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/neuro-go/neuro/models"
	"github.com/neuro-go/neuro/runtime"
)

// The digits classifier deployed on cpu classifies the whole test split
// as its card says (the card's figure comes from bench/digits), within
// half a point of the ANN it was converted from.
func TestDigitsAccuracyMatchesCard(t *testing.T) {
	m, err := models.LoadDigits()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../compile/testdata/digits/digits_test.json")
	if err != nil {
		t.Fatal(err)
	}
	var split struct {
		Test struct {
			Inputs [][]float32 `json:"inputs"`
			Labels []int       `json:"labels"`
		} `json:"test"`
	}
	if err := json.Unmarshal(b, &split); err != nil {
		t.Fatal(err)
	}
	rt := runtime.New(nil)
	defer rt.Close()
	if err := rt.RegisterModel(m); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := rt.Deploy(ctx, runtime.DeploymentSpec{ID: "d", Model: models.Digits, MaxBatch: 64}); err != nil {
		t.Fatal(err)
	}
	correct := 0
	for lo := 0; lo < len(split.Test.Inputs); lo += 128 {
		req := &runtime.RunRequest{Deployment: "d"}
		for _, x := range split.Test.Inputs[lo:min(lo+128, len(split.Test.Inputs))] {
			req.Samples = append(req.Samples, runtime.Sample{Vector: x})
		}
		res, err := rt.Run(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for k, o := range res.Outputs {
			if o.Prediction == split.Test.Labels[lo+k] {
				correct++
			}
		}
	}
	acc := float64(correct) / float64(len(split.Test.Inputs))
	card, ann := m.Card.Quality["accuracy.cpu"], m.Card.Quality["ann_accuracy"]
	if math.Abs(acc-card) > 5e-5 { // the card rounds to four places
		t.Errorf("accuracy %.4f on cpu, the card says %.4f: run go run ./bench/digits -write", acc, card)
	}
	if acc < ann-0.005 {
		t.Errorf("spiking accuracy %.4f is more than half a point below the ANN's %.4f", acc, ann)
	}
}
