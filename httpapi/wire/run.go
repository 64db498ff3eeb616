package wire

import (
	"encoding/base64"
	"encoding/binary"
	"strconv"
)

// RunRequest runs samples through a network's deployment (POST
// /v1/deployments/{id}/run). Each sample is one of: a vector presented
// at every step ([]float32), a matrix of one row per step
// ([][]float32), or an EventSample.
type RunRequest struct {
	Inputs    []any    `json:"inputs"`
	Timesteps int      `json:"timesteps,omitempty"`
	Record    []string `json:"record,omitempty"` // "spikes", "membrane"
	Model     string   `json:"model,omitempty"`
	Seed      int64    `json:"seed,omitempty"`
}

// EventSample is sparse input: Events[k] = [t, i], input i spikes at
// step t.
type EventSample struct {
	Events    [][2]int `json:"events"`
	Timesteps int      `json:"timesteps"`
}

// MarshalJSON writes the sample as encoding/json would, without
// reflection: a batch holds hundreds of thousands of events.
func (s EventSample) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 32+len(s.Events)*12)
	b = append(b, `{"events":`...)
	if s.Events == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for k, e := range s.Events {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(e[0]), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(e[1]), 10)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	b = append(b, `,"timesteps":`...)
	b = strconv.AppendInt(b, int64(s.Timesteps), 10)
	return append(b, '}'), nil
}

// Pack returns the sample in the compact form, PackedEventSample.
// Steps and inputs must fit in an int32.
func (s EventSample) Pack() PackedEventSample {
	b := make([]byte, 8*len(s.Events))
	for k, e := range s.Events {
		binary.LittleEndian.PutUint32(b[8*k:], uint32(int32(e[0])))
		binary.LittleEndian.PutUint32(b[8*k+4:], uint32(int32(e[1])))
	}
	return PackedEventSample{Events: base64.StdEncoding.EncodeToString(b), Timesteps: s.Timesteps}
}

// PackedEventSample is an EventSample in compact form: its events as
// little-endian int32 pairs (t, i), 8 bytes an event, in standard
// base64. It is about a quarter of the JSON's size, and the server
// reads it at memory speed.
type PackedEventSample struct {
	Events    string `json:"events_packed"`
	Timesteps int    `json:"timesteps"`
}

// Run is the result of a run.
type Run struct {
	ID         string      `json:"id"`
	Object     string      `json:"object"` // "network.run"
	Created    int64       `json:"created"`
	Model      string      `json:"model"`
	Deployment string      `json:"deployment"`
	Outputs    []RunOutput `json:"outputs"`
	Usage      RunUsage    `json:"usage"`
	Warnings   []string    `json:"warnings"`
}

// RunOutput is one sample's result. Spikes and Membrane are nil unless
// they were recorded; recorded spikes may be an empty list.
type RunOutput struct {
	Index       int         `json:"index"`
	SpikeCounts []float32   `json:"spike_counts"`
	Prediction  int         `json:"prediction"`
	FinalState  []float32   `json:"final_state"`
	Spikes      [][2]int    `json:"spikes,omitzero"`
	Membrane    [][]float32 `json:"membrane,omitempty"`
}

// RunUsage is what a run cost.
type RunUsage struct {
	Samples     int     `json:"samples"`
	Timesteps   int64   `json:"timesteps"`
	Spikes      float64 `json:"spikes"`
	SynapticOps float64 `json:"synaptic_ops"`
	EnergyUJ    float64 `json:"energy_uj"`
	DeviceMS    float64 `json:"device_ms"`
}
