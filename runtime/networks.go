package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/tokenizer"
)

// The compiler's types that a CompileRequest and a Network hold, under
// the runtime's names, so that a caller of the runtime (an HTTP server)
// names them without importing package compile.
type (
	// CompileOptions configure the compiler (compile.Options).
	CompileOptions = compile.Options
	// ImportOptions configure an importer (compile.ImportOptions).
	ImportOptions = compile.ImportOptions
	// LayerSpec describes a layer of a state_dict (compile.LayerSpec).
	LayerSpec = compile.LayerSpec
	// ConversionOptions configure ANN-to-SNN conversion
	// (compile.ConversionOptions).
	ConversionOptions = compile.ConversionOptions
	// Source is what was imported (compile.Source).
	Source = compile.Source
	// NetworkReport sizes a compiled network (compile.NetworkReport).
	NetworkReport = compile.NetworkReport
	// TargetReport is how a network fits its target (compile.TargetReport).
	TargetReport = compile.TargetReport
	// Estimates are a network's estimated cost on its target
	// (compile.Estimates).
	Estimates = compile.Estimates
)

// The compiler's errors, which Compile and the calls that place a model
// return wrapped: the same values as package compile's, so that
// errors.Is and errors.As find them under either name.
var (
	// ErrUnsupported is wrapped when a file parses but holds what the
	// compiler cannot represent, or a network does not fit its device.
	ErrUnsupported = compile.ErrUnsupported
	// ErrForbidden is wrapped when a file asks for something refused for
	// safety (a pickle naming a function off the allowlist): nothing it
	// names was run.
	ErrForbidden = compile.ErrForbidden
	// ErrLimit is wrapped when a file declares more than ImportOptions
	// allow (bytes, elements, depth).
	ErrLimit = compile.ErrLimit
)

type (
	// UnsupportedError names the node a device or importer cannot run
	// (compile.UnsupportedError).
	UnsupportedError = compile.UnsupportedError
	// FitError names the node and the limit of a network that does not
	// fit its device (compile.FitError).
	FitError = compile.FitError
)

// CompileRequest is a network file to compile and store. The importers
// are the ones the program linked (compile.RegisterFormat, by blank
// import): the runtime links none itself.
type CompileRequest struct {
	// Format names a registered importer or one of its aliases.
	Format string
	// Data is the file.
	Data []byte
	// Name is the network's display name. Default: the format and the
	// start of the file's SHA-256.
	Name string
	// Target is the device the program must fit. Default "cpu".
	Target string
	// Owner is the principal the stored network belongs to.
	Owner string
	// Import configures the importer (layer descriptions, ANN-to-SNN
	// conversion, the bound on what it may allocate).
	Import ImportOptions
	// Compile configures the compiler; Name and Target are set from the
	// request.
	Compile CompileOptions
	// LanguageModel, when set, stores the network as a language model
	// that the generation calls serve, with its tokenizer.
	LanguageModel *LanguageModel
	// Ranges, when set, are sequences of input vectors on which the
	// compiled program's graded values are calibrated (compile.Calibrate),
	// so that a fixed-point target sizes them by what data reaches rather
	// than by the worst case. The work is bounded by MaxCalibrationWork.
	Ranges [][][]float32
}

// MaxCalibrationWork bounds CompileRequest.Ranges: the input vectors times
// the timesteps each is held for times the network's synapses and neurons,
// the updates the float simulator makes to calibrate on them.
const MaxCalibrationWork = 1 << 31

// Network is a compiled network the runtime stores: what compiling it
// found. Its Model (same ID) holds the Program.
type Network struct {
	ID        string        `json:"id"`
	Name      string        `json:"name"`
	Created   time.Time     `json:"-"`
	Owner     string        `json:"owned_by"`
	Source    Source        `json:"source"`
	Network   NetworkReport `json:"network"`
	Target    TargetReport  `json:"target"`
	Estimates Estimates     `json:"estimates"`
	Warnings  []string      `json:"warnings"`
	// StoredBytes is the size of the stored program, which counts
	// against the owner's quota.
	StoredBytes int64 `json:"stored_bytes"`
	// LanguageModel is set for a network compiled as a language model.
	LanguageModel *LanguageModelReport `json:"language_model,omitempty"`
}

// diskNetwork is a Network as its <id>.json file holds it.
type diskNetwork struct {
	*Network
	Created int64 `json:"created"`
}

// calibrate records p's ranges on seqs, refusing more work than
// MaxCalibrationWork.
func calibrate(p *compile.Program, net compile.NetworkReport, seqs [][][]float32) error {
	vectors := 0
	for _, s := range seqs {
		vectors += len(s)
	}
	if work := float64(vectors) * float64(max(p.Timesteps, 1)) * float64(net.Synapses+net.Neurons+1); work > MaxCalibrationWork {
		return &ParamError{"options.ranges", fmt.Sprintf("calibrating %d input vectors, each held for %d timesteps, on %d synapses and %d neurons is %.3g updates; at most %d", vectors, max(p.Timesteps, 1), net.Synapses, net.Neurons, work, MaxCalibrationWork)}
	}
	if err := compile.Calibrate(p, seqs); err != nil {
		return &ParamError{"options.ranges", strings.TrimPrefix(err.Error(), "compile: Calibrate: ")}
	}
	return nil
}

