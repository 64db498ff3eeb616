package models

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime"
)

// Digits is the built-in classifier of handwritten digits: scikit-learn's
// 8×8 images (pixel/16, so values in [0, 1], row-major) in, ten scores
// out, the prediction their argmax. It is a PyTorch MLP (64-128-64-10,
// ReLU) trained by compile/testdata/digits/train_digits.py, saved whole
// with torch.save, and converted at load to a spiking network of IF
// neurons (ANN-to-SNN, calibrated on 200 training images) that integrates
// its readout over DigitsTimesteps steps.
const Digits = "neuro-1-digits"

// DigitsTimesteps is how many steps the classifier looks at an image.
const DigitsTimesteps = 64

//go:embed digits
var digitFiles embed.FS

// LoadDigits imports, converts and describes the digits classifier. Each
// call builds a new Model.
func LoadDigits() (*runtime.Model, error) {
	w, err := digitFiles.ReadFile("digits/mlp_module.pt")
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", Digits, err)
	}
	var calib struct {
		Inputs [][]float32 `json:"inputs"`
	}
	b, err := digitFiles.ReadFile("digits/calibration.json")
	if err == nil {
		err = json.Unmarshal(b, &calib)
	}
	if err != nil {
		return nil, fmt.Errorf("models: %s: calibration: %w", Digits, err)
	}
	g, rep, err := compile.Import("pytorch", bytes.NewReader(w), int64(len(w)), &compile.ImportOptions{
		Dt: dt, Conversion: compile.ConversionOptions{Calibration: calib.Inputs, Timesteps: DigitsTimesteps}})
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", Digits, err)
	}
	p, crep, err := compile.Compile(g, &compile.Options{Name: Digits, Task: compile.TaskClassification, Dt: dt, Timesteps: DigitsTimesteps})
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", Digits, err)
	}
	sum := sha256.Sum256(w)
	p.Source = compile.Source{Format: "pytorch", Bytes: int64(len(w)), SHA256: hex.EncodeToString(sum[:])}
	card, err := digitsCard(crep, rep)
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", Digits, err)
	}
	return &runtime.Model{ID: Digits, Program: p, Card: card, OwnedBy: "neuro"}, nil
}

// digitsResults is what bench/digits measures and writes to
// digits/results.json: the classifier over the whole test split, through
// the REST run endpoint, on each device.
type digitsResults struct {
	Command     string  `json:"command"`
	Machine     string  `json:"machine"`
	TestSamples int     `json:"test_samples"`
	Timesteps   int     `json:"timesteps"`
	ANNAccuracy float64 `json:"ann_accuracy"`
	Devices     map[string]struct {
		Accuracy      float64 `json:"accuracy"`
		EnergyUJ      float64 `json:"energy_uj_per_inference"`
		DeviceMS      float64 `json:"device_ms_per_inference"`
		SpikesPerItem float64 `json:"spikes_per_inference"`
	} `json:"devices"`
}

func digitsCard(crep *compile.Report, rep *compile.ImportReport) (runtime.Card, error) {
	card := runtime.Card{
		Description: Digits + ": a spiking classifier of 8×8 handwritten digits (scikit-learn's digits data set). " +
			"Input: 64 values, pixel/16 in [0, 1], row-major; run it with POST /v1/deployments/" + Digits + "-cpu/run.",
		Architecture: fmt.Sprintf("A PyTorch MLP 64-128-64-10 with ReLU, converted to IF neurons with subtractive reset and layer-wise threshold balancing on 200 training images; the readout integrates its input for %d timesteps and the prediction is the largest.", DigitsTimesteps),
		Parameters:   crep.Network.Parameters,
		Neurons:      crep.Network.Neurons,
		Synapses:     crep.Network.Synapses,
		Training:     "compile/testdata/digits/train_digits.py: Adam (lr 2e-3), batch 32, 60 epochs, seed 0, PyTorch 1.13; 1,347 training images (train_test_split, test_size 0.25, random_state 0).",
		License:      "Data: the UCI Optical Recognition of Handwritten Digits set as scikit-learn ships it (CC BY 4.0). Weights: Apache-2.0, as the Neuro project.",
		Quality:      map[string]float64{},
		Extra:        map[string]any{"timesteps_per_sample": DigitsTimesteps, "input": "64 values in [0, 1] (pixel/16), row-major 8×8"},
	}
	if rep != nil && rep.Conversion != nil {
		card.Extra["conversion"] = rep.Conversion
	}
	b, err := digitFiles.ReadFile("digits/results.json")
	if errors.Is(err, fs.ErrNotExist) {
		return card, nil
	}
	var r digitsResults
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		return card, fmt.Errorf("digits/results.json: %w", err)
	}
	card.Quality["ann_accuracy"] = round(r.ANNAccuracy, 4)
	for _, dev := range slices.Sorted(maps.Keys(r.Devices)) {
		d := r.Devices[dev]
		card.Quality["accuracy."+dev] = round(d.Accuracy, 4)
		card.Extra["energy_uj_per_inference."+dev] = round(d.EnergyUJ, 3)
		card.Extra["device_ms_per_inference."+dev] = round(d.DeviceMS, 4)
		card.Extra["spikes_per_inference."+dev] = round(d.SpikesPerItem, 0)
	}
	card.Extra["test_images"] = r.TestSamples
	card.Extra["measured"] = fmt.Sprintf("the whole test split through the REST run endpoint (%s) on %s", r.Command, r.Machine)
	return card, nil
}
