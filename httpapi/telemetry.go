package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/neuro-go/neuro/runtime"
)

type telemetryResponse struct {
	Object string `json:"object"`
	Window struct {
		Start int64 `json:"start"`
		End   int64 `json:"end"`
	} `json:"window"`
	*runtime.Summary
	// Nodes are those of a backend that spans several (NodeLister).
	Nodes []NodeStatus `json:"nodes,omitempty"`
}

// NodeStatus is one node of a cluster as /v1/telemetry and /health
// report it.
type NodeStatus struct {
	Name string `json:"name"`
	// Up is false for a node that has joined and is not answering now:
	// the records it made before are in the totals, its later ones not.
	Up bool `json:"up"`
	// Self marks the node that answers.
	Self bool `json:"self,omitempty"`
}

// NodeLister is an optional ability of a Backend that spans several
// nodes (a cluster): /v1/telemetry and /health list its nodes, so that
// a node that is down is reported, never silently left out.
type NodeLister interface {
	Nodes() []NodeStatus
}

// handleTelemetry reports the caller's own requests. window is a Go
// duration ("5m", "1h", "90s"); model and deployment filter.
func (s *Server) handleTelemetry(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := runtime.Filter{Principal: info(r).principal, Model: q.Get("model"), Deployment: q.Get("deployment")}
	if m, err := s.be.Model(f.Model); err == nil {
		f.Model = m.ID // an alias counts as its model
	}
	if ws := q.Get("window"); ws != "" {
		d, err := time.ParseDuration(ws)
		if err != nil || d < 0 {
			writeError(w, invalid("window", "invalid_value", "window %q is not a duration such as 5m or 1h", ws))
			return
		}
		f.Window = d
	}
	sum, err := s.be.Telemetry().Summarize(f)
	if errors.Is(err, runtime.ErrBadWindow) {
		writeError(w, invalid("window", "invalid_value", "%s", trimPrefix(err)))
		return
	}
	if err != nil {
		writeError(w, toError(err))
		return
	}
	out := telemetryResponse{Object: "telemetry", Summary: sum}
	if nl, ok := s.be.(NodeLister); ok {
		out.Nodes = nl.Nodes()
	}
	out.Window.Start, out.Window.End = sum.WindowStart.Unix(), sum.WindowEnd.Unix()
	writeJSON(w, http.StatusOK, &out)
}
