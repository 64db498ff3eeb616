package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/tokenizer"
)

// Sentinel errors callers branch on with errors.Is.
var (
	ErrModelNotFound      = errors.New("runtime: model not found")
	ErrDeploymentNotFound = errors.New("runtime: deployment not found")
	ErrNotLanguageModel   = errors.New("runtime: model is not a language model")
	ErrOverloaded         = errors.New("runtime: overloaded")
	ErrDeviceUnavailable  = errors.New("runtime: device unavailable")
	ErrContextLength      = errors.New("runtime: prompt exceeds the model's context")
	ErrInvalidRequest     = errors.New("runtime: invalid request")
	ErrClosed             = errors.New("runtime: closed")
	ErrDuplicate          = errors.New("runtime: already registered")
)

// ParamError names the request field at fault; it wraps ErrInvalidRequest.
type ParamError struct {
	Param string
	Msg   string
}

func (e *ParamError) Error() string { return fmt.Sprintf("runtime: %s: %s", e.Param, e.Msg) }
func (e *ParamError) Unwrap() error { return ErrInvalidRequest }

// Options configure a Runtime. The zero value works.
type Options struct {
	// Logger receives operational events; nil is silent.
	Logger *slog.Logger
	// QueueDepth is how many sequences may wait for a slot on each
	// deployment before requests are refused with ErrOverloaded. Default
	// 4 × the deployment's total batch, and for a network at least
	// MinRunQueue samples.
	QueueDepth int
	// TelemetryRecords bounds the request records kept for windowed
	// telemetry, per caller (principal). Default 20,000.
	TelemetryRecords int
	// MaxPendingEvents bounds the events a streamed sequence may have
	// produced that its caller has not yet taken; past it the sequence
	// pauses (on devices that can step slots selectively, hal.SlotMasker),
	// so a slow consumer costs no memory beyond the bound. (A request
	// without a callback takes its events at the end.) Default 256.
	MaxPendingEvents int
	// DataDir, when set, is where Compile stores networks and Start the
	// owned deployments, so that they survive a restart: New registers the
	// networks already there, RestoreDeployments restarts the
	// deployments. Default: kept in memory only.
	DataDir string
	// Quota bounds what each owner may keep (networks, their bytes,
	// deployments); zero fields take the defaults.
	Quota Quota
	// PrefixCacheBytes bounds the prefix-state cache: the states of
	// language models after earlier requests' prompts and answers, from
	// which a request whose prompt extends one resumes. Least recently
	// used states go first. Default 256 MiB; negative disables the cache.
	PrefixCacheBytes int64
	// Now is the clock; default time.Now. Tests set it.
	Now func() time.Time
}

// Card describes a model for people: what it is, how it was made, how good
// it is.
type Card struct {
	Description  string `json:"description,omitempty"`
	Architecture string `json:"architecture,omitempty"`
	Parameters   int    `json:"parameters,omitempty"`
	Neurons      int    `json:"neurons,omitempty"`
	Synapses     int    `json:"synapses,omitempty"`
	Training     string `json:"training,omitempty"`
	License      string `json:"license,omitempty"`
	// Quality holds the measured figures, as numbers (held-out bits per
	// byte, accuracy), named by what they measure.
	Quality map[string]float64 `json:"quality,omitempty"`
	// Extra holds the rest: numbers as numbers, lists as lists, and
	// prose (how a figure was measured, and on which machine) as text.
	Extra map[string]any `json:"extra,omitempty"`
}

// Model is a registered network: a Program plus, for language models, the
// tokenizer (which carries the chat template).
type Model struct {
	ID        string
	Aliases   []string
	Program   *compile.Program
	Tokenizer *tokenizer.Tokenizer
	Card      Card
	OwnedBy   string
	Created   time.Time
	// Network is set on networks compiled through Compile: what the
	// compile found, and its owner.
	Network *Network

	// ports holds Ports' answer once RegisterModel has checked the
	// graph: working it out validates every weight again.
	ports *[2]int
}

