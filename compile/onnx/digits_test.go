package onnx

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestDigits decodes the shared digits models and checks that Run
// reproduces torch's predictions on the whole test split and its logits on
// the reference samples.
func TestDigits(t *testing.T) {
	dir := filepath.Join("..", "testdata", "digits")
	var data struct {
		Test struct {
			Inputs [][]float32 `json:"inputs"`
			Labels []int       `json:"labels"`
		} `json:"test"`
	}
	var results struct {
		Models map[string]struct {
			Accuracy    float64     `json:"test_accuracy"`
			Predictions []int       `json:"test_predictions"`
			Logits      [][]float32 `json:"reference_logits"`
		} `json:"models"`
	}
	for name, v := range map[string]any{"digits_test.json": &data, "results.json": &results} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	shapes := map[string][]int{"mlp": {1, 64}, "cnn": {1, 1, 8, 8}}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(filepath.Join(dir, name+".onnx"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := Decode(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := results.Models[name]
			correct, agree := 0, 0
			for i, x := range data.Test.Inputs {
				out, err := m.Run(map[string]*Tensor{"input": {DType: Float32, Shape: shape, Data: x}})
				if err != nil {
					t.Fatal(err)
				}
				logits := out["logits"].Data
				best := 0
				for k, v := range logits {
					if v > logits[best] {
						best = k
					}
				}
				if best == data.Test.Labels[i] {
					correct++
				}
				if best == want.Predictions[i] {
					agree++
				}
				if i < len(want.Logits) {
					for k, v := range want.Logits[i] {
						if d := v - logits[k]; d > 1e-3 || d < -1e-3 {
							t.Fatalf("sample %d logit %d = %v, torch %v", i, k, logits[k], v)
						}
					}
				}
			}
			acc := float64(correct) / float64(len(data.Test.Labels))
			t.Logf("%s: Run accuracy %.4f (torch %.4f), %d/%d predictions agree", name, acc, want.Accuracy, agree, len(data.Test.Labels))
			if agree != len(data.Test.Labels) || acc != want.Accuracy {
				t.Errorf("accuracy %.4f vs torch %.4f; %d of %d predictions agree", acc, want.Accuracy, agree, len(data.Test.Labels))
			}
		})
	}
}
