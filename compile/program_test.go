package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neuro-go/neuro/snn"
)

func testGraph(seed uint64) *snn.Graph {
	rng := rand.New(rand.NewPCG(seed, 1))
	w1, w2, rec := snn.NewTensor(16, 8), snn.NewTensor(4, 16), snn.NewTensor(16, 16)
	for _, w := range []*snn.Tensor{w1, w2, rec} {
		for i := range w.Data {
			w.Data[i] = float32(rng.NormFloat64())
		}
	}
	p := []float64{0.02}
	return snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{8}}).
		Add("fc1", &snn.Affine{Weight: w1, Bias: make([]float32, 16)}).
		Add("lif", &snn.LIF{Tau: p, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{0.5}, VReset: []float64{0}}).
		Add("fc2", &snn.Linear{Weight: w2}).
		Add("li", &snn.LI{Tau: p, R: []float64{1}, VLeak: []float64{0}}).
		Add("out", &snn.Output{}).
		Connect("in", "fc1", "lif", "fc2", "li", "out").
		Add("rec", &snn.Linear{Weight: rec}).
		Connect("lif", "rec", "lif")
}

func run(t testing.TB, g *snn.Graph, steps int) []float32 {
	t.Helper()
	sim, err := snn.NewSimulator(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	var outs []float32
	x := make([]float32, sim.Inputs()[0].Size)
	for s := 0; s < steps; s++ {
		for i := range x {
			x[i] = float32((s*7+i*3)%5) * 0.3
		}
		if err := sim.Step(x); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, sim.Output(0)...)
	}
	return outs
}