// IsLanguageModel reports whether the model can generate text.
func (m *Model) IsLanguageModel() bool {
	return m.Program != nil && m.Program.Task == compile.TaskCausalLM && m.Tokenizer != nil
}

// CanChat reports whether the model is a language model with a chat
// template: one compiled without a template completes text only.
func (m *Model) CanChat() bool {
	return m.IsLanguageModel() && m.Tokenizer.ChatTemplate() != nil
}

// ContextLength is the most tokens a sequence may hold: the program's
// "context_length" metadata, or 0 when unbounded (a recurrent network's
// state does not grow with the context).
func (m *Model) ContextLength() int {
	if m.Program == nil {
		return 0
	}
	n, _ := strconv.Atoi(m.Program.Metadata["context_length"])
	return n
}

// Runtime holds models and deployments and runs generation. It is safe for
// concurrent use.
type Runtime struct {
	opts      Options
	log       *slog.Logger
	mu        sync.RWMutex
	models    map[string]*Model
	aliases   map[string]string
	deps      map[string]*Deployment
	telemetry *Telemetry
	infos     modelInfos
	closed    bool
	// reserved counts compiles past their quota check and not yet
	// registered, per owner, so that concurrent compiles cannot overrun
	// the quota together.
	reserved  map[string]reservation
	draining  sync.WaitGroup // deleted deployments finishing their work
	cache     *prefixCache   // nil when disabled
	responses *responseStore
	serials   atomic.Uint64 // of deployments (Deployment.serial)
	// tokenizers are the ones a compiled language model may name
	// (AddTokenizer).
	tokenizers map[string]func() (*tokenizer.Tokenizer, error)
}

// DefaultPrefixCacheBytes is Options.PrefixCacheBytes' default.
const DefaultPrefixCacheBytes = 256 << 20

// New returns an empty runtime.
func New(opts *Options) *Runtime {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.TelemetryRecords == 0 {
		o.TelemetryRecords = 20_000
	}
	if o.MaxPendingEvents == 0 {
		o.MaxPendingEvents = 256
	}
	o.Quota = o.Quota.withDefaults()
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Runtime{
		opts: o, log: log,
		models: map[string]*Model{}, aliases: map[string]string{}, deps: map[string]*Deployment{},
		telemetry: newTelemetry(o.TelemetryRecords, o.Now), reserved: map[string]reservation{},
	}
	if o.PrefixCacheBytes == 0 {
		o.PrefixCacheBytes = DefaultPrefixCacheBytes
	}
	if o.PrefixCacheBytes > 0 {
		r.cache = newPrefixCache(o.PrefixCacheBytes)
	}
	r.loadNetworks()
	r.loadResponses()
	return r
}

// CacheStats reports the prefix-state cache; the zero value when it is
// disabled.
func (r *Runtime) CacheStats() CacheStats {
	if r.cache == nil {
		return CacheStats{}
	}
	return r.cache.snapshot()
}

// Telemetry returns the runtime's telemetry store.
func (r *Runtime) Telemetry() *Telemetry { return r.telemetry }

