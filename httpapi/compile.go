package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

// compiledNetworkOf is a stored network as POST /v1/compile answers.
func compiledNetworkOf(n *runtime.Network) (*wire.CompiledNetwork, error) {
	est, err := json.Marshal(n.Estimates)
	if err != nil {
		return nil, err
	}
	return &wire.CompiledNetwork{ID: n.ID, Object: "compiled_network", Created: n.Created.Unix(), Name: n.Name, Status: "succeeded",
		Source:    wire.CompileSource{Format: n.Source.Format, Bytes: n.Source.Bytes, SHA256: n.Source.SHA256},
		Network:   wire.NetworkReport{Inputs: n.Network.Inputs, Outputs: n.Network.Outputs, Layers: n.Network.Layers, Neurons: n.Network.Neurons, Synapses: n.Network.Synapses, Parameters: n.Network.Parameters},
		Target:    wire.TargetReport{Device: n.Target.Device, CoresUsed: n.Target.CoresUsed, Utilisation: n.Target.Utilisation, Fits: n.Target.Fits},
		Estimates: est, Warnings: n.Warnings, OwnedBy: n.Owner, LanguageModel: (*wire.LanguageModelReport)(n.LanguageModel)}, nil
}

type rawCompile struct {
	ModelFormat json.RawMessage `json:"model_format"`
	ModelFile   json.RawMessage `json:"model_file"`
	Name        json.RawMessage `json:"name"`
	Target      json.RawMessage `json:"target"`
	Options     json.RawMessage `json:"options"`
}

type rawCompileOptions struct {
	Layers      json.RawMessage `json:"layers"`
	Dt          json.RawMessage `json:"dt"`
	WeightBits  json.RawMessage `json:"weight_bits"`
	Timesteps   json.RawMessage `json:"timesteps"`
	Percentile  json.RawMessage `json:"percentile"`
	Calibration json.RawMessage `json:"calibration"`
	Ranges      json.RawMessage `json:"ranges"`
	// A language model's (runtime.LanguageModel).
	Task          json.RawMessage `json:"task"`
	Tokenizer     json.RawMessage `json:"tokenizer"`
	TokenizerFile json.RawMessage `json:"tokenizer_file"`
	ChatTemplate  json.RawMessage `json:"chat_template"`
	ContextLength json.RawMessage `json:"context_length"`
}

// Bounds on the conversion options: enough for real calibration sets,
// small enough that the options cannot be used to make the server
// allocate or compute without end.
const (
	maxCalibrationSamples = 1024
	maxRangeSequences     = 1024
	maxCalibrationValues  = 1 << 22
	maxTimesteps          = 4096
	maxLayers             = 1024
	// maxTokenizerBytes bounds a language model's tokenizer.json
	// (options.tokenizer_file, decoded); GPT-2's is about 2 MB.
	maxTokenizerBytes = 16 << 20
)

// compileFormats maps the model_format values to importers; which of
// them work depends on the importers the program linked.
var compileFormats = map[string]string{"pytorch": "pytorch", "torchscript": "pytorch", "onnx": "onnx", "nir": "nir"}

func (s *Server) compileBodyLimit() int64 {
	return int64(base64.StdEncoding.EncodedLen(int(s.opts.MaxCompileBytes))) + 1<<20 + 4*maxCalibrationValues +
		int64(base64.StdEncoding.EncodedLen(maxTokenizerBytes))
}

