package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

// ownerSystem is the owned_by of the program's own deployments.
const ownerSystem = "system"

// visibleDeployment reports whether principal may see d: the program's
// own and principal's.
func visibleDeployment(d runtime.DeploymentInfo, principal string) bool {
	return d.Owner == "" || d.Owner == principal
}

// scopedDeployments is a backend whose deployment IDs are scoped by
// owner (runtime.Runtime): it finds principal's own deployment or the
// program's, and another owner's is not found, existing or not.
type scopedDeployments interface {
	DeploymentInfoAs(id, principal string) (runtime.DeploymentInfo, error)
}

// lookupDeployment finds a deployment as principal may see it.
func (s *Server) lookupDeployment(id, principal string) (runtime.DeploymentInfo, error) {
	var d runtime.DeploymentInfo
	var err error
	if sd, ok := s.be.(scopedDeployments); ok {
		d, err = sd.DeploymentInfoAs(id, principal)
	} else {
		d, err = s.be.DeploymentInfo(id)
	}
	if err == nil && !visibleDeployment(d, principal) {
		err = fmt.Errorf("%w: %q", runtime.ErrDeploymentNotFound, id)
	}
	return d, err
}

type rawDeployment struct {
	Model        json.RawMessage `json:"model"`
	Device       json.RawMessage `json:"device"`
	ID           json.RawMessage `json:"id"`
	Replicas     json.RawMessage `json:"replicas"`
	MaxBatchSize json.RawMessage `json:"max_batch_size"`
	Node         json.RawMessage `json:"node"`
	Precision    json.RawMessage `json:"precision"`
}

// handleCreateDeployment places a model on a device for the caller. It
// waits up to Options.DeployWait for the load, so that a network that
// does not fit the device is a 422 here rather than a failed record to
// poll; a longer load answers 201 with status "loading".
func (s *Server) handleCreateDeployment(w http.ResponseWriter, r *http.Request) {
	body, e := s.readBody(w, r, s.opts.MaxBodyBytes)
	if e != nil {
		writeError(w, e)
		return
	}
	var raw rawDeployment
	if e := decodeObject(body, &raw); e != nil {
		writeError(w, e)
		return
	}
	spec, e := s.parseDeployment(r, &raw)
	if e != nil {
		writeError(w, e)
		return
	}
	// The load outlives this request when it takes longer than DeployWait.
	d, err := s.be.CreateDeployment(r.Context(), spec, s.opts.DeployWait)
	if err != nil {
		writeError(w, s.deploymentError(r, err, spec.ID))
		return
	}
	w.Header().Set("Location", "/v1/deployments/"+d.ID)
	s.respond(w, r, http.StatusCreated, deploymentOf(d))
}

func (s *Server) parseDeployment(r *http.Request, raw *rawDeployment) (runtime.DeploymentSpec, *Error) {
	var spec runtime.DeploymentSpec
	principal := info(r).principal
	model, e := parseString(raw.Model, "model")
	if e != nil {
		return spec, e
	}
	if model == "" {
		return spec, invalid("model", "missing_field", "model is required: a built-in model or one of your compiled networks")
	}
	m, err := s.lookupModel(model, principal)
	if err != nil {
		return spec, s.internalError(r, err)
	}
	device, e := parseString(raw.Device, "device")
	if e != nil {
		return spec, e
	}
	if device == "" {
		device = "cpu"
	}
	if devices := s.be.Devices(); !slices.Contains(devices, device) {
		return spec, invalid("device", "invalid_value", "device %q is not a device of this server (have %s)", device, strings.Join(devices, ", "))
	}
	id, e := parseString(raw.ID, "id")
	if e != nil {
		return spec, e
	}
	if id == "" {
		id = newID("dep-")
	} else if err := runtime.CheckDeploymentID(id); err != nil {
		return spec, toError(err)
	}
	replicas, _, e := parseInt(raw.Replicas, "replicas", 1, int64(s.opts.MaxReplicas))
	if e != nil {
		return spec, e
	}
	batch, _, e := parseInt(raw.MaxBatchSize, "max_batch_size", 1, int64(s.opts.MaxBatchSize))
	if e != nil {
		return spec, e
	}
	node, e := parseString(raw.Node, "node")
	if e != nil {
		return spec, e
	}
	if _, cluster := s.be.(NodeLister); node != "" && !cluster {
		return spec, invalid("node", "invalid_value", "this server is not in a cluster: it has no node %q", node)
	}
	// The backend checks the precision against the device.
	precision, e := parseString(raw.Precision, "precision")
	if e != nil {
		return spec, e
	}
	spec = runtime.DeploymentSpec{ID: id, Model: m.ID, Device: device, Precision: precision, Replicas: int(replicas), MaxBatch: int(batch), Owner: principal, Node: node}
	return spec, nil
}