// RegisterModel adds a model. Language models (Task "causal-lm") need a
// tokenizer and a program whose single Input takes one-hot tokens of the
// tokenizer's vocabulary and whose single Output gives that many logits.
func (r *Runtime) RegisterModel(m *Model) error {
	if m == nil || m.ID == "" || m.Program == nil || m.Program.Graph == nil {
		return fmt.Errorf("runtime: RegisterModel: model needs an ID and a program with a graph")
	}
	if err := m.Program.Graph.Validate(); err != nil {
		return fmt.Errorf("runtime: model %q: %w", m.ID, err)
	}
	in, out := m.Ports()
	m.ports = &[2]int{in, out}
	if m.Program.Task == compile.TaskCausalLM {
		if err := checkLanguageModel(m); err != nil {
			return err
		}
	}
	if m.Created.IsZero() {
		m.Created = r.opts.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range append([]string{m.ID}, m.Aliases...) {
		if _, dup := r.models[id]; dup {
			return fmt.Errorf("%w: model %q", ErrDuplicate, id)
		}
		if _, dup := r.aliases[id]; dup {
			return fmt.Errorf("%w: model alias %q", ErrDuplicate, id)
		}
	}
	r.models[m.ID] = m
	for _, a := range m.Aliases {
		r.aliases[a] = m.ID
	}
	return nil
}

func checkLanguageModel(m *Model) error {
	g := m.Program.Graph
	shapes, err := g.Shapes()
	if err != nil {
		return err
	}
	ins, outs := g.NamesOfKind("Input"), g.NamesOfKind("Output")
	if len(ins) != 1 || len(outs) != 1 {
		return fmt.Errorf("runtime: model %q: a language model needs one Input and one Output, has %d and %d", m.ID, len(ins), len(outs))
	}
	if m.Tokenizer == nil {
		return fmt.Errorf("runtime: model %q: a language model needs a tokenizer", m.ID)
	}
	v := m.Tokenizer.VocabSize()
	if n := size(shapes[ins[0]].Out); n != v {
		return fmt.Errorf("runtime: model %q: input takes %d values, the tokenizer has %d tokens", m.ID, n, v)
	}
	if n := size(shapes[outs[0]].Out); n != v {
		return fmt.Errorf("runtime: model %q: output gives %d logits, the tokenizer has %d tokens", m.ID, n, v)
	}
	if m.Program.Timesteps < 1 {
		return fmt.Errorf("runtime: model %q: program has %d timesteps per token", m.ID, m.Program.Timesteps)
	}
	switch m.Program.Input.Kind {
	case compile.InputOneHot, compile.InputOneHotPulse, "":
	default:
		return fmt.Errorf("runtime: model %q: input encoding %q is not a token encoding", m.ID, m.Program.Input.Kind)
	}
	return nil
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Model looks a model up by ID or alias.
func (r *Runtime) Model(id string) (*Model, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if a, ok := r.aliases[id]; ok {
		id = a
	}
	m, ok := r.models[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrModelNotFound, id)
	}
	return m, nil
}

// Models lists the models, sorted by ID.
func (r *Runtime) Models() []*Model {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Model, 0, len(r.models))
	for _, m := range r.models {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// DeploymentSpec asks for a model on a device.
type DeploymentSpec struct {
	ID    string
	Model string
	// Device is a registered device name (hal.Open, Runtime.Devices);
	// default "cpu".
	Device string
	// Config configures the named device.
	Config hal.Config
	// Precision, when set, is how the named device stores the weights of
	// dense synapse products: "float32", "bfloat16" or "int8", an option
	// of the cpu device (its "precision" in Config). A precision the
	// device does not take is refused with a *ParamError naming
	// "precision" (DeviceConfig).
	Precision string
	// Dev, when set, is the device itself, already configured through its
	// backend's typed constructor (or a mock, or a driver that is not
	// registered); Device, Config and Precision are then ignored.
	Dev hal.Device
	// MaxBatch is how many sequences (or samples) one replica steps
	// together. Default 8.
	MaxBatch int
	// Replicas is how many instances serve the deployment. Default 1.
	Replicas int
	// Owner is the principal the deployment belongs to: it counts
	// against the owner's quota, only the owner may delete it, and with
	// Options.DataDir it is kept across restarts (RestoreDeployments).
	// Empty for the program's own deployments.
	Owner string
	// Node, in a cluster, names the node that must run it; a runtime
	// alone ignores it.
	Node string
}

// Deploy places a model on a device and returns once it serves: of the
// three calls that place a model (Deploy, Start, CreateDeployment), it is
// the one to use unless the caller cannot wait for the load (see "Placing
// a model" in the package documentation). A deployment that fails to load,
// or whose load outlasts ctx, is removed and the error returned.
func (r *Runtime) Deploy(ctx context.Context, spec DeploymentSpec) (*Deployment, error) {
	d, err := r.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	if err := d.Wait(ctx); err != nil {
		r.remove(d)
		return nil, err
	}
	r.log.Info("deployment ready", "deployment", d.ID, "model", d.Model.ID, "device", d.Device.Name, "batch", d.MaxBatch, "replicas", d.Replicas)
	return d, nil
}

// Start places a model on a device without waiting for the load, for
// callers that start several loads at once or show one in progress;
// Deploy, which waits, is the usual call. The deployment is listed with
// status loading, every exported field final, and loads in the background
// for as long as ctx lives. It becomes ready, or failed with its Failure,
// and stays listed either way; Deployment.Wait waits for that.
func (r *Runtime) Start(ctx context.Context, spec DeploymentSpec) (*Deployment, error) {
	m, err := r.Model(spec.Model)
	if err != nil {
		return nil, err
	}
	if spec.ID == "" {
		return nil, &ParamError{"id", "the deployment needs an ID"}
	}
	if spec.MaxBatch == 0 {
		spec.MaxBatch = 8
	}
	if spec.Replicas == 0 {
		spec.Replicas = 1
	}
	if spec.MaxBatch < 1 || spec.Replicas < 1 {
		return nil, &ParamError{"max_batch_size", fmt.Sprintf("batch %d and replicas %d must be positive", spec.MaxBatch, spec.Replicas)}
	}
	dev := spec.Dev
	if dev == nil {
		if dev, spec.Config, err = spec.open(); err != nil {
			return nil, err
		}
		spec.Device, spec.Precision = spec.deviceName(), ""
	}
	if err := hal.CheckBatch(dev.Capabilities(), spec.MaxBatch); err != nil {
		return nil, err
	}
	d := newDeployment(r, spec, m, dev.Capabilities())
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	if err := r.admitDeployment(d); err != nil {
		r.mu.Unlock()
		return nil, err
	}
	r.deps[depKey(d.Owner, d.ID)] = d
	r.mu.Unlock()
	if err := r.persist(spec); err != nil {
		r.remove(d)
		return nil, err
	}
	d.wg.Add(1) // the loader: stop waits for it, and so for the workers it starts
	go d.start(ctx, dev)
	return d, nil
}

// Deployment looks a deployment up as the program sees them: its own,
// else an owner's (DeploymentAs with no principal).
func (r *Runtime) Deployment(id string) (*Deployment, error) { return r.DeploymentAs(id, "") }

// Deployments lists the deployments, sorted by ID (and owner, for an ID
// several owners use).
func (r *Runtime) Deployments() []*Deployment {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Deployment, 0, len(r.deps))
	for _, d := range r.deps {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].ID < out[j].ID || out[i].ID == out[j].ID && out[i].Owner < out[j].Owner
	})
	return out
}

// DeploymentFor returns the first ready deployment of a model.
func (r *Runtime) DeploymentFor(model string) (*Deployment, error) {
	m, err := r.Model(model)
	if err != nil {
		return nil, err
	}
	var failed *Deployment
	for _, d := range r.Deployments() {
		if d.Model.ID != m.ID {
			continue
		}
		if d.Status() == StatusReady {
			return d, nil
		}
		failed = d
	}
	if failed != nil {
		return nil, fmt.Errorf("%w: every deployment of %q has failed", ErrDeviceUnavailable, m.ID)
	}
	return nil, fmt.Errorf("%w: model %q has no deployment", ErrDeviceUnavailable, m.ID)
}

// Close stops every deployment: queued and running sequences end with
// ErrClosed, and Close waits for the workers to exit.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	deps := make([]*Deployment, 0, len(r.deps))
	for _, d := range r.deps {
		deps = append(deps, d)
	}
	r.mu.Unlock()
	for _, d := range deps {
		d.stop()
	}
	r.draining.Wait()
	return nil
}
