package wire

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
)

// RunRequest runs samples through a network's deployment (POST
// /v1/deployments/{id}/run). Each sample is one of: a vector presented
// at every step ([]float32), a matrix of one row per step
// ([][]float32), an EventSample, or its compact forms PackedEventSample
// and RasterSample.
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

// AppendJSON appends the request as json.Marshal writes it. The samples
// of the kinds this package defines are written directly, without
// encoding/json's check of what a MarshalJSON returns, which costs more
// than writing them: a batch holds hundreds of thousands of events.
func (r *RunRequest) AppendJSON(b []byte) ([]byte, error) {
	size := 64
	for _, x := range r.Inputs {
		switch x := x.(type) {
		case EventSample:
			size += 32 + 12*len(x.Events)
		case PackedEventSample:
			size += 48 + len(x.Events)
		case RasterSample:
			size += 48 + len(x.Raster)
		default:
			size += 64
		}
	}
	b = slices.Grow(b, size)
	b = append(b, `{"inputs":`...)
	if r.Inputs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		// A large batch is written in parts on as many goroutines as there
		// are processors, each into its own buffer, joined in order.
		parts := 1
		if size >= parallelJSON {
			parts = min(runtime.GOMAXPROCS(0), len(r.Inputs), 8)
		}
		if parts == 1 {
			var err error
			if b, err = appendInputs(b, r.Inputs, false); err != nil {
				return nil, err
			}
		} else {
			bufs, errs := make([][]byte, parts), make([]error, parts)
			var wg sync.WaitGroup
			n := len(r.Inputs)
			for p := range parts {
				lo, hi := p*n/parts, (p+1)*n/parts
				wg.Go(func() {
					bufs[p], errs[p] = appendInputs(make([]byte, 0, size/parts+64), r.Inputs[lo:hi], lo > 0)
				})
			}
			wg.Wait()
			for p := range parts {
				if errs[p] != nil {
					return nil, errs[p]
				}
				b = append(b, bufs[p]...)
			}
		}
		b = append(b, ']')
	}
	rest, err := json.Marshal(struct {
		Timesteps int      `json:"timesteps,omitempty"`
		Record    []string `json:"record,omitempty"`
		Model     string   `json:"model,omitempty"`
		Seed      int64    `json:"seed,omitempty"`
	}{r.Timesteps, r.Record, r.Model, r.Seed})
	if err != nil {
		return nil, err
	}
	if len(rest) > 2 { // more than {}
		b = append(b, ',')
	}
	return append(b, rest[1:]...), nil
}

// parallelJSON is the size of a request's JSON, in bytes, from which
// AppendJSON writes its samples on several goroutines.
const parallelJSON = 1 << 20

// appendInputs appends the samples in inputs, comma-separated, and a
// comma before the first when more is true.
func appendInputs(b []byte, inputs []any, more bool) ([]byte, error) {
	for k, x := range inputs {
		if k > 0 || more {
			b = append(b, ',')
		}
		switch x := x.(type) {
		case EventSample:
			b = x.appendJSON(b)
			continue
		case *EventSample:
			if x != nil {
				b = x.appendJSON(b)
				continue
			}
		case PackedEventSample:
			if x.Events == x.packed || plainBase64(x.Events) {
				b = x.appendJSON(b)
				continue
			}
		case RasterSample:
			if x.Raster == x.packed || plainBase64(x.Raster) {
				b = appendBase64Sample(b, `{"raster":"`, x.Raster, x.Timesteps)
				continue
			}
		}
		v, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		b = append(b, v...)
	}
	return b, nil
}

// MarshalJSON writes the sample as encoding/json would, without
// reflection: a batch holds hundreds of thousands of events.
func (s EventSample) MarshalJSON() ([]byte, error) {
	return s.appendJSON(make([]byte, 0, 32+len(s.Events)*12)), nil
}

func (s EventSample) appendJSON(b []byte) []byte {
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
			b = appendInt(b, e[0])
			b = append(b, ',')
			b = appendInt(b, e[1])
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	b = append(b, `,"timesteps":`...)
	b = strconv.AppendInt(b, int64(s.Timesteps), 10)
	return append(b, '}')
}

