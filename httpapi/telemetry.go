package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

// NodeStatus is one node of a cluster as /v1/telemetry and /health
// report it.
type NodeStatus = wire.NodeStatus

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
		writeError(w, s.internalError(r, err))
		return
	}
	out := telemetryOf(sum)
	if nl, ok := s.be.(NodeLister); ok {
		out.Nodes = nl.Nodes()
	}
	writeJSON(w, http.StatusOK, out)
}

// telemetryOf is a summary as /v1/telemetry reports it.
func telemetryOf(sum *runtime.Summary) *wire.Telemetry {
	out := &wire.Telemetry{Object: "telemetry", TelemetryGroup: groupOf(sum.Requests, sum.LatencyMS, sum.Tokens, sum.Neuro),
		TimeToFirstTokenMS: percentilesOf(sum.TTFTMS), ByModel: groupsOf(sum.ByModel), ByDeployment: groupsOf(sum.ByDeploy), Truncated: sum.Truncated}
	out.Window.Start, out.Window.End = sum.WindowStart.Unix(), sum.WindowEnd.Unix()
	return out
}

func groupsOf(m map[string]*runtime.GroupSummary) map[string]*wire.TelemetryGroup {
	if m == nil {
		return nil
	}
	out := make(map[string]*wire.TelemetryGroup, len(m))
	for k, g := range m {
		wg := groupOf(g.Requests, g.LatencyMS, g.Tokens, g.Neuro)
		out[k] = &wg
	}
	return out
}

func groupOf(r runtime.RequestCounts, lat runtime.Percentiles, t runtime.TokenCounts, n runtime.NeuroCounts) wire.TelemetryGroup {
	return wire.TelemetryGroup{
		Requests:  wire.RequestCounts{Total: r.Total, Errors: r.Errors, ByEndpoint: r.ByEndpoint},
		LatencyMS: percentilesOf(lat),
		Tokens:    wire.TokenCounts{Prompt: t.Prompt, Completion: t.Completion, Cached: t.Cached, CacheHits: t.CacheHits, PerSecond: t.PerSecond},
		Neuromorphic: wire.NeuromorphicWork{Timesteps: n.Timesteps, Spikes: n.Spikes, SynapticOps: n.SynapticOps,
			SpikeRate: n.SpikeRate, EnergyEstimateUJ: n.EnergyMicrojoule},
	}
}

func percentilesOf(p runtime.Percentiles) wire.Percentiles {
	return wire.Percentiles{P50: p.P50, P95: p.P95, P99: p.P99, Mean: p.Mean}
}
