package httpapi

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/neuro-go/neuro/runtime"
)

type modelRecord struct {
	ID           string       `json:"id"`
	Object       string       `json:"object"`
	Created      int64        `json:"created"`
	OwnedBy      string       `json:"owned_by"`
	Capabilities capabilities `json:"capabilities"`
	Neuromorphic *neuroInfo   `json:"neuromorphic"`
	Description  string       `json:"description,omitempty"`
	// Card is the model card (architecture, training, quality, speed),
	// for models that have one.
	Card *runtime.Card `json:"card,omitempty"`
}

type capabilities struct {
	Chat        bool `json:"chat"`
	Completions bool `json:"completions"`
	Streaming   bool `json:"streaming"`
	Logprobs    bool `json:"logprobs"`
}

type neuroInfo struct {
	Neurons            int         `json:"neurons"`
	Synapses           int         `json:"synapses"`
	Layers             int         `json:"layers"`
	Parameters         int         `json:"parameters"`
	TimestepsPerToken  int         `json:"timesteps_per_token,omitempty"`
	TimestepsPerSample int         `json:"timesteps_per_sample,omitempty"`
	Context            contextInfo `json:"context"`
	Devices            []string    `json:"devices"`
}

type contextInfo struct {
	// Handling is how the network holds its context: in the spiking
	// state of its recurrent layers, of constant size.
	Handling string `json:"handling"`
	// Length is the most tokens a sequence may hold; 0 is unbounded.
	Length int `json:"length"`
}

// visible reports whether principal may see the model: compiled networks
// are their owner's alone.
func visible(m *runtime.Model, principal string) bool {
	return m.Network == nil || m.Network.Owner == principal
}

// lookupModel finds a model by id or alias, as principal may see it: a
// network another caller compiled is not found, as if it did not exist.
func (s *Server) lookupModel(id, principal string) (*runtime.Model, error) {
	m, err := s.be.Model(id)
	if err == nil && !visible(m, principal) {
		err = fmt.Errorf("%w: %q", runtime.ErrModelNotFound, id)
	}
	return m, err
}

func (s *Server) record(m *runtime.Model) *modelRecord {
	rec := &modelRecord{ID: m.ID, Object: "model", Created: m.Created.Unix(), OwnedBy: m.OwnedBy, Description: m.Card.Description}
	if rec.OwnedBy == "" {
		rec.OwnedBy = "neuro"
	}
	if m.Card.Architecture != "" || m.Card.Training != "" {
		card := m.Card
		rec.Card = &card
	}
	lm := m.IsLanguageModel()
	rec.Capabilities = capabilities{Chat: lm, Completions: lm, Streaming: lm, Logprobs: lm}
	ni := &neuroInfo{Context: contextInfo{Handling: "recurrent spiking state (constant memory per sequence)", Length: m.ContextLength()}, Devices: []string{}}
	if lm {
		ni.TimestepsPerToken = m.Program.Timesteps
	} else {
		ni.TimestepsPerSample = m.Program.Timesteps
		ni.Context.Handling = "none (one sample at a time)"
	}
	// An error is a model deleted since it was listed: it is described
	// without its network.
	if mi, err := s.be.ModelInfo(m.ID); err == nil {
		ni.Neurons, ni.Synapses, ni.Layers, ni.Parameters = mi.Neurons, mi.Synapses, mi.Layers, mi.Parameters
		if mi.Devices != nil {
			ni.Devices = mi.Devices
		}
	}
	rec.Neuromorphic = ni
	return rec
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	principal := info(r).principal
	data := []*modelRecord{}
	for _, m := range s.be.Models() {
		if visible(m, principal) {
			data = append(data, s.record(m))
		}
	}
	sort.Slice(data, func(i, j int) bool { return data[i].ID < data[j].ID })
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	m, err := s.lookupModel(r.PathValue("id"), info(r).principal)
	if err != nil {
		writeError(w, toError(err))
		return
	}
	writeJSON(w, http.StatusOK, s.record(m))
}

type deploymentRecord struct {
	ID           string       `json:"id"`
	Object       string       `json:"object"`
	Model        string       `json:"model"`
	Device       deviceRecord `json:"device"`
	Status       string       `json:"status"`
	Created      int64        `json:"created"`
	Replicas     int          `json:"replicas"`
	MaxBatchSize int          `json:"max_batch_size"`
	Load         loadRecord   `json:"load"`
	Failure      string       `json:"failure,omitempty"`
	OwnedBy      string       `json:"owned_by"`
	Node         string       `json:"node,omitempty"`
}

type deviceRecord struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Vendor string `json:"vendor,omitempty"`
	Model  string `json:"model,omitempty"`
}

type loadRecord struct {
	Active int `json:"active"`
	Queued int `json:"queued"`
}

func deploymentOf(d runtime.DeploymentInfo) *deploymentRecord {
	rec := &deploymentRecord{
		ID: d.ID, Object: "deployment", Model: d.Model.ID,
		Device: deviceRecord{Name: d.Device.Name, Kind: string(d.Device.Kind), Vendor: d.Device.Vendor, Model: d.Device.Model},
		Status: string(d.Status), Created: d.Created.Unix(), Replicas: d.Replicas, MaxBatchSize: d.MaxBatch,
		Load: loadRecord{Active: d.Active, Queued: d.Queued}, OwnedBy: d.Owner, Node: d.Node,
	}
	if rec.OwnedBy == "" {
		rec.OwnedBy = ownerSystem
	}
	if d.Failure != nil {
		rec.Failure = trimPrefix(d.Failure)
	}
	return rec
}

// deployments lists the deployments principal may see; "" lists the
// program's own only.
func (s *Server) deployments(principal string) []*deploymentRecord {
	data := []*deploymentRecord{}
	for _, d := range s.be.DeploymentInfos() {
		if visibleDeployment(d, principal) {
			data = append(data, deploymentOf(d))
		}
	}
	return data
}

func (s *Server) handleDeployments(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": s.deployments(info(r).principal)})
}

func (s *Server) handleDeployment(w http.ResponseWriter, r *http.Request) {
	d, err := s.lookupDeployment(r.PathValue("id"), info(r).principal)
	if err != nil {
		writeError(w, toError(err))
		return
	}
	writeJSON(w, http.StatusOK, deploymentOf(d))
}

// handleHealth answers 200 when every deployment is ready, 503 with the reason otherwise.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	deps := s.deployments("")
	type depHealth struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	out := map[string]any{"status": "ok", "mock": s.opts.Mock}
	list := make([]depHealth, 0, len(deps))
	reason := ""
	for _, d := range deps {
		list = append(list, depHealth{d.ID, d.Status})
		if d.Status != string(runtime.StatusReady) && reason == "" {
			reason = fmt.Sprintf("deployment %s is %s", d.ID, d.Status)
			if d.Failure != "" {
				reason += ": " + d.Failure
			}
		}
	}
	if len(deps) == 0 {
		reason = "no model is deployed"
	}
	out["deployments"] = list
	if nl, ok := s.be.(NodeLister); ok {
		nodes := nl.Nodes()
		out["nodes"] = nodes
		for _, n := range nodes {
			if n.Self {
				out["node"] = n.Name
			}
		}
	}
	if reason != "" {
		out["status"] = "unavailable"
		out["reason"] = reason
		out["error"] = map[string]any{"message": reason, "type": typeServer, "param": nil, "code": "unavailable"}
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusServiceUnavailable, out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
