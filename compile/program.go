package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/neuro-go/neuro/snn"
)

// Program is a compiled network: the graph plus what a device and a runtime
// need to run it.
type Program struct {
	Name string `json:"name"`
	// Task is what the network does: TaskClassification, TaskCausalLM, or
	// "" for a bare network.
	Task Task `json:"task,omitempty"`
	// Graph is the spiking network.
	Graph *snn.Graph `json:"-"`
	// Dt is the time step the graph was built for, in seconds.
	Dt float64 `json:"dt"`
	// Timesteps is how many steps one sample (or one token) is presented.
	Timesteps int `json:"timesteps"`
	// Input and Output say how values enter and leave the network.
	Input  Encoding `json:"input"`
	Output Decoding `json:"output"`
	// Source identifies the file the program was compiled from.
	Source Source `json:"source"`
	// Quantization, when set, records the weight quantisation applied.
	Quantization *QuantizationInfo `json:"quantization,omitempty"`
	// Placement, when set, records where the graph sits on a target.
	Placement *Placement `json:"placement,omitempty"`
	// Metadata holds free-form strings (model cards, tokenizer names).
	Metadata map[string]string `json:"metadata,omitempty"`
	// Ranges, when set, are the graded nodes' ranges measured on
	// calibration data (Calibrate), for fixed-point targets.
	Ranges Ranges `json:"ranges,omitempty"`
}

// Task says what a network does, for the runtime to choose how to serve
// it. The values are the strings of the program file's "task" field.
type Task string

// The tasks.
const (
	TaskClassification Task = "classification" // one label per sample
	TaskCausalLM       Task = "causal-lm"      // next-token logits per token
)

// InputKind says how values enter a network: the program file's
// input.kind.
type InputKind string

// The input kinds.
const (
	InputCurrent InputKind = "current" // values injected as they are, every step
	InputSpikes  InputKind = "spikes"  // values are spikes
	InputRate    InputKind = "rate"    // Bernoulli spikes with the value as probability
	InputOneHot  InputKind = "one-hot" // a token id, held for every step of the token
	// InputOneHotPulse is a token id presented on the token's first step
	// only, the input zero on the steps after.
	InputOneHotPulse InputKind = "one-hot-pulse"
)

// OutputKind says how values leave a network: the program file's
// output.kind.
type OutputKind string

// The output kinds.
const (
	OutputMembrane   OutputKind = "membrane"    // the Output's value after the last step
	OutputSpikeCount OutputKind = "spike-count" // summed over the steps
	OutputLogits     OutputKind = "logits"      // membrane read as unnormalised log-probabilities
)

// Encoding describes how inputs are presented.
type Encoding struct {
	// Kind is one of the InputKind constants.
	Kind InputKind `json:"kind"`
	// Node is the Input node; empty when there is one.
	Node string `json:"node,omitempty"`
	// Size is the input's per-sample length (one-hot: the vocabulary).
	Size int `json:"size,omitempty"`
}

// Decoding describes how outputs are read.
type Decoding struct {
	// Kind is one of the OutputKind constants.
	Kind OutputKind `json:"kind"`
	Node string     `json:"node,omitempty"`
	Size int        `json:"size,omitempty"`
}

