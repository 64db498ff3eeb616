// Package models holds the built-in neuro-1 spiking language models and
// the digits classifier.
//
// Each language model lives in a package of its own that embeds its
// weights, so that a program carries only the models it imports:
//
//	import _ "github.com/neuro-go/neuro/models/lite"     // neuro-1-lite, 1.7 MB
//	import _ "github.com/neuro-go/neuro/models/standard" // neuro-1-standard, 7.4 MB
//	import _ "github.com/neuro-go/neuro/models/heavy"    // neuro-1-heavy, 22 MB
//	import _ "github.com/neuro-go/neuro/models/all"      // all three
//
// Importing a model package adds the model to this package's list (Names).
// Its weights are the PyTorch state_dict that models/train wrote. Loading
// one imports it through compile/pytorch, the path any user's .pt file
// takes, compiles it for the CPU, and attaches the tokenizer it was trained
// with and its model card, whose figures come from the training run's
// results.json and the bench/neuro1 measurements embedded beside the
// weights. Nothing is read from disk or the network.
//
// One call registers every linked model into a runtime, and one deploys
// them:
//
//	rt := runtime.New(nil)
//	if err := models.Register(rt); err != nil { ... }
//	if _, err := models.Deploy(ctx, rt, nil); err != nil { ... }
//
// Register adds the linked language models (neuro-1-standard also answers
// to "neuro-1") and the digits classifier, which this package embeds
// itself (144 KB). Deploy puts each on the cpu device and neuro-1-lite on
// every neuromorphic emulator that is linked in and can hold it, or, with
// DeployOptions, all of them on one device, or on mock devices that run
// nothing.
package models

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed" // speed.json
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/neuro-go/neuro/compile"
	_ "github.com/neuro-go/neuro/models/lima" // the "pytorch" importer, with the neuro-1 architecture
	"github.com/neuro-go/neuro/models/tokenizers"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/cpu" // the device Deploy places every model on
	"github.com/neuro-go/neuro/runtime/hal/mock"
	"github.com/neuro-go/neuro/snn"
	"github.com/neuro-go/neuro/tokenizer"
)

// The built-in models' ids.
const (
	Lite     = "neuro-1-lite"
	Standard = "neuro-1-standard"
	Heavy    = "neuro-1-heavy"
)

// ContextLength is the most tokens one sequence may hold. The models'
// state has the same size at any length (leaky integrators and spikes, no
// cache of past tokens); the limit bounds a request. They were trained on
// windows of 128 tokens.
const ContextLength = 2048

//go:embed speed.json
var speedJSON []byte

// Builtin is one embedded language model, as its package provides it to
// Add.
type Builtin struct {
	ID      string
	Aliases []string
	// Files holds the model's files: model.pt (its state_dict), ranges.json
	// (its graded neurons' ranges, from models/train/calibrate),
	// results.json (its training run's record) and baseline.json (the
	// record of the GRU it is measured against).
	Files fs.FS
	// Run and Baseline name the training runs under models/train/runs
	// that made the weights and the baseline.
	Run, Baseline string
	// Tokenizer is the id of its tokenizer in package models/tokenizers.
	Tokenizer string
	// Size is its train.py --size.
	Size string
}

var (
	mu       sync.RWMutex
	builtins []*Builtin
)

// order is the order Names lists the models in: smallest first.
var order = []string{Lite, Standard, Heavy}

// Add makes an embedded model known to Names, Load, Register and Deploy.
// Each model's package calls it from init; a program links a model by
// importing its package. Add panics when the id is taken, as a second
// registration is a programming error.
func Add(b *Builtin) {
	mu.Lock()
	defer mu.Unlock()
	if slices.ContainsFunc(builtins, func(o *Builtin) bool { return o.ID == b.ID }) {
		panic("models: Add called twice for " + b.ID)
	}
	builtins = append(builtins, b)
	slices.SortStableFunc(builtins, func(x, y *Builtin) int {
		return rank(x.ID) - rank(y.ID)
	})
}

func rank(id string) int {
	if i := slices.Index(order, id); i >= 0 {
		return i
	}
	return len(order)
}

// Names lists the linked language models, smallest first.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	var out []string
	for _, b := range builtins {
		out = append(out, b.ID)
	}
	return out
}