// MaxName bounds a name a caller gives, in bytes.
const MaxName = 256

// CheckName refuses a name that cannot be shown as it is: longer than
// MaxName bytes, not UTF-8, or holding a control character (a NUL, a
// newline) or a bidirectional override or isolate (U+202A-U+202E,
// U+2066-U+2069), which would make a listing read other than it is.
func CheckName(field, name string) error {
	if len(name) > MaxName {
		return &ParamError{field, fmt.Sprintf("%s is longer than %d bytes", field, MaxName)}
	}
	if !utf8.ValidString(name) {
		return &ParamError{field, fmt.Sprintf("%s is not valid UTF-8", field)}
	}
	for i, c := range name {
		if unicode.IsControl(c) || c >= 0x202a && c <= 0x202e || c >= 0x2066 && c <= 0x2069 {
			return &ParamError{field, fmt.Sprintf("%s holds %U at byte %d: control characters and bidirectional overrides are not allowed", field, c, i)}
		}
	}
	return nil
}

// Compile imports, compiles and stores a network, and registers it as a
// model owned by req.Owner. With Options.DataDir set, the network is
// written there and comes back after a restart.
//
// A request naming an unknown format or device, or ranges that do not fit
// the network, fails with a ParamError (param "model_format", "target" or
// "options.ranges"); a file the importer refuses fails
// with the importer's error; a network that does not fit the target
// wraps compile.ErrUnsupported.
func (r *Runtime) Compile(ctx context.Context, req *CompileRequest) (*Network, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	err := r.checkNetworkQuota(req.Owner, 0) // before the work; again with the size after
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := CheckName("name", req.Name); err != nil {
		return nil, err
	}
	format := strings.ToLower(req.Format)
	if !slices.Contains(compile.Formats(), format) {
		return nil, &ParamError{"model_format", fmt.Sprintf("format %q is not one of the linked importers (%s)", req.Format, strings.Join(compile.Formats(), ", "))}
	}
	target := req.Target
	if target == "" {
		target = "cpu"
	}
	dev, err := hal.Open(target, hal.Config{})
	if err != nil {
		return nil, &ParamError{"target", fmt.Sprintf("target %q is not a device of this runtime (have %s)", target, strings.Join(hal.Devices(), ", "))}
	}
	t := dev.Capabilities().Target
	var tok *tokenizer.Tokenizer
	var tokName string
	if lm := req.LanguageModel; lm != nil {
		if err := checkLanguageModelSpec(lm); err != nil {
			return nil, err
		}
		if tok, tokName, err = r.tokenizerFor(lm); err != nil {
			return nil, err
		}
	}
	sum := sha256.Sum256(req.Data)
	digest := hex.EncodeToString(sum[:])
	name := req.Name
	if name == "" {
		name = format + "-" + digest[:12]
	}
	imp := req.Import
	g, irep, err := compile.Import(format, bytes.NewReader(req.Data), int64(len(req.Data)), &imp)
	if err != nil {
		return nil, err
	}
	copts := req.Compile
	copts.Name, copts.Target = name, &t
	switch {
	case req.LanguageModel != nil && irep.Converted:
		return nil, &ParamError{"options.task", "a network converted from ReLU layers is a classifier, not a language model"}
	case req.LanguageModel != nil:
		copts.Task = compile.TaskCausalLM
		if copts.Timesteps == 0 {
			copts.Timesteps = 1 // one step per token
		}
	case irep.Converted:
		copts.Task = compile.TaskClassification
	}
	if copts.Timesteps == 0 && imp.Conversion.Timesteps > 0 {
		copts.Timesteps = imp.Conversion.Timesteps
	}
	prog, rep, err := compile.Compile(g, &copts)
	if err != nil {
		return nil, err
	}
	if !rep.Target.Fits {
		return nil, &compile.UnsupportedError{Reason: "the network does not fit " + target}
	}
	prog.Source = compile.Source{Format: format, Bytes: int64(len(req.Data)), SHA256: digest}
	if len(req.Ranges) > 0 {
		if err := calibrate(prog, rep.Network, req.Ranges); err != nil {
			return nil, err
		}
	}
	n := &Network{
		ID: newNetworkID(), Name: name, Created: r.opts.Now(), Owner: req.Owner,
		Source: prog.Source, Network: rep.Network, Target: rep.Target, Estimates: rep.Estimates,
		Warnings: append(append([]string{}, irep.Warnings...), rep.Warnings...),
	}
	if req.LanguageModel != nil {
		if n.LanguageModel, err = makeLanguageModel(prog, req.LanguageModel, tok, tokName); err != nil {
			return nil, err
		}
	}
	if err := r.store(n, prog); err != nil {
		return nil, err
	}
	return n, nil
}