// deploymentError maps a failure to create a deployment.
func (s *Server) deploymentError(r *http.Request, err error, id string) *Error {
	switch {
	case errors.Is(err, runtime.ErrDuplicate):
		return &Error{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "deployment_exists", Param: "id",
			Message: fmt.Sprintf("a deployment %q already exists; choose another id or leave it out", id)}
	}
	return s.internalError(r, err)
}

func (s *Server) handleDeleteDeployment(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.be.Undeploy(id, info(r).principal); err != nil {
		writeError(w, s.internalError(r, err))
		return
	}
	s.respond(w, r, http.StatusOK, &wire.Deleted{ID: id, Object: "deployment", Deleted: true})
}

func (s *Server) handleDeleteModel(w http.ResponseWriter, r *http.Request) {
	principal := info(r).principal
	m, err := s.lookupModel(r.PathValue("id"), principal)
	if err == nil && m.Network == nil {
		err = fmt.Errorf("%w: %s is a built-in model of the server", runtime.ErrPermission, m.ID)
	}
	if err == nil {
		err = s.be.DeleteNetwork(m.ID, principal)
	}
	if err != nil {
		writeError(w, s.internalError(r, err))
		return
	}
	s.respond(w, r, http.StatusOK, &wire.Deleted{ID: m.ID, Object: "model", Deleted: true})
}

type rawRun struct {
	Inputs    json.RawMessage `json:"inputs"`
	Timesteps json.RawMessage `json:"timesteps"`
	Record    json.RawMessage `json:"record"`
	Model     json.RawMessage `json:"model"`
	Seed      json.RawMessage `json:"seed"`

	samples []int            // where each of Inputs' samples starts in it, from decodeRunBody
	read    []runtime.Sample // those of them decodeRunBody read as it checked them, or zero
}