// Lookup returns the linked model whose id or alias is id.
func Lookup(id string) (*Builtin, error) {
	mu.RLock()
	defer mu.RUnlock()
	i := slices.IndexFunc(builtins, func(b *Builtin) bool { return b.ID == id || slices.Contains(b.Aliases, id) })
	if i >= 0 {
		return builtins[i], nil
	}
	if len(builtins) == 0 {
		return nil, fmt.Errorf("models: no built-in model %q: none is linked; import its package, e.g. _ \"github.com/neuro-go/neuro/models/lite\", or _ \"github.com/neuro-go/neuro/models/all\" for every one", id)
	}
	var names []string
	for _, b := range builtins {
		names = append(names, b.ID)
	}
	return nil, fmt.Errorf("models: no built-in model %q (linked: %s; the others are linked by importing github.com/neuro-go/neuro/models/lite, /standard or /heavy)", id, strings.Join(names, ", "))
}

// Load imports, compiles and describes one linked model. Each call builds
// a new Model.
func Load(id string) (*runtime.Model, error) {
	b, err := Lookup(id)
	if err != nil {
		return nil, err
	}
	w, err := fs.ReadFile(b.Files, "model.pt")
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", id, err)
	}
	g, _, err := compile.Import("pytorch", bytes.NewReader(w), int64(len(w)), &compile.ImportOptions{Dt: dt})
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", id, err)
	}
	p, _, err := compile.Compile(g, &compile.Options{Name: b.ID, Task: compile.TaskCausalLM, Dt: dt, Timesteps: 1})
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", id, err)
	}
	p.Input = compile.Encoding{Kind: compile.InputOneHot, Node: "token", Size: p.Input.Size}
	p.Output = compile.Decoding{Kind: compile.OutputLogits, Node: "logits", Size: p.Output.Size}
	sum := sha256.Sum256(w)
	p.Source = compile.Source{Format: "pytorch", Bytes: int64(len(w)), SHA256: hex.EncodeToString(sum[:])}
	p.Metadata = map[string]string{"context_length": strconv.Itoa(ContextLength), "tokenizer": b.Tokenizer}
	if err := b.ranges(p); err != nil {
		return nil, fmt.Errorf("models: %s: %w", id, err)
	}
	tok, err := tokenizers.Load(b.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", id, err)
	}
	card, err := b.card()
	if err != nil {
		return nil, fmt.Errorf("models: %s: %w", id, err)
	}
	return &runtime.Model{ID: b.ID, Aliases: b.Aliases, Program: p, Tokenizer: tok, Card: card, OwnedBy: "neuro"}, nil
}

// dt is the time step the models were trained for: one step per token.
const dt = 1e-3

// ranges sets p.Ranges from the run's ranges.json: its graded neurons'
// ranges on training text, written by models/train/calibrate, for the
// fixed-point devices (runtime/hal/loihi sizes its graded spikes by them).
func (b *Builtin) ranges(p *compile.Program) error {
	raw, err := fs.ReadFile(b.Files, "ranges.json")
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &p.Ranges); err != nil {
		return fmt.Errorf("ranges.json: %w", err)
	}
	return p.CheckRanges()
}

// Register loads every linked model into rt: the language models whose
// packages the program imports, and the digits classifier. It also adds
// the tokenizers package models/tokenizers ships (runtime.AddTokenizer),
// which the language models callers compile may name.
func Register(rt *runtime.Runtime) error {
	for _, name := range tokenizers.Names() {
		rt.AddTokenizer(name, func() (*tokenizer.Tokenizer, error) { return tokenizers.Load(name) })
	}
	for _, id := range append(Names(), Digits) {
		var m *runtime.Model
		var err error
		if id == Digits {
			m, err = LoadDigits()
		} else {
			m, err = Load(id)
		}
		if err != nil {
			return err
		}
		if err := rt.RegisterModel(m); err != nil {
			return fmt.Errorf("models: %w", err)
		}
	}
	return nil
}

// DeployOptions choose where the built-in models run. The zero value is
// the default placement.
type DeployOptions struct {
	// Device, when set to a device other than "cpu", places every model
	// there as "<model>-<device>" instead. A model the device cannot hold
	// runs on cpu ("<model>-cpu"), and Deploy says so in its error-free
	// Fallbacks.
	Device string
	// Mock places the models on mock devices (package runtime/hal/mock)
	// that stand in for the real ones: the same deployments, tokenizers
	// and limits, and nothing runs.
	Mock bool
	// Precision is the weight precision of the neuro-1 models on cpu:
	// "int8" (the default, ""), "bfloat16" or "float32" (exact, as
	// trained). int8 costs at most +0.07% held-out bits per byte and
	// streams a quarter of float32's bytes (bench/RESULTS.md). The digits
	// classifier, and every network a user compiles, keep the cpu
	// device's own default, float32.
	Precision string
}