// appendInt appends v in decimal as strconv does, the common steps and
// inputs, below 10,000, digit by digit.
func appendInt(b []byte, v int) []byte {
	switch {
	case uint(v) < 10:
		return append(b, byte('0'+v))
	case uint(v) < 100:
		return append(b, byte('0'+v/10), byte('0'+v%10))
	case uint(v) < 1000:
		return append(b, byte('0'+v/100), byte('0'+v/10%10), byte('0'+v%10))
	case uint(v) < 10000:
		return append(b, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
	}
	return strconv.AppendInt(b, int64(v), 10)
}

// Pack returns the sample in the compact form, PackedEventSample.
// Steps and inputs must fit in an int32.
func (s EventSample) Pack() PackedEventSample {
	b := make([]byte, 8*len(s.Events))
	for k, e := range s.Events {
		binary.LittleEndian.PutUint32(b[8*k:], uint32(int32(e[0])))
		binary.LittleEndian.PutUint32(b[8*k+4:], uint32(int32(e[1])))
	}
	text := base64.StdEncoding.EncodeToString(b)
	return PackedEventSample{Events: text, Timesteps: s.Timesteps, packed: text}
}

// PackedEventSample is an EventSample in compact form: its events as
// little-endian int32 pairs (t, i), 8 bytes an event, in standard
// base64. It is about a quarter of the JSON's size, and the server
// reads it at memory speed.
type PackedEventSample struct {
	Events    string `json:"events_packed"`
	Timesteps int    `json:"timesteps"`
	// packed is the text Pack wrote, which AppendJSON need not check
	// while Events is still it.
	packed string
}

// plainBase64 reports whether s holds only standard base64's
// characters, which JSON writes without escapes.
func plainBase64(s string) bool {
	var bad byte
	for i := 0; i < len(s); i++ {
		bad |= notBase64[s[i]]
	}
	return bad == 0
}

// notBase64 is 1 for the bytes standard base64 does not write.
var notBase64 = func() (t [256]byte) {
	for c := range t {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=') {
			t[c] = 1
		}
	}
	return t
}()

// appendJSON writes the sample as json.Marshal does, its Events being
// plainBase64.
func (s PackedEventSample) appendJSON(b []byte) []byte {
	return appendBase64Sample(b, `{"events_packed":"`, s.Events, s.Timesteps)
}

// appendBase64Sample writes a sample of one plainBase64 text after
// head, and its timesteps, as json.Marshal does.
func appendBase64Sample(b []byte, head, text string, timesteps int) []byte {
	b = append(b, head...)
	b = append(b, text...)
	b = append(b, `","timesteps":`...)
	b = strconv.AppendInt(b, int64(timesteps), 10)
	return append(b, '}')
}

// RasterSample holds a sample's input spikes as bits in standard
// base64: a row of the network's n inputs per step, input i firing at
// step t where bit t·n+i is set, bit k being bit k%8 of byte k/8 (least
// significant first, as numpy.packbits writes with bitorder="little").
// It is exactly ⌈Timesteps·n/8⌉ bytes, with the bits past the last step
// zero. Where more than about one input in 64 fires, it is smaller than
// the events packed, and with dense spike trains (rate-coded images)
// many times smaller.
type RasterSample struct {
	Raster    string `json:"raster"`
	Timesteps int    `json:"timesteps"`
	packed    string // the text EventSample.Raster wrote
}

// Raster returns the sample as a RasterSample of a network of inputs
// inputs. Each event must lie within the sample's steps and the inputs.
func (s EventSample) Raster(inputs int) (RasterSample, error) {
	if s.Timesteps < 1 || inputs < 1 || s.Timesteps > math.MaxInt/8/inputs {
		return RasterSample{}, fmt.Errorf("wire: a raster of %d timesteps of %d inputs", s.Timesteps, inputs)
	}
	b := make([]byte, (s.Timesteps*inputs+7)/8)
	for k, e := range s.Events {
		if uint(e[0]) >= uint(s.Timesteps) || uint(e[1]) >= uint(inputs) {
			return RasterSample{}, fmt.Errorf("wire: event %d, [%d, %d], is outside %d timesteps of %d inputs", k, e[0], e[1], s.Timesteps, inputs)
		}
		bit := e[0]*inputs + e[1]
		b[bit/8] |= 1 << (bit % 8)
	}
	text := base64.StdEncoding.EncodeToString(b)
	return RasterSample{Raster: text, Timesteps: s.Timesteps, packed: text}, nil
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