// reloadOptions are those a stored program is loaded with at a start
// (the defaults); tests lower them.
var reloadOptions compile.LoadOptions

// store writes a network to the data directory, when there is one, and
// registers it. Each file is written to a temporary file and renamed
// into place, the program first, so that a crash leaves either a whole
// entry or none.
func (r *Runtime) store(n *Network, prog *compile.Program) error {
	var pb bytes.Buffer
	if err := prog.Save(&pb); err != nil {
		return err
	}
	// What is accepted must load again at the next start: a program that
	// compile.Load would refuse (a header over its limit) is refused now.
	if _, err := compile.Load(bytes.NewReader(pb.Bytes()), int64(pb.Len()), &reloadOptions); err != nil {
		return fmt.Errorf("%w: the compiled program of %d bytes could not be loaded back, so it is not stored: %v", ErrUnsupported, pb.Len(), err)
	}
	n.StoredBytes = int64(pb.Len())
	r.mu.Lock()
	if err := r.checkNetworkQuota(n.Owner, n.StoredBytes); err != nil {
		r.mu.Unlock()
		return err
	}
	r.reserve(n.Owner, 1, n.StoredBytes)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.reserve(n.Owner, -1, -n.StoredBytes)
		r.mu.Unlock()
	}()
	if dir := r.networkDir(); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("runtime: data directory: %w", err)
		}
		mb, err := json.Marshal(diskNetwork{Network: n, Created: n.Created.Unix()})
		if err != nil {
			return err
		}
		if err := writeAtomic(filepath.Join(dir, n.ID+".program"), pb.Bytes()); err != nil {
			return fmt.Errorf("runtime: storing network %s: %w", n.ID, err)
		}
		if err := writeAtomic(filepath.Join(dir, n.ID+".json"), mb); err != nil {
			os.Remove(filepath.Join(dir, n.ID+".program"))
			return fmt.Errorf("runtime: storing network %s: %w", n.ID, err)
		}
	}
	m, err := NetworkModel(n, prog)
	if err != nil {
		return err
	}
	return r.RegisterModel(m)
}

func (r *Runtime) networkDir() string {
	if r.opts.DataDir == "" {
		return ""
	}
	return filepath.Join(r.opts.DataDir, "networks")
}

// loadNetworks registers the networks stored in the data directory. A
// damaged entry is set aside and logged: it must not keep the runtime
// from starting.
func (r *Runtime) loadNetworks() {
	dir := r.networkDir()
	if dir == "" {
		return
	}
	metas, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		r.log.Error("reading the data directory", "dir", dir, "err", err)
		return
	}
	for _, path := range metas {
		if err := r.loadNetwork(path); err != nil {
			r.setAside(path, err)
		}
	}
}

// setAside moves a stored network that cannot be loaded, its entry and
// its program, into the folder "unloadable" beside them, and logs it: it
// is neither listed nor counted against its owner's quota, and its files
// are kept for whoever looks into it.
func (r *Runtime) setAside(metaPath string, why error) {
	dir := filepath.Dir(metaPath)
	aside := filepath.Join(dir, "unloadable")
	base := strings.TrimSuffix(filepath.Base(metaPath), ".json")
	moved := aside
	if err := os.MkdirAll(aside, 0o700); err != nil {
		moved = "(not moved: " + err.Error() + ")"
	} else {
		for _, name := range []string{base + ".json", base + ".program"} {
			if err := os.Rename(filepath.Join(dir, name), filepath.Join(aside, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				moved = "(not moved: " + err.Error() + ")"
			}
		}
	}
	r.log.Error("a stored compiled network cannot be loaded; it is set aside", "file", metaPath, "err", why, "moved_to", moved)
}

func (r *Runtime) loadNetwork(metaPath string) error {
	b, err := os.ReadFile(metaPath)
	if err != nil {
		return err
	}
	d := diskNetwork{Network: &Network{}}
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	n := d.Network
	n.Created = time.Unix(d.Created, 0)
	id := strings.TrimSuffix(filepath.Base(metaPath), ".json")
	if n.ID != id || !validNetworkID(id) {
		return fmt.Errorf("entry id %q does not match its file", n.ID)
	}
	f, err := os.Open(filepath.Join(filepath.Dir(metaPath), id+".program"))
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	prog, err := compile.Load(f, fi.Size(), &reloadOptions)
	if err != nil {
		return err
	}
	m, err := NetworkModel(n, prog)
	if err != nil {
		return err
	}
	return r.RegisterModel(m)
}

const idAlphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// newNetworkID returns "net-" and 24 random alphanumerics.
func newNetworkID() string {
	b := make([]byte, 24)
	rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return "net-" + string(b)
}

func validNetworkID(id string) bool {
	if !strings.HasPrefix(id, "net-") || len(id) > 64 || len(id) == 4 {
		return false
	}
	for _, c := range id[4:] {
		if !strings.ContainsRune(idAlphabet, c) {
			return false
		}
	}
	return true
}

// writeAtomic writes data to a temporary file in the same directory,
// syncs it and renames it over path.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
