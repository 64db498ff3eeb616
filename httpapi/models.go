package httpapi

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

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

func (s *Server) record(m *runtime.Model) *wire.Model {
	rec := &wire.Model{ID: m.ID, Object: "model", Created: m.Created.Unix(), OwnedBy: m.OwnedBy, Description: m.Card.Description}
	if rec.OwnedBy == "" {
		rec.OwnedBy = "neuro"
	}
	if m.Card.Architecture != "" || m.Card.Training != "" {
		c := m.Card
		rec.Card = &wire.Card{Description: c.Description, Architecture: c.Architecture, Parameters: c.Parameters, Neurons: c.Neurons,
			Synapses: c.Synapses, Training: c.Training, License: c.License, Quality: c.Quality, Extra: c.Extra}
	}
	lm := m.IsLanguageModel()
	rec.Capabilities = wire.Capabilities{Chat: m.CanChat(), Completions: lm, Streaming: lm, Logprobs: lm}
	ni := &wire.Neuromorphic{Context: wire.Context{Handling: "recurrent spiking state (constant memory per sequence)", Length: m.ContextLength()}, Devices: []string{}}
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
	data := []*wire.Model{}
	for _, m := range s.be.Models() {
		if visible(m, principal) {
			data = append(data, s.record(m))
		}
	}
	sort.Slice(data, func(i, j int) bool { return data[i].ID < data[j].ID })
	writeJSON(w, http.StatusOK, &wire.List[*wire.Model]{Object: "list", Data: data})
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	m, err := s.lookupModel(r.PathValue("id"), info(r).principal)
	if err != nil {
		writeError(w, s.internalError(r, err))
		return
	}
	writeJSON(w, http.StatusOK, s.record(m))
}

func deploymentOf(d runtime.DeploymentInfo) *wire.Deployment {
	rec := &wire.Deployment{
		ID: d.ID, Object: "deployment", Model: d.Model.ID,
		Device: wire.Device{Name: d.Device.Name, Kind: string(d.Device.Kind), Vendor: d.Device.Vendor, Model: d.Device.Model},
		Status: string(d.Status), Created: d.Created.Unix(), Replicas: d.Replicas, MaxBatchSize: d.MaxBatch,
		Load: wire.DeploymentLoad{Active: d.Active, Queued: d.Queued}, OwnedBy: d.Owner, Node: d.Node, Waiting: d.Waiting,
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
func (s *Server) deployments(principal string) []*wire.Deployment {
	data := []*wire.Deployment{}
	for _, d := range s.be.DeploymentInfos() {
		if visibleDeployment(d, principal) {
			data = append(data, deploymentOf(d))
		}
	}
	return data
}

func (s *Server) handleDeployments(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, &wire.List[*wire.Deployment]{Object: "list", Data: s.deployments(info(r).principal)})
}

func (s *Server) handleDeployment(w http.ResponseWriter, r *http.Request) {
	d, err := s.lookupDeployment(r.PathValue("id"), info(r).principal)
	if err != nil {
		writeError(w, s.internalError(r, err))
		return
	}
	writeJSON(w, http.StatusOK, deploymentOf(d))
}

// handleHealth answers 200 when every deployment is ready, 503 with the reason otherwise.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	deps := s.deployments("")
	out := &wire.Health{Status: "ok", Mock: s.opts.Mock, Deployments: make([]wire.DeploymentHealth, 0, len(deps))}
	reason := ""
	for _, d := range deps {
		out.Deployments = append(out.Deployments, wire.DeploymentHealth{ID: d.ID, Status: d.Status})
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
	if nl, ok := s.be.(NodeLister); ok {
		out.Nodes = nl.Nodes()
		for _, n := range out.Nodes {
			if n.Self {
				out.Node = n.Name
			}
		}
	}
	if reason != "" {
		code := "unavailable"
		out.Status, out.Reason = "unavailable", reason
		out.Error = &wire.ErrorBody{Message: reason, Type: typeServer, Code: &code}
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusServiceUnavailable, out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
