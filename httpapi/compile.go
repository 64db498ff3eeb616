package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/neuro-go/neuro/compile"
	_ "github.com/neuro-go/neuro/compile/nir" // the formats API.md promises (nir as an extra)
	_ "github.com/neuro-go/neuro/compile/onnx"
	"github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/runtime/hal"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu" // the default target
)

// compiledNetwork is the result of POST /v1/compile, as API.md decides.
type compiledNetwork struct {
	ID        string                `json:"id"`
	Object    string                `json:"object"`
	Created   int64                 `json:"created"`
	Name      string                `json:"name"`
	Status    string                `json:"status"`
	Source    compile.Source        `json:"source"`
	Network   compile.NetworkReport `json:"network"`
	Target    compile.TargetReport  `json:"target"`
	Estimates compile.Estimates     `json:"estimates"`
	Warnings  []string              `json:"warnings"`
	OwnedBy   string                `json:"owned_by"`
}

type rawCompile struct {
	ModelFormat json.RawMessage `json:"model_format"`
	ModelFile   json.RawMessage `json:"model_file"`
	Name        json.RawMessage `json:"name"`
	Target      json.RawMessage `json:"target"`
	Options     json.RawMessage `json:"options"`
}

type rawCompileOptions struct {
	WeightBits  json.RawMessage `json:"weight_bits"`
	Timesteps   json.RawMessage `json:"timesteps"`
	Percentile  json.RawMessage `json:"percentile"`
	Calibration json.RawMessage `json:"calibration"`
}

// Bounds on the conversion options: enough for real calibration sets,
// small enough that the options cannot be used to make the server
// allocate or compute without end.
const (
	maxCalibrationSamples = 1024
	maxCalibrationValues  = 1 << 22
	maxTimesteps          = 4096
)

// compileFormats maps the model_format values to registered importers.
var compileFormats = map[string]string{"pytorch": "pytorch", "torchscript": "pytorch", "onnx": "onnx", "nir": "nir"}

func (s *Server) compileBodyLimit() int64 {
	return int64(base64.StdEncoding.EncodedLen(int(s.opts.MaxCompileBytes))) + 1<<20 + 4*maxCalibrationValues
}