// DefaultPrecision is the neuro-1 models' weight precision on cpu when
// DeployOptions.Precision is empty.
const DefaultPrecision = "int8"

// Placement is what Deploy did.
type Placement struct {
	Deployments []*runtime.Deployment
	// Fallbacks names the models that the chosen device could not hold,
	// each with the reason, now deployed on cpu instead.
	Fallbacks map[string]error
}

// Deploy deploys the registered built-in models. By default each goes on
// "cpu" as "<model>-cpu", and neuro-1-lite and the digits classifier also
// on every other linked device that holds them, as "<model>-<device>" (a
// device that cannot hold one is skipped). An error is returned when a model cannot be
// deployed anywhere.
func Deploy(ctx context.Context, rt *runtime.Runtime, opts *DeployOptions) (*Placement, error) {
	var o DeployOptions
	if opts != nil {
		o = *opts
	}
	if o.Precision == "" {
		o.Precision = DefaultPrecision
	}
	prec, err := snn.ParsePrecision(o.Precision)
	if err != nil {
		return nil, fmt.Errorf("models: DeployOptions.Precision: %w", err)
	}
	out := &Placement{Fallbacks: map[string]error{}}
	deploy := func(id, device string) error {
		spec := runtime.DeploymentSpec{ID: id + "-" + device, Model: id, Device: device}
		if device == cpu.Name && id != Digits && !o.Mock {
			dev, err := cpu.New(&cpu.Config{Precision: prec})
			if err != nil {
				return err
			}
			spec.Dev = dev
		}
		if o.Mock {
			base, err := hal.Open(device, hal.Config{})
			if err != nil {
				return err
			}
			m, err := rt.Model(id)
			if err != nil {
				return err
			}
			spec.Dev = mock.New(base, &mock.Options{Tokens: runtime.MockTokens(m.Tokenizer)}) // none for the classifier
		}
		d, err := rt.Deploy(ctx, spec)
		if err == nil {
			out.Deployments = append(out.Deployments, d)
		}
		return err
	}
	for _, id := range append(Names(), Digits) {
		if _, err := rt.Model(id); err != nil {
			continue
		}
		if o.Device != "" && o.Device != "cpu" {
			err := deploy(id, o.Device)
			if err == nil {
				continue
			}
			out.Fallbacks[id] = err
		}
		if err := deploy(id, "cpu"); err != nil {
			return out, fmt.Errorf("models: %w", err)
		}
	}
	if o.Device != "" && o.Device != "cpu" {
		return out, nil
	}
	for _, id := range []string{Lite, Digits} {
		if _, err := rt.Model(id); err != nil {
			continue
		}
		for _, dev := range hal.Devices() {
			if dev != "cpu" {
				deploy(id, dev) // a device that cannot hold it is skipped
			}
		}
	}
	return out, nil
}

// results is what train.py writes to results.json.
type results struct {
	Arch string `json:"arch"`
	Cfg  struct {
		Vocab, D, K, H, Layers int
		LIF                    int // 1: the MLP's hidden neurons are LIF, not Threshold (train.py --set lif=1)
		Shift                  int // shift channels a block: the previous token's current (train.py --set shift=j)
	} `json:"cfg"`
	Params       int     `json:"params"`
	Steps        int     `json:"steps"`
	TrainTokens  int     `json:"train_tokens"`
	TrainSeconds float64 `json:"train_seconds"`
	Device       string  `json:"device"`
	DeviceName   string  `json:"device_name"` // the GPU's or CPU's name (absent from older runs)
	// Averaged is set on a run made by average.py: its weights are the
	// exponential moving average of another run's (train.py --ema).
	Averaged *struct {
		Run   string  `json:"run"`
		Decay float64 `json:"decay"`
	} `json:"averaged"`
	Args struct {
		Seed    int     `json:"seed"`
		Batch   int     `json:"batch"`
		Seq     int     `json:"seq"`
		Fanin   bool    `json:"fanin"`   // --fanin: heavy has the fan-in parametrisation without it
		Distill string  `json:"distill"` // the teacher's run, if any
		Set     string  `json:"set"`     // --set: widths other than the size's
		Slope   float64 `json:"slope"`   // --slope: the surrogate gradient's, 5 unless set
		LR      float64 `json:"lr"`      // --lr: the peak learning rate
		WD      float64 `json:"wd"`      // --wd: AdamW's weight decay, 0.01 unless set
		// --wd-params: "matrices" when the decay spared biases and time
		// constants; "all" or absent (older runs) when it did not.
		WDParams string `json:"wd_params"`
		// --wd-skip: parameters the decay spared by name (mix_p and spk_p:
		// the LIs' and LIF neurons' time constants), on top of WDParams.
		WDSkip string `json:"wd_skip"`
	} `json:"args"`
	Counts struct {
		Spiking  int `json:"spiking_neurons"`
		LI       int `json:"li_neurons"`
		Synapses int `json:"synapses"` // weights of the synapse nodes, embedding and readout each counted
	} `json:"counts"`
	Heldout struct {
		Sources map[string]struct {
			BPB float64 `json:"bpb"`
		} `json:"sources"`
		BPB   float64   `json:"bpb"`
		Rates []float64 `json:"spike_rate_per_layer"`
	} `json:"heldout"`
	SpikeRate float64 `json:"spike_rate_overall"`
}