// handleRun runs samples through a network's deployment (API.md,
// "Running a network").
func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	ri := info(r)
	fail := func(e *Error) { s.fail(w, r, "", e) }
	limit := s.opts.MaxRunBodyBytes
	held := limit // an undeclared body may be as long as the limit
	if r.ContentLength >= 0 {
		held = min(r.ContentLength, limit)
	}
	if held = s.reserveRun(w, r, held); held < 0 {
		abandonBody(w)
		return
	}
	defer func() { s.runBytes.Release(held) }()
	declared := int64(0) // the buffer takes a declared length at once
	if r.ContentLength >= 0 {
		declared = held
	}
	body, e := s.readBodyHeld(w, r, limit, declared, nil)
	if e != nil {
		fail(e)
		return
	}
	d, err := s.lookupDeployment(r.PathValue("id"), ri.principal)
	if err == nil && !visible(d.Model, ri.principal) {
		err = fmt.Errorf("%w: %q", runtime.ErrDeploymentNotFound, r.PathValue("id"))
	}
	if err != nil {
		fail(s.internalError(r, err))
		return
	}
	req, values, answer, e := s.parseRun(body, d)
	if e != nil {
		fail(e)
		return
	}
	more := s.reserveRun(w, r, min(runBytesPerInput*int64(values)+runBytesPerOutput*int64(answer), s.opts.RunMemory-held))
	if more < 0 {
		return
	}
	held += more
	req.Principal, req.Endpoint = ri.principal, ri.endpoint
	ri.recorded = true // the backend records runs
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	res, err := s.be.Run(ctx, req)
	if err != nil {
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			return // the client has gone
		}
		writeError(w, s.internalError(r, err))
		return
	}
	if s.opts.Metrics != nil {
		// /metrics answers anyone: a caller's network is counted under
		// one label, neither naming it nor adding a series per network.
		counted := res
		if d.Model.Network != nil {
			public := *res
			public.Model = MetricsNetworkLabel
			counted = &public
		}
		s.opts.Metrics.Run(counted)
	}
	if e := finiteOutputs(res); e != nil {
		writeError(w, e)
		return
	}
	out := &wire.Run{ID: newID("run-"), Object: "network.run", Created: s.opts.Now().Unix(), Model: res.Model, Deployment: res.Deployment,
		Outputs: make([]wire.RunOutput, len(res.Outputs)), Warnings: res.Warnings,
		Usage: wire.RunUsage{Samples: res.Usage.Samples, Timesteps: res.Usage.Timesteps, Spikes: res.Usage.Spikes, SynapticOps: res.Usage.SynapticOps,
			EnergyUJ: res.Usage.EnergyMicrojoule, DeviceMS: float64(res.Usage.DeviceTime) / float64(time.Millisecond)}}
	for k, o := range res.Outputs {
		ro := wire.RunOutput{Index: k, SpikeCounts: o.SpikeCounts, Prediction: o.Prediction, FinalState: o.FinalState, Membrane: o.Membrane}
		if req.Spikes {
			sp := make([][2]int, len(o.Spikes))
			for j, e := range o.Spikes {
				sp[j] = [2]int{e.T, e.I}
			}
			ro.Spikes = sp
		}
		out.Outputs[k] = ro
	}
	s.respond(w, r, http.StatusOK, out)
}

// finiteOutputs refuses an answer that JSON cannot hold: inputs too
// large for a network's weights overflow float32 in its state, which
// then ends as infinities or NaN. Inputs within float32's range can do
// that, so the run is what finds it.
func finiteOutputs(res *runtime.RunResult) *Error {
	for k, o := range res.Outputs {
		check := func(name string, v []float32) *Error {
			for i, f := range v {
				if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
					return &Error{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "numeric_overflow", Param: fmt.Sprintf("inputs[%d]", k),
						Message: fmt.Sprintf("inputs[%d]: the network's state overflowed float32 (%s[%d] is %v); scale the sample's inputs down", k, name, i, f)}
				}
			}
			return nil
		}
		e := check("spike_counts", o.SpikeCounts)
		if e == nil {
			e = check("final_state", o.FinalState)
		}
		for t := 0; e == nil && t < len(o.Membrane); t++ {
			e = check(fmt.Sprintf("membrane[%d]", t), o.Membrane[t])
		}
		if e != nil {
			return e
		}
	}
	return nil
}

// What a run holds per value, beyond its body: an input value is read
// as a float64 and kept as a float32; a value of the answer is a float32
// and at most 16 bytes of JSON, in a buffer that may have doubled.
const (
	runBytesPerInput  = 12
	runBytesPerOutput = 4 + 2*16
)

// reserveRun reserves n bytes of the runs' memory (at most all of it),
// the way a compile reserves its own (acquire), and returns how many it
// holds; when it cannot, it answers the request and returns -1.
func (s *Server) reserveRun(w http.ResponseWriter, r *http.Request, n int64) int64 {
	n = min(n, s.opts.RunMemory)
	if n <= 0 {
		return 0
	}
	if e := s.acquire(r, s.runBytes, n); e != nil {
		e.Message = fmt.Sprintf("the server's runs hold as much memory as they may at once (RunMemory, %d bytes); try again shortly", s.opts.RunMemory)
		s.fail(w, r, "", e)
		return -1
	}
	return n
}