// Source identifies where a program came from.
type Source struct {
	Format string `json:"format"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// ProgramFormatVersion is the version Save writes; Load refuses newer ones.
const ProgramFormatVersion = 1

const programMagic = "neuro.program"

// Save writes p as one file: an 8-byte little-endian header length, a JSON
// header (metadata, the graph with weights by reference, and a tensor
// table), the raw little-endian float32 tensors, and a 32-byte SHA-256 of
// everything before it.
func (p *Program) Save(w io.Writer) error {
	if p.Graph == nil {
		return errors.New("compile: Save: program has no graph")
	}
	type entry struct {
		name string
		t    *snn.Tensor
	}
	var tensors []entry
	graphJSON, err := snn.EncodeJSON(p.Graph, &snn.JSONOptions{External: func(node, field string, t *snn.Tensor) (string, error) {
		ref := node + "." + field
		tensors = append(tensors, entry{ref, t})
		return ref, nil
	}})
	if err != nil {
		return fmt.Errorf("compile: Save: %w", err)
	}
	sort.Slice(tensors, func(i, j int) bool { return tensors[i].name < tensors[j].name })
	table := map[string]tensorEntry{}
	var off int64
	for _, e := range tensors {
		n := int64(len(e.t.Data)) * 4
		table[e.name] = tensorEntry{DType: "F32", Shape: e.t.Shape, Offsets: [2]int64{off, off + n}}
		off += n
	}
	h := header{Format: programMagic, Version: ProgramFormatVersion, Program: p, Graph: graphJSON, Tensors: table}
	hb, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("compile: Save: %w", err)
	}
	sum := sha256.New()
	out := io.MultiWriter(w, sum)
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(hb)))
	if _, err := out.Write(lenBuf[:]); err != nil {
		return err
	}
	if _, err := out.Write(hb); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for _, e := range tensors {
		for _, v := range e.t.Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				if _, err := out.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	if _, err := out.Write(buf); err != nil {
		return err
	}
	_, err = w.Write(sum.Sum(nil))
	return err
}

type header struct {
	Format  string                 `json:"format"`
	Version int                    `json:"version"`
	Program *Program               `json:"program"`
	Graph   json.RawMessage        `json:"graph"`
	Tensors map[string]tensorEntry `json:"tensors"`
}

type tensorEntry struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// LoadOptions bound what Load accepts. The zero value works.
type LoadOptions struct {
	// MaxBytes is the largest file accepted. Default 2 GiB.
	MaxBytes int64
	// MaxHeaderBytes is the largest JSON header accepted. Default 64 MiB.
	MaxHeaderBytes int64
}

// ErrCorrupt is wrapped by Load for files that are damaged or not programs.
var ErrCorrupt = errors.New("compile: corrupt program file")

// ErrNewerVersion is wrapped by Load for files of a later format version.
var ErrNewerVersion = errors.New("compile: program file from a newer version")

// Load reads a program written by Save. It checks the checksum before
// trusting any of the content, refuses newer versions, and validates the
// graph.
func Load(r io.ReaderAt, size int64, opts *LoadOptions) (*Program, error) {
	var o LoadOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = 2 << 30
	}
	if o.MaxHeaderBytes == 0 {
		o.MaxHeaderBytes = 64 << 20
	}
	if size < 8+2+sha256.Size {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, size)
	}
	if size > o.MaxBytes {
		return nil, fmt.Errorf("compile: program file of %d bytes exceeds the limit of %d", size, o.MaxBytes)
	}
	var lenBuf [8]byte
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("%w: reading header length: %w", ErrCorrupt, err)
	}
	hlen := binary.LittleEndian.Uint64(lenBuf[:])
	if hlen > uint64(o.MaxHeaderBytes) || hlen > uint64(size-8-sha256.Size) {
		return nil, fmt.Errorf("%w: header length %d does not fit a %d-byte file", ErrCorrupt, hlen, size)
	}
	// Verify the checksum over everything but the trailer, streaming.
	sum := sha256.New()
	body := size - sha256.Size
	if _, err := io.Copy(sum, io.NewSectionReader(r, 0, body)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	var trailer [sha256.Size]byte
	if _, err := r.ReadAt(trailer[:], body); err != nil {
		return nil, fmt.Errorf("%w: reading checksum: %w", ErrCorrupt, err)
	}
	if !bytes.Equal(sum.Sum(nil), trailer[:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	hb := make([]byte, hlen)
	if _, err := r.ReadAt(hb, 8); err != nil {
		return nil, fmt.Errorf("%w: reading header: %w", ErrCorrupt, err)
	}
	var probe struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(hb, &probe); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrCorrupt, err)
	}
	if probe.Format != programMagic {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrCorrupt, probe.Format, programMagic)
	}
	if probe.Version > ProgramFormatVersion {
		return nil, fmt.Errorf("%w: version %d, this build reads up to %d", ErrNewerVersion, probe.Version, ProgramFormatVersion)
	}
	if probe.Version < 1 {
		return nil, fmt.Errorf("%w: version %d", ErrCorrupt, probe.Version)
	}
	var h header
	if err := json.Unmarshal(hb, &h); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrCorrupt, err)
	}
	if h.Program == nil {
		return nil, fmt.Errorf("%w: header has no program", ErrCorrupt)
	}
	dataStart, dataLen := int64(8+hlen), body-int64(8+hlen)
	// Check the tensor table before reading any tensor: in bounds, sizes
	// that match shapes, no overlaps.
	type span struct {
		lo, hi int64
		name   string
	}
	var spans []span
	for name, e := range h.Tensors {
		if e.DType != "F32" {
			return nil, fmt.Errorf("%w: tensor %q has dtype %q, want F32", ErrCorrupt, name, e.DType)
		}
		n := int64(1)
		for _, d := range e.Shape {
			if d < 0 || (d > 0 && n > (dataLen/4)/int64(d)+1) {
				return nil, fmt.Errorf("%w: tensor %q has shape %v, larger than the file", ErrCorrupt, name, e.Shape)
			}
			n *= int64(d)
		}
		lo, hi := e.Offsets[0], e.Offsets[1]
		if lo < 0 || hi < lo || hi > dataLen || hi-lo != 4*n {
			return nil, fmt.Errorf("%w: tensor %q has offsets %v for shape %v in %d data bytes", ErrCorrupt, name, e.Offsets, e.Shape, dataLen)
		}
		spans = append(spans, span{lo, hi, name})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo < spans[i-1].hi {
			return nil, fmt.Errorf("%w: tensors %q and %q overlap", ErrCorrupt, spans[i-1].name, spans[i].name)
		}
	}
	// A failed read is kept here as well as returned: DecodeJSON reports
	// what it was resolving, but the caller needs the reader's error itself
	// to tell a failing disk from a damaged file.
	var readErr error
	g, err := snn.DecodeJSON(h.Graph, &snn.JSONOptions{Resolve: func(ref string, shape []int) (*snn.Tensor, error) {
		e, ok := h.Tensors[ref]
		if !ok {
			return nil, fmt.Errorf("no tensor %q in the file", ref)
		}
		if snn.Size(shape) != snn.Size(e.Shape) {
			return nil, fmt.Errorf("tensor %q has shape %v, the graph says %v", ref, e.Shape, shape)
		}
		raw := make([]byte, e.Offsets[1]-e.Offsets[0])
		if _, err := r.ReadAt(raw, dataStart+e.Offsets[0]); err != nil {
			readErr = fmt.Errorf("reading tensor %q: %w", ref, err)
			return nil, readErr
		}
		t := &snn.Tensor{Shape: shape, Data: make([]float32, len(raw)/4)}
		for i := range t.Data {
			t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return t, nil
	}})
	if readErr != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, readErr)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	p := h.Program
	p.Graph = g
	if err := p.CheckRanges(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return p, nil
}