// flags are the train.py options beyond the architecture and size
// that the run was trained with.
func (r *results) flags() string {
	var f string
	if r.Args.Fanin {
		f += " --fanin"
	}
	if r.Args.Distill != "" {
		f += " --distill " + r.Args.Distill
	}
	if r.Args.Set != "" {
		f += " --set " + r.Args.Set
	}
	if r.Args.Slope != 0 && r.Args.Slope != 5 {
		f += fmt.Sprintf(" --slope %g", r.Args.Slope)
	}
	if r.Args.LR != 0 && r.Args.LR != 3e-3 {
		f += fmt.Sprintf(" --lr %g", r.Args.LR)
	}
	if r.Args.WD != 0 && r.Args.WD != 0.01 {
		f += fmt.Sprintf(" --wd %g", r.Args.WD)
	}
	if r.Args.WDParams == "matrices" {
		f += " --wd-params matrices"
	}
	if r.Args.WDSkip != "" {
		f += " --wd-skip " + r.Args.WDSkip
	}
	return f
}

// machine names what the run trained on, for a card.
func (r *results) machine() string {
	if r.DeviceName != "" {
		return r.DeviceName
	}
	return r.Device
}

// averaging says, for a card, whether the weights are an average over
// training, and at which decay.
func (r *results) averaging() string {
	if r.Averaged == nil {
		return ""
	}
	return fmt.Sprintf("the exponential moving average of its training weights (train.py --ema %g, run %s)", r.Averaged.Decay, r.Averaged.Run)
}

// decay says how the run's weight decay was applied, for a card.
func (r *results) decay() string {
	wd := r.Args.WD
	if wd == 0 {
		wd = 0.01
	}
	if r.Args.WDParams == "matrices" {
		return fmt.Sprintf("a weight decay of %g on its weight matrices (not its biases)", wd)
	}
	return fmt.Sprintf("a weight decay of %g", wd)
}

func readResults(fsys fs.FS, name string) (*results, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var r results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &r, nil
}

// speed is bench/neuro1's measurement of one model, as speed.json holds it.
type speed struct {
	TokensPerSecond        map[string]float64 `json:"tokens_per_second"`         // "batch1", "batch8"
	PyTorchTokensPerSecond map[string]float64 `json:"pytorch_tokens_per_second"` // the same, PyTorch 1.13, 2 threads
	StateBytes             int                `json:"state_bytes_per_sequence"`
	Machine                string             `json:"machine"`
	Precision              string             `json:"precision"` // the Go side's weights; PyTorch's are float32
}

func readSpeed(id string) (*speed, error) {
	var all map[string]*speed
	if err := json.Unmarshal(speedJSON, &all); err != nil {
		return nil, fmt.Errorf("speed.json: %w", err)
	}
	return all[id], nil
}

