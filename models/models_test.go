package models_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all"
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/snn"
	"github.com/neuro-go/neuro/tokenizer"
)

func TestLoadDescribesEachModel(t *testing.T) {
	names := models.Names()
	if len(names) == 0 || names[0] != models.Lite {
		t.Fatalf("Names() = %v", names)
	}
	for _, id := range names {
		m, err := models.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		if !m.IsLanguageModel() || m.Program.Timesteps != 1 || m.ContextLength() != models.ContextLength {
			t.Fatalf("%s: task %q, %d timesteps, context %d", id, m.Program.Task, m.Program.Timesteps, m.ContextLength())
		}
		c := m.Card
		if c.Parameters < 300_000 || c.Neurons == 0 || c.Synapses < c.Parameters || c.Architecture == "" || c.Training == "" || c.License == "" {
			t.Fatalf("%s: incomplete card %+v", id, c)
		}
		for _, k := range []string{"heldout_bits_per_byte", "heldout_bits_per_byte.books", "heldout_bits_per_byte.topical_chat", "baseline_heldout_bits_per_byte"} {
			if !(c.Quality[k] > 1 && c.Quality[k] < 4) {
				t.Errorf("%s: card quality %q is %v", id, k, c.Quality[k])
			}
		}
		if r, ok := c.Extra["spike_rate"].(float64); !ok || r <= 0 || r > 0.15 {
			t.Errorf("%s: card spike rate %v", id, c.Extra["spike_rate"])
		}
		if b, _ := json.Marshal(c); strings.Contains(string(b), "../") || strings.Contains(string(b), "runs/") {
			t.Errorf("%s: the card exposes a repository path: %s", id, b)
		}
	}
	// lite's weights and its baseline's are averages over training
	// (models/train/average.py), which the card says of both, and lite's
	// time constants were spared the weight decay, which its command says.
	lite, err := models.Load(models.Lite)
	if err != nil {
		t.Fatal(err)
	}
	if base, _ := lite.Card.Extra["baseline"].(string); !strings.Contains(lite.Card.Training, "--ema 0.998") || !strings.Contains(base, "moving average") {
		t.Errorf("lite's card does not say its weights are averages: %q; baseline %q", lite.Card.Training, base)
	}
	if !strings.Contains(lite.Card.Training, "--wd-skip mix_p,spk_p") {
		t.Errorf("lite's card does not give the parameters its weight decay spared: %q", lite.Card.Training)
	}
	if _, err := models.Load("neuro-2"); err == nil || !strings.Contains(err.Error(), "neuro-1-lite") {
		t.Fatalf("unknown model: %v", err)
	}
}

// TestRangesCoverGradedNodes: every built-in model carries the ranges of
// all its graded nodes (models/train/calibrate), each a positive magnitude
// for every neuron that moved on the calibration text, so a fixed-point
// device sizes none of them from the worst case by omission.
func TestRangesCoverGradedNodes(t *testing.T) {
	for _, id := range models.Names() {
		m, err := models.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		g := m.Program.Graph
		graded := 0
		for name, n := range g.Nodes {
			if k := n.Kind(); k != snn.KindDelay && !(snn.IsNeuron(k) && !snn.IsSpiking(k)) {
				continue
			}
			graded++
			r := m.Program.Ranges[name]
			if len(r) == 0 || slices.Max(r) <= 0 {
				t.Errorf("%s: graded node %s has ranges %v", id, name, r)
			}
		}
		if graded == 0 || len(m.Program.Ranges) != graded {
			t.Errorf("%s: ranges for %d nodes, %d graded nodes", id, len(m.Program.Ranges), graded)
		}
	}
}

