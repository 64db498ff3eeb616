// Command digits measures the built-in classifier neuro-1-digits over the
// whole test split of scikit-learn's digits (450 images), through the
// REST run endpoint of a server started in-process, on every device it
// is deployed on, against the ANN it was converted from:
//
//	go run ./bench/digits             # prints the table
//	go run ./bench/digits -write      # and writes models/digits/results.json, which the card reads
//
// Each run sends -batch images per request; the figures per inference
// divide the run's usage by its samples.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/neuro-go/neuro/bench/roofline"
	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/httpapi/client"
	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all" // the neuro-1 language models
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	_ "github.com/neuro-go/neuro/runtime/hal/loihi"
)

func main() {
	write := flag.Bool("write", false, "write models/digits/results.json")
	batch := flag.Int("batch", 32, "images per run request")
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	if err := run(context.Background(), *root, *batch, *write, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "digits:", err)
		os.Exit(1)
	}
}

type deviceResult struct {
	Accuracy      float64 `json:"accuracy"`
	EnergyUJ      float64 `json:"energy_uj_per_inference"`
	DeviceMS      float64 `json:"device_ms_per_inference"`
	SpikesPerItem float64 `json:"spikes_per_inference"`
}

type results struct {
	Command     string                   `json:"command"`
	Machine     string                   `json:"machine"`
	TestSamples int                      `json:"test_samples"`
	Timesteps   int                      `json:"timesteps"`
	ANNAccuracy float64                  `json:"ann_accuracy"`
	Devices     map[string]*deviceResult `json:"devices"`
}

func run(ctx context.Context, root string, batch int, write bool, out io.Writer) error {
	var split struct {
		Test struct {
			Inputs [][]float32 `json:"inputs"`
			Labels []int       `json:"labels"`
		} `json:"test"`
	}
	var ann struct {
		Models map[string]struct {
			TestAccuracy float64 `json:"test_accuracy"`
		} `json:"models"`
	}
	for path, v := range map[string]any{"digits_test.json": &split, "results.json": &ann} {
		b, err := os.ReadFile(filepath.Join(root, "compile", "testdata", "digits", path))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	rt := runtime.New(nil)
	defer rt.Close()
	if err := models.Register(rt); err != nil {
		return err
	}
	pl, err := models.Deploy(ctx, rt, nil)
	if err != nil {
		return err
	}
	srv, err := httpapi.New(rt, &httpapi.Options{Keys: map[string]string{"sk-bench": "bench"}, RequestsPerMinute: -1})
	if err != nil {
		return err
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c, err := client.New(hs.URL, &client.Options{APIKey: "sk-bench"})
	if err != nil {
		return err
	}
	res := &results{Command: "go run ./bench/digits -write", Machine: roofline.CPUName(), TestSamples: len(split.Test.Inputs),
		Timesteps: models.DigitsTimesteps, ANNAccuracy: ann.Models["mlp"].TestAccuracy, Devices: map[string]*deviceResult{}}
	fmt.Fprintf(out, "neuro-1-digits over %d test images, %d timesteps, through POST /v1/deployments/{id}/run (%s)\n\n", res.TestSamples, res.Timesteps, res.Machine)
	fmt.Fprintf(out, "| device | accuracy | ANN | energy per inference | device time per inference | spikes per inference |\n|---|---:|---:|---:|---:|---:|\n")
	for _, d := range pl.Deployments {
		if d.Model.ID != models.Digits {
			continue
		}
		dr := &deviceResult{}
		correct := 0
		for lo := 0; lo < len(split.Test.Inputs); lo += batch {
			hi := min(lo+batch, len(split.Test.Inputs))
			inputs := make([]any, 0, hi-lo)
			for _, x := range split.Test.Inputs[lo:hi] {
				inputs = append(inputs, x)
			}
			r, err := c.Run(ctx, d.ID, &client.RunRequest{Inputs: inputs})
			if err != nil {
				return fmt.Errorf("%s: %w", d.ID, err)
			}
			for k, o := range r.Outputs {
				if o.Prediction == split.Test.Labels[lo+k] {
					correct++
				}
			}
			dr.EnergyUJ += r.Usage.EnergyUJ
			dr.DeviceMS += r.Usage.DeviceMS
			dr.SpikesPerItem += r.Usage.Spikes
		}
		n := float64(len(split.Test.Inputs))
		dr.Accuracy = float64(correct) / n
		dr.EnergyUJ /= n
		dr.DeviceMS /= n
		dr.SpikesPerItem /= n
		res.Devices[d.Device.Name] = dr
		fmt.Fprintf(out, "| %s | %.2f%% | %.2f%% | %.3g µJ | %.3g ms | %.0f |\n", d.Device.Name, 100*dr.Accuracy, 100*res.ANNAccuracy, dr.EnergyUJ, dr.DeviceMS, dr.SpikesPerItem)
	}
	if !write {
		return nil
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, "models", "digits", "results.json"), append(b, '\n'), 0o644)
}