func (b *Builtin) card() (runtime.Card, error) {
	r, err := readResults(b.Files, "results.json")
	if err != nil {
		return runtime.Card{}, err
	}
	c := r.Cfg
	hidden := "threshold neurons"
	if c.LIF == 1 {
		hidden = "LIF neurons, a learned time constant each"
	}
	mixing := fmt.Sprintf("%d LI neurons", c.K)
	if c.Shift > 0 {
		mixing += fmt.Sprintf(", and %d shift channels that carry the previous token's current, one step delayed", c.Shift)
	}
	card := runtime.Card{
		Description: fmt.Sprintf("%s: a spiking language model trained by the Neuro project on its own corpus (stories, Shakespeare, public-domain books and open chat datasets); it answers as an assistant in the Neuro chat template.", b.ID),
		Architecture: fmt.Sprintf("lima: tied token embedding (vocabulary %d, width %d); %d blocks of leaky-integrator token mixing (%s) and a spiking MLP (%d %s) that both add to a residual current; tied readout. One timestep per token; no attention, normalisation or multiplicative gates.",
			c.Vocab, c.D, c.Layers, mixing, c.H, hidden),
		Parameters: r.Params,
		Neurons:    r.Counts.Spiking + r.Counts.LI,
		Synapses:   r.Counts.Synapses,
		Training: fmt.Sprintf("train.py --arch %s --size %s%s: %d steps of %d windows × %d tokens (%.1fM tokens) in %.0f minutes on %s, seed %d; tokenizer %s.",
			r.Arch, b.Size, r.flags(), r.Steps, r.Args.Batch, r.Args.Seq, float64(r.TrainTokens)/1e6, r.TrainSeconds/60, r.machine(), r.Args.Seed, b.Tokenizer),
		License: "Weights: Apache-2.0, as the Neuro project. Training data (the project's corpus): Topical-Chat and TinyStories under CDLA-Sharing-1.0, CaSiNo under CC BY 4.0 (Chawla et al., 2021), Taskmaster-4 and the Self-Dialogue Corpus subset as their manifests state, tinyshakespeare and Project Gutenberg books in the public domain; the training run's NOTICE lists each source.",
		Quality: map[string]float64{"heldout_bits_per_byte": round(r.Heldout.BPB, 4)},
		Extra: map[string]any{
			"timesteps_per_token": 1,
			"spiking_neurons":     r.Counts.Spiking,
			"leaky_integrators":   r.Counts.LI,
			// The fraction of spiking neurons that fire per timestep.
			"spike_rate":           round(r.SpikeRate, 4),
			"spike_rate_per_layer": roundAll(r.Heldout.Rates, 4),
			"training_seconds":     round(r.TrainSeconds, 0),
			// The run under models/train/runs that made the weights; its
			// reference.pt is the equivalence fixture.
			"training_run":       b.Run,
			"tokenizer":          b.Tokenizer,
			"context_length":     ContextLength,
			"state_per_sequence": "constant: one value per leaky integrator (and per LIF neuron and shift channel), whatever the context length",
		},
	}
	if a := r.averaging(); a != "" {
		card.Training += " The weights are " + a + "."
	}
	for _, src := range slices.Sorted(maps.Keys(r.Heldout.Sources)) {
		card.Quality["heldout_bits_per_byte."+src] = round(r.Heldout.Sources[src].BPB, 4)
	}
	if base, err := readResults(b.Files, "baseline.json"); err == nil {
		card.Quality["baseline_heldout_bits_per_byte"] = round(base.Heldout.BPB, 4)
		card.Quality["spiking_cost"] = round(r.Heldout.BPB/base.Heldout.BPB-1, 4)
		baseline := fmt.Sprintf("a GRU of %d parameters trained on the same data for the same steps at a peak learning rate of %g and %s; spiking_cost is the relative difference in held-out bits per byte", base.Params, base.Args.LR, base.decay())
		switch r.Args.Distill {
		case "":
		case b.Baseline:
			baseline += "; the spiking model learnt from the GRU's next-token distributions as well as from the text (distillation)"
		default:
			baseline += "; the spiking model learnt from the next-token distributions of " + r.Args.Distill + " as well as from the text (distillation)"
		}
		if a := base.averaging(); a != "" {
			baseline += "; the GRU's weights are " + a
		}
		card.Extra["baseline"] = baseline
	} else if !errors.Is(err, fs.ErrNotExist) {
		return runtime.Card{}, err
	}
	sp, err := readSpeed(b.ID)
	if err != nil {
		return runtime.Card{}, err
	}
	if sp != nil {
		card.Extra["tokens_per_second"] = map[string]float64{"batch1": round(sp.TokensPerSecond["batch1"], 0), "batch8": round(sp.TokensPerSecond["batch8"], 0)}
		card.Extra["pytorch_tokens_per_second"] = map[string]float64{"batch1": round(sp.PyTorchTokensPerSecond["batch1"], 0), "batch8": round(sp.PyTorchTokensPerSecond["batch8"], 0)}
		card.Extra["speed_measured"] = "bench/neuro1/compare.sh: greedy generation at " + sp.Precision + " weights (PyTorch's float32), PyTorch 1.13 on 2 threads in the same run, on " + sp.Machine + "; other machines differ"
		card.Extra["state_bytes_per_sequence"] = sp.StateBytes
	}
	return card, nil
}

// round keeps d decimal places of a figure for a card.
func round(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}

func roundAll(xs []float64, d int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = round(x, d)
	}
	return out
}