// parseRun reads a run's body, and counts the input values it holds and
// the values its answer will.
func (s *Server) parseRun(body []byte, d runtime.DeploymentInfo) (req *runtime.RunRequest, values, answer int, e *Error) {
	var raw rawRun
	if e := decodeRunBodyInParts(body, &raw, inputParts(len(body)), s.opts.MaxRunSamples); e != nil {
		return nil, 0, 0, e
	}
	if d.Model.IsLanguageModel() {
		return nil, 0, 0, invalid("", "not_a_network", "deployment %s serves the language model %s: use its chat/completions endpoint", d.ID, d.Model.ID)
	}
	model, e := parseString(raw.Model, "model")
	if e != nil {
		return nil, 0, 0, e
	}
	steps, _, e := parseInt(raw.Timesteps, "timesteps", 1, int64(s.opts.MaxRunTimesteps))
	if e != nil {
		return nil, 0, 0, e
	}
	seed, _, e := parseInt(raw.Seed, "seed", math.MinInt64, math.MaxInt64)
	if e != nil {
		return nil, 0, 0, e
	}
	req = &runtime.RunRequest{Deployment: d.ID, Model: model, Timesteps: int(steps), Seed: seed}
	if !absent(raw.Record) {
		var rec []string
		if err := json.Unmarshal(raw.Record, &rec); err != nil {
			return nil, 0, 0, invalid("record", "invalid_type", `record must be an array of "spikes" and "membrane"`)
		}
		for _, what := range rec {
			switch what {
			case "spikes":
				req.Spikes = true
			case "membrane":
				req.Membrane = true
			default:
				return nil, 0, 0, invalid("record", "invalid_value", `record: %q is not "spikes" or "membrane"`, what)
			}
		}
	}
	if absent(raw.Inputs) {
		return nil, 0, 0, invalid("inputs", "missing_field", "inputs is required: an array of samples")
	}
	samples, e := parseInputsInParts(raw.Inputs, raw.samples, raw.read, s.opts.MaxRunSamples, inputParts(len(raw.Inputs)))
	if e != nil {
		return nil, 0, 0, e
	}
	_, outputs := d.Model.Ports()
	m := d.Model.Program.Timesteps
	recorded := 0
	req.Samples = samples
	for k, x := range samples {
		param := fmt.Sprintf("inputs[%d]", k)
		t := int(steps)
		switch {
		case x.Matrix != nil:
			t = len(x.Matrix)
			for _, row := range x.Matrix {
				values += len(row)
			}
		case x.Vector != nil:
			if t == 0 {
				t = m
			}
			values += len(x.Vector)
		default:
			t = x.Timesteps
			values += len(x.Events)
			for _, b := range x.Raster { // a raster's spikes, each an event once read
				values += bits.OnesCount8(b)
			}
		}
		if t > s.opts.MaxRunTimesteps {
			return nil, 0, 0, invalid(param, "invalid_value", "%s runs %d timesteps; the limit is %d", param, t, s.opts.MaxRunTimesteps)
		}
		if values > s.opts.MaxRunValues {
			return nil, 0, 0, invalid(param, "invalid_value", "inputs hold more than %d values", s.opts.MaxRunValues)
		}
		if req.Membrane {
			recorded += t * outputs
		}
		if req.Spikes {
			recorded += t * outputs // at most every output neuron at every step
		}
		if recorded > s.opts.MaxRecordedValues {
			return nil, 0, 0, invalid("record", "invalid_value", "recording would keep more than %d values; record fewer samples or timesteps", s.opts.MaxRecordedValues)
		}
		// spike_counts and final_state hold a value per output neuron each.
		if answer = (k+1)*2*outputs + recorded; answer > s.opts.MaxRunOutputValues {
			return nil, 0, 0, invalid("inputs", "invalid_value", "the answer would hold more than %d values (MaxRunOutputValues): spike_counts and final_state are %d values per sample, plus what record keeps; send fewer samples",
				s.opts.MaxRunOutputValues, 2*outputs)
		}
		req.Samples[k] = x
	}
	return req, values, answer, nil
}