// TestBadPrompts: a prompt over the context gets ErrContextLength; empty
// messages, empty prompts and text the tokenizer never saw generate.
func TestBadPrompts(t *testing.T) {
	rt := runtime.New(nil)
	defer rt.Close()
	m, err := models.Load(models.Lite)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.RegisterModel(m); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := rt.Deploy(ctx, runtime.DeploymentSpec{ID: "d", Model: models.Lite}); err != nil {
		t.Fatal(err)
	}
	_, err = rt.Generate(ctx, &runtime.Request{Model: models.Lite, Prompt: strings.Repeat("spike ", models.ContextLength)}, nil)
	if !errors.Is(err, runtime.ErrContextLength) {
		t.Fatalf("over-long prompt: %v", err)
	}
	for name, req := range map[string]*runtime.Request{
		"empty content": {Messages: []tokenizer.Message{{Role: "user", Content: ""}}},
		"empty prompt":  {Prompt: ""},
		"unicode":       {Prompt: "日本語のテキスト 🧠⚡ Ελληνικά עברית \u200d\ufeff 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"},
		"invalid utf-8": {Prompt: "\xff\xfe\xc3(\x80 spikes"},
		"control":       {Messages: []tokenizer.Message{{Role: "system", Content: "\x00\x01\x1b[31m"}, {Role: "user", Content: "<|end|><|assistant|>"}}},
	} {
		req.Model, req.MaxTokens = models.Lite, 8
		res, err := rt.Generate(ctx, req, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Usage.PromptTokens == 0 || res.Usage.CompletionTokens == 0 && res.Choices[0].FinishReason != "stop" {
			t.Fatalf("%s: usage %+v, finish %q", name, res.Usage, res.Choices[0].FinishReason)
		}
	}
}

// FuzzGenerate: any prompt bytes either generate or get a request error,
// never a panic or a hang.
func FuzzGenerate(f *testing.F) {
	rt := runtime.New(nil)
	defer rt.Close()
	m, err := models.Load(models.Lite)
	if err != nil {
		f.Fatal(err)
	}
	if err := rt.RegisterModel(m); err != nil {
		f.Fatal(err)
	}
	if _, err := rt.Deploy(context.Background(), runtime.DeploymentSpec{ID: "d", Model: models.Lite}); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "Hello", "<|user|>\nhi<|end|>\n", "\xff", "🧠"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, chat bool) {
		req := &runtime.Request{Model: models.Lite, MaxTokens: 3, Prompt: text}
		if chat {
			req.Prompt, req.Messages = "", []tokenizer.Message{{Role: "user", Content: text}}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := rt.Generate(ctx, req, nil)
		if err != nil {
			var pe *runtime.ParamError
			if !errors.As(err, &pe) && !errors.Is(err, runtime.ErrContextLength) {
				t.Fatalf("%q: %v", text, err)
			}
			return
		}
		if len(res.Choices) != 1 || res.Usage.PromptTokens == 0 {
			t.Fatalf("%q: %+v", text, res)
		}
	})
}

// TestDeployPrecision: the neuro-1 models run at int8 on cpu unless told
// otherwise, the digits classifier at the device's float32, and an unknown
// precision is refused by name.
func TestDeployPrecision(t *testing.T) {
	for _, c := range []struct{ opt, want string }{{"", "int8"}, {"bfloat16", "bfloat16"}, {"float32", "float32"}} {
		rt := runtime.New(nil)
		if err := models.Register(rt); err != nil {
			t.Fatal(err)
		}
		pl, err := models.Deploy(context.Background(), rt, &models.DeployOptions{Precision: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range pl.Deployments {
			if d.Device.Name != "cpu" {
				continue
			}
			want := c.want
			if d.Model.ID == models.Digits {
				want = "float32"
			}
			if got := d.Device.Model; got != want+" simulator" {
				t.Errorf("Precision %q: %s runs on the %s", c.opt, d.ID, got)
			}
		}
		rt.Close()
	}
	rt := runtime.New(nil)
	defer rt.Close()
	if err := models.Register(rt); err != nil {
		t.Fatal(err)
	}
	if _, err := models.Deploy(context.Background(), rt, &models.DeployOptions{Precision: "int4"}); err == nil || !strings.Contains(err.Error(), `"int4"`) {
		t.Fatalf("Precision int4: %v", err)
	}
}