func (s *Server) handleCompile(w http.ResponseWriter, r *http.Request) {
	body, e := readBody(w, r, s.compileBodyLimit())
	if e != nil {
		writeError(w, e)
		return
	}
	res, e := s.compile(body, info(r).principal)
	if e != nil {
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// decodeModelFile decodes standard base64 with optional padding. The
// size limit is checked on the encoded length, before anything is
// decoded or allocated for the file.
func decodeModelFile(raw json.RawMessage, limit int64) ([]byte, *Error) {
	if absent(raw) {
		return nil, invalid("model_file", "missing_field", "model_file is required (the file, base64-encoded)")
	}
	if raw[0] != '"' {
		return nil, invalid("model_file", "invalid_type", "model_file must be a base64 string, not %s", kindOf(raw))
	}
	if int64(len(raw)-2) > int64(base64.StdEncoding.EncodedLen(int(limit)))+int64(len(raw)/76+2)*2 { // allow line breaks
		return nil, &Error{Status: http.StatusRequestEntityTooLarge, Type: typeInvalidRequest, Code: "request_too_large", Param: "model_file",
			Message: "model_file is larger than the limit of " + itoa(int(limit)) + " bytes"}
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, invalid("model_file", "invalid_type", "model_file must be a base64 string")
	}
	text = strings.TrimRight(text, "=")
	data, err := base64.RawStdEncoding.DecodeString(text)
	if err != nil {
		return nil, invalid("model_file", "invalid_base64", "model_file is not standard base64: %v", err)
	}
	if int64(len(data)) > limit {
		return nil, &Error{Status: http.StatusRequestEntityTooLarge, Type: typeInvalidRequest, Code: "request_too_large", Param: "model_file",
			Message: "model_file is larger than the limit of " + itoa(int(limit)) + " bytes"}
	}
	if len(data) == 0 {
		return nil, invalid("model_file", "invalid_value", "model_file is empty")
	}
	return data, nil
}

func (s *Server) compile(body []byte, principal string) (*compiledNetwork, *Error) {
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
	if !ok || !slices.Contains(compile.Formats(), importer) {
		return nil, invalid("model_format", "invalid_value", "model_format %q is not one of pytorch, torchscript, onnx, nir", format)
	}
	name, e := parseString(raw.Name, "name")
	if e != nil {
		return nil, e
	}
	if len(name) > 256 {
		return nil, invalid("name", "invalid_value", "name is longer than 256 bytes")
	}
	target, e := parseString(raw.Target, "target")
	if e != nil {
		return nil, e
	}
	if target == "" {
		target = "cpu"
	}
	if !slices.Contains(hal.Devices(), target) {
		return nil, invalid("target", "invalid_value", "target %q is not a device of this server (have %s)", target, strings.Join(hal.Devices(), ", "))
	}
	copts, conv, e := parseCompileOptions(raw.Options)
	if e != nil {
		return nil, e
	}
	data, e := decodeModelFile(raw.ModelFile, s.opts.MaxCompileBytes)
	if e != nil {
		return nil, e
	}
	dev, err := hal.Open(target, hal.Config{})
	if err != nil {
		return nil, &Error{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "overloaded", Message: "device " + target + " cannot be opened: " + err.Error(), RetryAfter: time.Second}
	}
	t := dev.Capabilities().Target
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	if name == "" {
		name = importer + "-" + digest[:12]
	}
	g, irep, err := compile.Import(importer, bytes.NewReader(data), int64(len(data)), &compile.ImportOptions{
		MaxBytes: 4 * s.opts.MaxCompileBytes, Conversion: conv,
	})
	if err != nil {
		return nil, importError(err)
	}
	copts.Name, copts.Target = name, &t
	if irep.Converted {
		copts.Task = "classification"
	}
	if copts.Timesteps == 0 && conv.Timesteps > 0 {
		copts.Timesteps = conv.Timesteps
	}
	prog, rep, err := compile.Compile(g, copts)
	if err != nil {
		return nil, importError(err)
	}
	if !rep.Target.Fits {
		return nil, &Error{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "unsupported_model",
			Message: "the network does not fit " + target}
	}
	prog.Source = compile.Source{Format: importer, Bytes: int64(len(data)), SHA256: digest}
	now := s.opts.Now()
	res := &compiledNetwork{
		ID: newID("net-"), Object: "compiled_network", Created: now.Unix(), Name: name, Status: "succeeded",
		Source: prog.Source, Network: rep.Network, Target: rep.Target, Estimates: rep.Estimates,
		Warnings: append(append([]string{}, irep.Warnings...), rep.Warnings...), OwnedBy: principal,
	}
	if err := s.nets.add(res, prog, now); err != nil {
		s.log.Error("storing a compiled network", "id", res.ID, "err", err)
		return nil, errInternal
	}
	return res, nil
}

// importError maps an import or compile failure: unsupported content is
// 422 naming the node; a malformed or hostile file is 400.
func importError(err error) *Error {
	var fe *pytorch.ForbiddenClassError
	switch {
	case errors.As(err, &fe):
		return invalid("model_file", "forbidden_content", "refused: %s", err.Error())
	case errors.Is(err, compile.ErrUnsupported), isUnsupported(err):
		e := toError(err)
		if e.Status != http.StatusUnprocessableEntity {
			e = &Error{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "unsupported_model", Message: err.Error()}
		}
		return e
	}
	return invalid("model_file", "invalid_model_file", "the file cannot be read: %s", err.Error())
}

// isUnsupported recognises the importers' own "unsupported" errors by the
// convention they share (an Is method or a wrapped sentinel whose text
// says "unsupported").
func isUnsupported(err error) bool {
	return errors.Is(err, pytorch.ErrUnsupported) || strings.Contains(err.Error(), "not supported") && !errors.Is(err, pytorch.ErrLimit)
}

func parseCompileOptions(raw json.RawMessage) (*compile.Options, compile.ConversionOptions, *Error) {
	opts := &compile.Options{}
	var conv compile.ConversionOptions
	if absent(raw) {
		return opts, conv, nil
	}
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
			total := 0
			for _, s := range samples {
				total += len(s)
			}
			if len(samples) > maxCalibrationSamples || total > maxCalibrationValues {
				return nil, conv, invalid("options.calibration.samples", "invalid_value", "options.calibration.samples: at most %d samples and %d values", maxCalibrationSamples, maxCalibrationValues)
			}
			conv.Calibration = samples
		}
	}
	return opts, conv, nil
}