func saved(t testing.TB, p *Program) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := p.Save(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestProgramSaveLoadRunsIdentically(t *testing.T) {
	g := testGraph(1)
	p, _, err := Compile(g, &Options{Name: "t", Task: TaskClassification, Timesteps: 10})
	if err != nil {
		t.Fatal(err)
	}
	p.Metadata = map[string]string{"card": "test"}
	b := saved(t, p)
	q, err := Load(bytes.NewReader(b), int64(len(b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.Name != "t" || q.Task != TaskClassification || q.Timesteps != 10 || q.Metadata["card"] != "test" || q.Placement == nil {
		t.Fatalf("metadata lost: %+v", q)
	}
	a, c := run(t, p.Graph, 50), run(t, q.Graph, 50)
	if !bytes.Equal(f32bytes(a), f32bytes(c)) {
		t.Fatal("loaded program runs differently")
	}
	// Saving again gives the same bytes.
	if !bytes.Equal(saved(t, q), b) {
		t.Fatal("save is not deterministic")
	}
}

func f32bytes(xs []float32) []byte {
	var b []byte
	for _, x := range xs {
		u := math.Float32bits(x)
		b = append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	}
	return b
}

func TestLoadRefusesDamage(t *testing.T) {
	p, _, err := Compile(testGraph(2), nil)
	if err != nil {
		t.Fatal(err)
	}
	good := saved(t, p)
	flip := func(i int) []byte {
		b := append([]byte(nil), good...)
		b[i] ^= 0x40
		return b
	}
	for name, b := range map[string][]byte{
		"truncated":        good[:len(good)-7],
		"empty":            nil,
		"short":            good[:20],
		"header flipped":   flip(20),
		"data flipped":     flip(len(good) - 40),
		"checksum flipped": flip(len(good) - 1),
		"huge header len":  append([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, good[8:]...),
	} {
		_, err := Load(bytes.NewReader(b), int64(len(b)), nil)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	if _, err := Load(bytes.NewReader(good), int64(len(good)), &LoadOptions{MaxBytes: 100}); err == nil {
		t.Error("file over MaxBytes accepted")
	}
}

func TestLoadRefusesNewerVersion(t *testing.T) {
	p, _, err := Compile(testGraph(3), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := saved(t, p)
	// Rewrite the version in the header and fix the checksum, as a newer
	// writer would have produced it.
	i := bytes.Index(b, []byte(`"version":1`))
	b[i+len(`"version":`)] = '7'
	b = resum(b)
	_, err = Load(bytes.NewReader(b), int64(len(b)), nil)
	if !errors.Is(err, ErrNewerVersion) {
		t.Fatalf("%v, want ErrNewerVersion", err)
	}
}

func resum(b []byte) []byte {
	body := b[:len(b)-32]
	var buf bytes.Buffer
	buf.Write(body)
	s := sha(body)
	buf.Write(s)
	return buf.Bytes()
}

// FuzzLoad: no input makes Load panic or allocate without bound; the seeds
// are valid programs, so mutations reach every check past the checksum only
// when the fuzzer also fixes the checksum, which resumming does.
func FuzzLoad(f *testing.F) {
	p, _, _ := Compile(testGraph(4), nil)
	var buf bytes.Buffer
	p.Save(&buf)
	f.Add(buf.Bytes(), false)
	f.Add(buf.Bytes()[:100], true)
	// A program with calibrated ranges, so mutations reach CheckRanges.
	c := calibrationProgram(f, InputCurrent)
	if err := Calibrate(c, [][][]float32{{{1, -1}}}); err != nil {
		f.Fatal(err)
	}
	f.Add(saved(f, c), true)
	f.Fuzz(func(t *testing.T, b []byte, fixSum bool) {
		if fixSum && len(b) > 40 {
			b = resum(b)
		}
		q, err := Load(bytes.NewReader(b), int64(len(b)), &LoadOptions{MaxBytes: 1 << 20})
		if err == nil {
			if _, err := snn.NewSimulator(q.Graph, &snn.Options{MaxStateBytes: 1 << 24}); err != nil && !errors.Is(err, snn.ErrInvalidGraph) {
				_ = err // too big for the fuzz budget is fine
			}
		}
	})
}

func sha(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}

// faultyReader fails its failAt'th ReadAt (counting from 1) with err, in
// the manner of pebble's errorfs: every read Load makes can be made to
// fail in turn.
type faultyReader struct {
	r      io.ReaderAt
	calls  int
	failAt int
	err    error
}

func (f *faultyReader) ReadAt(p []byte, off int64) (int, error) {
	f.calls++
	if f.calls == f.failAt {
		return 0, f.err
	}
	return f.r.ReadAt(p, off)
}

// TestLoadKeepsCause: whichever read fails, Load's error is ErrCorrupt and
// still carries the reader's error, so callers can tell a damaged file
// from a failing disk.
func TestLoadKeepsCause(t *testing.T) {
	p, _, err := Compile(testGraph(3), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := saved(t, p)
	count := &faultyReader{r: bytes.NewReader(b)}
	if _, err := Load(count, int64(len(b)), nil); err != nil {
		t.Fatal(err)
	}
	if count.calls < 5 {
		t.Fatalf("Load made %d reads; the test wants every kind (length, checksum, trailer, header, tensors)", count.calls)
	}
	for i := 1; i <= count.calls; i++ {
		for _, cause := range []error{io.ErrUnexpectedEOF, errors.New("disk on fire")} {
			_, err := Load(&faultyReader{r: bytes.NewReader(b), failAt: i, err: cause}, int64(len(b)), nil)
			if !errors.Is(err, ErrCorrupt) || !errors.Is(err, cause) {
				t.Errorf("read %d of %d failing with %v: Load gave %v, want ErrCorrupt wrapping the cause", i, count.calls, cause, err)
			}
		}
	}
	// A header that is not JSON keeps the decoder's error too.
	bad := append([]byte(nil), b...)
	bad[8] = '!'
	sum := sha256.Sum256(bad[:len(bad)-sha256.Size])
	copy(bad[len(bad)-sha256.Size:], sum[:])
	var syntax *json.SyntaxError
	if _, err := Load(bytes.NewReader(bad), int64(len(bad)), nil); !errors.Is(err, ErrCorrupt) || !errors.As(err, &syntax) {
		t.Errorf("bad header: %v, want ErrCorrupt wrapping a *json.SyntaxError", err)
	}
}