func (s *Server) handleCompile(w http.ResponseWriter, r *http.Request) {
	principal := info(r).principal
	var held int64
	defer func() {
		s.compileBytes.Release(held)
		s.holdForKey(principal, -held)
	}()
	// The upload holds compile memory as its bytes arrive, not as its
	// Content-Length declares: a body trickled in holds what it has
	// sent, so stalled uploads cannot hold the budget that other keys'
	// compiles need. One upload holds at most a key's share.
	reserve := func(capacity int64) *Error {
		n := min(capacity, s.opts.CompileMemory, s.opts.CompileMemoryPerKey) - held
		if n <= 0 {
			return nil
		}
		if e := s.holdForKey(principal, n); e != nil {
			return e
		}
		if e := s.acquire(r, s.compileBytes, n); e != nil {
			s.holdForKey(principal, -n)
			return e
		}
		held += n
		return nil
	}
	body, e := s.readBodyHeld(w, r, s.compileBodyLimit(), 0, reserve)
	if e != nil {
		writeError(w, e)
		return
	}
	if e := s.acquire(r, s.compiles, 1); e != nil {
		writeError(w, e)
		return
	}
	defer s.compiles.Release(1)
	res, e := s.compile(r, body, principal)
	if e != nil {
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// holdForKey counts n more bytes of compile requests in flight for
// principal (n < 0 gives them back), refusing what would take it over
// CompileMemoryPerKey.
func (s *Server) holdForKey(principal string, n int64) *Error {
	s.compileMu.Lock()
	defer s.compileMu.Unlock()
	held := s.compileHeld[principal]
	if n > 0 && held+n > s.opts.CompileMemoryPerKey {
		return &Error{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "rate_limit_exceeded", RetryAfter: 2 * time.Second,
			Message: fmt.Sprintf("this key's compile uploads in flight would hold %d bytes, over its share of %d (CompileMemoryPerKey); send it once an upload has finished", held+n, s.opts.CompileMemoryPerKey)}
	}
	if held += n; held == 0 {
		delete(s.compileHeld, principal)
	} else {
		s.compileHeld[principal] = held
	}
	return nil
}

// acquire takes n of sem for a compile, waiting up to CompileWait.
func (s *Server) acquire(r *http.Request, sem *semaphore.Weighted, n int64) *Error {
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.CompileWait)
	defer cancel()
	if err := sem.Acquire(ctx, n); err != nil {
		return &Error{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "overloaded", RetryAfter: 2 * time.Second,
			Message: "the server is compiling as much as it can at once; try again shortly"}
	}
	return nil
}

// decodeModelFile decodes model_file (decodeBase64File).
func decodeModelFile(raw json.RawMessage, limit int64) ([]byte, *Error) {
	return decodeBase64File(raw, "model_file", "the file", limit)
}

// decodeBase64File decodes a file sent as standard base64 with optional
// padding, naming param and what it holds in its errors. The size limit
// is checked on the encoded length, before anything is decoded or
// allocated for the file.
func decodeBase64File(raw json.RawMessage, param, what string, limit int64) ([]byte, *Error) {
	if absent(raw) {
		return nil, invalid(param, "missing_field", "%s is required (%s, base64-encoded)", param, what)
	}
	if raw[0] != '"' {
		return nil, invalid(param, "invalid_type", "%s must be a base64 string, not %s", param, kindOf(raw))
	}
	tooLarge := &Error{Status: http.StatusRequestEntityTooLarge, Type: typeInvalidRequest, Code: "request_too_large", Param: param,
		Message: param + " is larger than the limit of " + itoa(int(limit)) + " bytes"}
	if int64(len(raw)-2) > int64(base64.StdEncoding.EncodedLen(int(limit)))+int64(len(raw)/76+2)*2 { // allow line breaks
		return nil, tooLarge
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, invalid(param, "invalid_type", "%s must be a base64 string", param)
	}
	text = strings.TrimRight(text, "=")
	data, err := base64.RawStdEncoding.DecodeString(text)
	if err != nil {
		return nil, invalid(param, "invalid_base64", "%s is not standard base64: %v", param, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge
	}
	if len(data) == 0 {
		return nil, invalid(param, "invalid_value", "%s is empty", param)
	}
	return data, nil
}

func (s *Server) compile(r *http.Request, body []byte, principal string) (*wire.CompiledNetwork, *Error) {
	var raw rawCompile
	if e := decodeObject(body, &raw); e != nil {
		return nil, e
	}
	format, e := parseString(raw.ModelFormat, "model_format")
	if e != nil {
		return nil, e
	}
	if format == "" {
		return nil, invalid("model_format", "missing_field", "model_format is required: pytorch (or torchscript), onnx or nir")
	}
	importer, ok := compileFormats[strings.ToLower(format)]
	if !ok {
		return nil, invalid("model_format", "invalid_value", "model_format %q is not one of pytorch, torchscript, onnx, nir", format)
	}
	name, e := parseString(raw.Name, "name")
	if e != nil {
		return nil, e
	}
	if err := runtime.CheckName("name", name); err != nil {
		return nil, toError(err)
	}
	target, e := parseString(raw.Target, "target")
	if e != nil {
		return nil, e
	}
	copts, iopts, ranges, e := parseCompileOptions(raw.Options)
	if e != nil {
		return nil, e
	}
	lm, e := parseLanguageModel(raw.Options)
	if e != nil {
		return nil, e
	}
	iopts.MaxBytes = 4 * s.opts.MaxCompileBytes
	data, e := decodeModelFile(raw.ModelFile, s.opts.MaxCompileBytes)
	if e != nil {
		return nil, e
	}
	n, err := s.be.Compile(r.Context(), &runtime.CompileRequest{
		Format: importer, Data: data, Name: name, Target: target, Owner: principal,
		Import:        *iopts,
		Compile:       *copts,
		Ranges:        ranges,
		LanguageModel: lm,
	})
	if err != nil {
		var pe *runtime.ParamError
		if errors.As(err, &pe) {
			return nil, invalid(pe.Param, "invalid_value", "%s", pe.Msg)
		}
		return nil, importError(err)
	}
	out, err := compiledNetworkOf(n)
	if err != nil {
		return nil, s.internalError(r, err)
	}
	return out, nil
}

// importError maps an import or compile failure: unsupported content is
// 422 naming the node; a hostile file is 400 forbidden_content; a
// malformed one, or one over the import limits, is 400.
func importError(err error) *Error {
	switch {
	case errors.Is(err, runtime.ErrForbidden):
		return invalid("model_file", "forbidden_content", "refused: %s", err.Error())
	case errors.Is(err, runtime.ErrUnsupported) && !errors.Is(err, runtime.ErrLimit):
		e := toError(err)
		if e.Status != http.StatusUnprocessableEntity {
			e = &Error{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "unsupported_model", Message: err.Error()}
		}
		return e
	case errors.Is(err, runtime.ErrQuota):
		return toError(err)
	}
	return invalid("model_file", "invalid_model_file", "the file cannot be read: %s", err.Error())
}

// parseCompileOptions reads options into the compiler's and the
// importer's options, and the sequences options.ranges calibrates on.
func parseCompileOptions(raw json.RawMessage) (*runtime.CompileOptions, *runtime.ImportOptions, [][][]float32, *Error) {
	opts, iopts := &runtime.CompileOptions{}, &runtime.ImportOptions{}
	if absent(raw) {
		return opts, iopts, nil, nil
	}
	copts, conv, e := parseConversion(raw)
	if e != nil {
		return nil, nil, nil, e
	}
	var ro rawCompileOptions
	json.Unmarshal(raw, &ro) // parseConversion has checked it is an object
	if iopts.Dt, e = parseNumber(ro.Dt, "options.dt", 1e-7, 1, 0); e != nil {
		return nil, nil, nil, e
	}
	if !absent(ro.Layers) {
		var layers []runtime.LayerSpec
		if ro.Layers[0] != '[' || json.Unmarshal(ro.Layers, &layers) != nil {
			return nil, nil, nil, invalid("options.layers", "invalid_type",
				`options.layers must be an array of {"name", "kind", "params", "shape"}, as the Go importer's compile.LayerSpec`)
		}
		if len(layers) > maxLayers {
			return nil, nil, nil, invalid("options.layers", "invalid_value", "options.layers has %d layers; at most %d", len(layers), maxLayers)
		}
		for i, l := range layers {
			if l.Name == "" {
				return nil, nil, nil, invalid(fmt.Sprintf("options.layers[%d]", i), "missing_field", "options.layers[%d] needs a name: the key prefix in the state_dict", i)
			}
			for _, d := range l.Shape {
				if d < 1 || d > 1<<20 {
					return nil, nil, nil, invalid(fmt.Sprintf("options.layers[%d].shape", i), "invalid_value", "options.layers[%d].shape: %d is not a dimension", i, d)
				}
			}
		}
		iopts.Layers = layers
	}
	iopts.Conversion = conv
	ranges, e := parseRanges(ro.Ranges, maxCalibrationValues-values(conv.Calibration))
	if e != nil {
		return nil, nil, nil, e
	}
	return copts, iopts, ranges, nil
}

// parseLanguageModel reads the options of a network compiled as a
// language model: nil without options.task "causal-lm", whose options are
// refused on other networks.
func parseLanguageModel(raw json.RawMessage) (*runtime.LanguageModel, *Error) {
	if absent(raw) {
		return nil, nil
	}
	var ro rawCompileOptions
	json.Unmarshal(raw, &ro) // parseConversion has checked it is an object
	task, e := parseString(ro.Task, "options.task")
	if e != nil {
		return nil, e
	}
	switch task {
	case "causal-lm":
	case "":
		for param, v := range map[string]json.RawMessage{"options.tokenizer": ro.Tokenizer, "options.tokenizer_file": ro.TokenizerFile,
			"options.chat_template": ro.ChatTemplate, "options.context_length": ro.ContextLength} {
			if !absent(v) {
				return nil, invalid(param, "invalid_value", "%s is for language models: send it with options.task \"causal-lm\"", param)
			}
		}
		return nil, nil
	default:
		return nil, invalid("options.task", "invalid_value", "options.task %q is not a task a network is compiled for: \"causal-lm\" compiles a language model; omit it for any other network", task)
	}
	lm := &runtime.LanguageModel{}
	if lm.TokenizerName, e = parseString(ro.Tokenizer, "options.tokenizer"); e != nil {
		return nil, e
	}
	if !absent(ro.TokenizerFile) {
		data, e := decodeBase64File(ro.TokenizerFile, "options.tokenizer_file", "a tokenizer.json", maxTokenizerBytes)
		if e != nil {
			return nil, e
		}
		lm.Tokenizer = data
	}
	if lm.ChatTemplate, e = parseString(ro.ChatTemplate, "options.chat_template"); e != nil {
		return nil, e
	}
	n, _, e := parseInt(ro.ContextLength, "options.context_length", 1, runtime.MaxContextLength)
	if e != nil {
		return nil, e
	}
	lm.ContextLength = int(n)
	return lm, nil
}

func parseConversion(raw json.RawMessage) (*runtime.CompileOptions, runtime.ConversionOptions, *Error) {
	opts := &runtime.CompileOptions{}
	var conv runtime.ConversionOptions
	if raw[0] != '{' {
		return nil, conv, invalid("options", "invalid_type", "options must be an object, not %s", kindOf(raw))
	}
	var ro rawCompileOptions
	if err := json.Unmarshal(raw, &ro); err != nil {
		return nil, conv, invalid("options", "invalid_type", "options must be an object")
	}
	bits, _, e := parseInt(ro.WeightBits, "options.weight_bits", 0, 16)
	if e != nil {
		return nil, conv, e
	}
	steps, _, e := parseInt(ro.Timesteps, "options.timesteps", 0, maxTimesteps)
	if e != nil {
		return nil, conv, e
	}
	opts.WeightBits, opts.Timesteps = int(bits), int(steps)
	conv.Timesteps = int(steps)
	if conv.Percentile, e = parseNumber(ro.Percentile, "options.percentile", 50, 100, 0); e != nil {
		return nil, conv, e
	}
	if !absent(ro.Calibration) {
		if ro.Calibration[0] != '{' {
			return nil, conv, invalid("options.calibration", "invalid_type", "options.calibration must be an object {samples, percentile}, not %s", kindOf(ro.Calibration))
		}
		var rc struct {
			Samples    json.RawMessage `json:"samples"`
			Percentile json.RawMessage `json:"percentile"`
		}
		if err := json.Unmarshal(ro.Calibration, &rc); err != nil {
			return nil, conv, invalid("options.calibration", "invalid_type", "options.calibration must be an object")
		}
		if !absent(rc.Percentile) {
			p, e := parseNumber(rc.Percentile, "options.calibration.percentile", 50, 100, 0)
			if e != nil {
				return nil, conv, e
			}
			if conv.Percentile != 0 && conv.Percentile != p {
				return nil, conv, invalid("options.calibration.percentile", "invalid_value", "options.percentile and options.calibration.percentile disagree")
			}
			conv.Percentile = p
		}
		if !absent(rc.Samples) {
			var samples [][]float32
			if err := json.Unmarshal(rc.Samples, &samples); err != nil {
				return nil, conv, invalid("options.calibration.samples", "invalid_type", "options.calibration.samples must be an array of arrays of numbers")
			}
			if len(samples) > maxCalibrationSamples || values(samples) > maxCalibrationValues {
				return nil, conv, invalid("options.calibration.samples", "invalid_value", "options.calibration.samples: at most %d samples and %d values", maxCalibrationSamples, maxCalibrationValues)
			}
			conv.Calibration = samples
		}
	}
	return opts, conv, nil
}

// values counts the numbers in vectors.
func values(vectors [][]float32) int {
	n := 0
	for _, v := range vectors {
		n += len(v)
	}
	return n
}

// parseRanges reads options.ranges: sequences of input vectors on which
// the compiled program's graded values are calibrated (runtime.CompileRequest),
// at most maxRangeSequences of them and budget numbers in all.
func parseRanges(raw json.RawMessage, budget int) ([][][]float32, *Error) {
	if absent(raw) {
		return nil, nil
	}
	var seqs [][][]float32
	if raw[0] != '[' || json.Unmarshal(raw, &seqs) != nil {
		return nil, invalid("options.ranges", "invalid_type", "options.ranges must be an array of sequences, each an array of input vectors (arrays of numbers)")
	}
	if len(seqs) == 0 {
		return nil, invalid("options.ranges", "invalid_value", "options.ranges has no sequences")
	}
	n := 0
	for _, s := range seqs {
		n += values(s)
	}
	if len(seqs) > maxRangeSequences || n > budget {
		return nil, invalid("options.ranges", "invalid_value", "options.ranges: at most %d sequences and %d numbers (what options.calibration.samples leaves of %d)", maxRangeSequences, budget, maxCalibrationValues)
	}
	return seqs, nil
}
