package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

// refInputs reads a run body's inputs with encoding/json, field by
// field: the definition that decodeRunBody and parseInputs must match.
func refInputs(body []byte, maxSamples int) (rawRun, []runtime.Sample, *Error) {
	var raw rawRun
	if e := decodeObject(body, &raw); e != nil {
		return raw, nil, e
	}
	if absent(raw.Inputs) {
		return raw, nil, invalid("inputs", "missing_field", "inputs is required")
	}
	var samples []json.RawMessage
	if raw.Inputs[0] != '[' || json.Unmarshal(raw.Inputs, &samples) != nil {
		return raw, nil, invalid("inputs", "invalid_type", "inputs must be an array of samples")
	}
	if len(samples) == 0 || len(samples) > maxSamples {
		return raw, nil, invalid("inputs", "invalid_value", "inputs has %d samples", len(samples))
	}
	out := make([]runtime.Sample, len(samples))
	for k, rs := range samples {
		x, e := refSample(rs, fmt.Sprintf("inputs[%d]", k))
		if e != nil {
			return raw, nil, e
		}
		out[k] = x
	}
	return raw, out, nil
}

func refSample(raw json.RawMessage, param string) (runtime.Sample, *Error) {
	var x runtime.Sample
	bad := func(format string, a ...any) (runtime.Sample, *Error) {
		return x, invalid(param, "invalid_value", param+": "+format, a...)
	}
	switch {
	case len(raw) > 0 && raw[0] == '{':
		var ev struct {
			Events    [][]json.Number `json:"events"`
			Timesteps json.Number     `json:"timesteps"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			return bad("form")
		}
		t, err := ev.Timesteps.Int64()
		if err != nil || t < 1 || t > math.MaxInt32 {
			return bad("timesteps")
		}
		x.Timesteps = int(t)
		x.Events = make([]runtime.SpikeEvent, len(ev.Events))
		for j, pair := range ev.Events {
			if len(pair) != 2 {
				return bad("event %d is not a pair", j)
			}
			t, err1 := pair[0].Int64()
			i, err2 := pair[1].Int64()
			if err1 != nil || err2 != nil || t < math.MinInt32 || t > math.MaxInt32 || i < math.MinInt32 || i > math.MaxInt32 {
				return bad("event %d: whole numbers", j)
			}
			x.Events[j] = runtime.SpikeEvent{T: int(t), I: int(i)}
		}
		return x, nil
	case len(raw) > 1 && raw[0] == '[' && strings.TrimLeft(string(raw[1:]), " \t\r\n")[0] == '[':
		var rows [][]float64
		if err := json.Unmarshal(raw, &rows); err != nil {
			return bad("matrix")
		}
		x.Matrix = make([][]float32, len(rows))
		for t, row := range rows {
			v, ok := float32s(row)
			if !ok {
				return bad("row %d range", t)
			}
			x.Matrix[t] = v
		}
		return x, nil
	case len(raw) > 0 && raw[0] == '[':
		var vec []float64
		if err := json.Unmarshal(raw, &vec); err != nil {
			return bad("vector")
		}
		v, ok := float32s(vec)
		if !ok {
			return bad("range")
		}
		x.Vector = v
		return x, nil
	}
	return bad("not a sample")
}

// float32s converts, refusing values that float32 cannot hold (JSON has
// no NaN or infinity; 1e39 would become one).
func float32s(v []float64) ([]float32, bool) {
	out := make([]float32, len(v))
	for i, f := range v {
		if math.Abs(f) > math.MaxFloat32 {
			return nil, false
		}
		out[i] = float32(f)
	}
	return out, true
}

// newInputs is the run endpoint's reading of the same.
func newInputs(body []byte, maxSamples int) (rawRun, []runtime.Sample, *Error) {
	var raw rawRun
	if e := decodeRunBody(body, &raw); e != nil {
		return raw, nil, e
	}
	if absent(raw.Inputs) {
		return raw, nil, invalid("inputs", "missing_field", "inputs is required")
	}
	samples, e := parseInputs(raw.Inputs, maxSamples)
	return raw, samples, e
}

var runBodySeeds = []string{
	`{"inputs":[[1,2,3]]}`,
	`{"inputs":[[[1,0],[0,1]]], "timesteps": 2}`,
	`{"inputs":[{"events":[[0,1],[3,2]],"timesteps":4}], "seed": 7, "record": ["spikes"]}`,
	`{"Inputs":[{"Events":[[0,"1"],[3,2]],"TimeSteps":"4"}], "MODEL": "net"}`,
	`{"inputs":[{"events":null,"timesteps":1}, {"events":[],"timesteps":1e0}]}`,
	`{"inputs":[{"events":[[0,1,2]],"timesteps":1}]}`,
	`{"inputs":[{"events":[[0.5,1]],"timesteps":1}]}`,
	`{"inputs":[{"events":[null, [null, 1]],"timesteps":1}]}`,
	`{"inputs":[[1e39]]}`,
	`{"inputs":[[null, -0.0, 1E-3]]}`,
	`{"inputs":[[[1],null,[]]]}`,
	`{"inputs":[[], [ ], [[]]]}`,
	`{"inputs":[[1,[2]]]}`,
	`{"inputs":[[[1],2]]}`,
	`{"inputs":"x"}`,
	`{"inputs":[]}`,
	`{"inputs":[1]}`,
	`{"inputs":[true]}`,
	`{"inputs":null}`,
	`[1]`,
	`null`,
	`{"inputs":[[1]]} x`,
	`{"inputs":[[01]]}`,
	`{"inputs":[["1"]]}`,
	`{"inputs":[[1]],"inputs":[[2]]}`,
	`{"inp\u0075ts":[[3]]}`,
	`{"inputs":[{"events":[[0,1]],"timesteps":"\u0031"}]}`,
	`{"inputs":[{"events":[[0,2147483648]],"timesteps":1}]}`,
	`{"inputs":[{"events":[[0,1]],"timesteps":2147483648}]}`,
	`{"inputs":[{"events":[[0,1]],"timesteps":0}]}`,
	`{"inputs":[{"events":{},"timesteps":1}]}`,
	`{"inputs":[{"timesteps":1,"extra":[1,{"a":[]}]}]}`,
	` { "inputs" : [ [ 1 , 2 ] ] , "seed" : -3 } `,
	`{"inputs":[[1,2,]]}`,
	`{"inputs":[[1 2]]}`,
	`{"inputs":[["\x01"]]}`,
	`{"inputs":[{"events":[[0,1]],"timesteps":99999999999999999999}]}`,
	`{"inputs":[{"events":[[-9223372036854775808,1]],"timesteps":1}]}`,
	`{"inputs":[{"events":{},"events":[],"timesteps":1}]}`,
	`{"inputs":[{"events":[[0,1]],"timesteps":1,"timesteps":null}]}`,
	`{"inputs":[{"events":[[0,1]],"timesteps":true,"timesteps":2}]}`,
	`{"inputs":[{"events":[[0,1]],"events":null,"timesteps":2}]}`,
	`{"inputs":[{"events":[[ 0 , 1 ],[1234567890,1],[-0,2],[1.0,1]],"timesteps":2}]}`,
}

// The scanner accepts exactly what encoding/json did, with the same
// samples.
func TestRunBodyMatchesEncodingJSON(t *testing.T) {
	for _, body := range runBodySeeds {
		checkRunBody(t, []byte(body))
	}
	deep := `{"inputs":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`
	checkRunBody(t, []byte(deep))
}

func FuzzRunInputs(f *testing.F) {
	for _, body := range runBodySeeds {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) { // readBody refuses it first
			return
		}
		checkRunBody(t, body)
	})
}

func checkRunBody(t *testing.T, body []byte) {
	t.Helper()
	var v any
	if json.Unmarshal(body, &v) == nil && (hasKey(v, "events_packed") || hasKey(v, "raster")) {
		return // the compact forms, which encoding/json's reading ignored
	}
	const maxSamples = 4
	wantRaw, want, wantErr := refInputs(body, maxSamples)
	gotRaw, got, gotErr := newInputs(body, maxSamples)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: encoding/json says %v, the scanner %v", body, wantErr, gotErr)
	}
	if wantErr != nil {
		return
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%q: encoding/json reads %+v, the scanner %+v", body, want, got)
	}
	if string(wantRaw.Timesteps) != string(gotRaw.Timesteps) || string(wantRaw.Seed) != string(gotRaw.Seed) ||
		string(wantRaw.Model) != string(gotRaw.Model) || string(wantRaw.Record) != string(gotRaw.Record) {
		t.Fatalf("%q: fields %+v, the scanner %+v", body, wantRaw, gotRaw)
	}
}

// BenchmarkRunInputs reads a full batch of the run benchmark's shape
// (64 samples of 100 steps over 700 inputs at 5% activity, as events)
// with encoding/json and with the scanner.
func BenchmarkRunInputs(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"inputs":[`)
	events, state := 0, uint32(1)
	for k := range 64 {
		if k > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"timesteps":100,"events":[`)
		first := true
		for step := range 100 {
			for i := range 700 {
				if state = state*1664525 + 1013904223; state%20 != 0 {
					continue
				}
				if !first {
					sb.WriteByte(',')
				}
				first = false
				fmt.Fprintf(&sb, "[%d,%d]", step, i)
				events++
			}
		}
		sb.WriteString(`]}`)
	}
	sb.WriteString(`]}`)
	body := []byte(sb.String())
	for _, c := range []struct {
		name string
		read func([]byte, int) (rawRun, []runtime.Sample, *Error)
	}{{"encoding-json", refInputs}, {"scanner", newInputs}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, e := c.read(body, 64); e != nil {
					b.Fatal(e)
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func hasKey(v any, key string) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == key || hasKey(x, key) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hasKey(x, key) {
				return true
			}
		}
	}
	return false
}

// The compact form reads as the same events, and its mistakes are 400s
// that say what is wrong.
func TestPackedEvents(t *testing.T) {
	ev := wire.EventSample{Events: [][2]int{{0, 3}, {2, 0}, {2, 699}, {-1, 1 << 30}}, Timesteps: 3}
	body, err := json.Marshal(map[string]any{"inputs": []any{ev.Pack(), ev}})
	if err != nil {
		t.Fatal(err)
	}
	_, got, e := newInputs(body, 4)
	if e != nil {
		t.Fatal(e)
	}
	if !reflect.DeepEqual(got[0], got[1]) || len(got[0].Events) != 4 || got[0].Events[3] != (runtime.SpikeEvent{T: -1, I: 1 << 30}) {
		t.Fatalf("packed %+v, as JSON %+v", got[0], got[1])
	}
	for _, c := range []struct{ sample, want string }{
		{`{"events_packed":"AAAA","timesteps":1}`, "holds 3 bytes"},
		{`{"events_packed":"!!","timesteps":1}`, "not base64"},
		{`{"events_packed":[1],"timesteps":1}`, "must be a string"},
		{`{"events_packed":"","events":[],"timesteps":1}`, "not both"},
		{`{"events_packed":"AAAAAAAAAAA=","timesteps":0}`, "timesteps must be"},
		{`{"raster":"!!","timesteps":1}`, "raster is not base64"},
		{`{"raster":7,"timesteps":1}`, "raster must be a string"},
		{`{"raster":"AA==","events_packed":"","timesteps":1}`, "one of them"},
		{`{"raster":"AA==","timesteps":0}`, "timesteps must be"},
	} {
		_, _, e := newInputs([]byte(`{"inputs":[`+c.sample+`]}`), 4)
		if e == nil || e.Param != "inputs[0]" || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: %v, want a 400 on inputs[0] saying %q", c.sample, e, c.want)
		}
	}
}

// EventSample's own MarshalJSON writes what encoding/json writes.
func TestEventSampleJSON(t *testing.T) {
	for _, ev := range []wire.EventSample{{}, {Events: [][2]int{}}, {Events: [][2]int{{0, 1}, {-5, 1 << 40}}, Timesteps: 9}} {
		got, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		type plain wire.EventSample // without the method
		want, _ := json.Marshal(plain(ev))
		if string(got) != string(want) {
			t.Errorf("%+v: %s, encoding/json %s", ev, got, want)
		}
	}
}

// A large body is read into a buffer that doubles, not one that grows
// by a quarter: a few allocations for megabytes, not dozens.
func TestReadBodyDoubles(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), nil)
	body := strings.Repeat(" ", 4<<20)
	allocs := testing.AllocsPerRun(3, func() {
		r := httptest.NewRequest("POST", "/v1/deployments/x/run", strings.NewReader(body))
		r.ContentLength = -1 // undeclared: the buffer starts small
		if b, e := s.readBody(httptest.NewRecorder(), r, 8<<20); e != nil || len(b) != len(body) {
			t.Fatalf("read %d bytes, %v", len(b), e)
		}
	})
	if allocs > 40 && !raceEnabled { // 31 doubling, with the request's own; 58 growing by a quarter
		t.Fatalf("%v allocations to read %d bytes", allocs, len(body))
	}
}

// A compact events array is read into a slice of exactly its size; one
// with spaces, or none at all, reads the same events.
func TestEventsSizedOnce(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`[{"timesteps":5000,"events":[`)
	for k := range 5000 {
		if k > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "[%d,%d]", k, k%7)
	}
	sb.WriteString(`]},{"timesteps":3,"events":[ [0, 1] , [2,3]]},{"timesteps":3,"events":[]}]`)
	samples, e := parseInputs([]byte(sb.String()), 10)
	if e != nil {
		t.Fatal(e)
	}
	if ev := samples[0].Events; len(ev) != 5000 || cap(ev) != 5000 || ev[4999] != (runtime.SpikeEvent{T: 4999, I: 4999 % 7}) {
		t.Fatalf("%d events, capacity %d", len(ev), cap(ev))
	}
	if ev := samples[1].Events; len(ev) != 2 || ev[1] != (runtime.SpikeEvent{T: 2, I: 3}) {
		t.Fatalf("spaced events read as %v", ev)
	}
	if ev := samples[2].Events; ev == nil || len(ev) != 0 {
		t.Fatalf("no events read as %#v", ev)
	}
}

// compactPair reads what pair reads, the same, or leaves it to pair.
func TestCompactPairIsPair(t *testing.T) {
	for _, c := range []struct {
		in   string
		read bool
	}{
		{"[0,0]", true}, {"[12,345],", true}, {"[123456789,1]]", true},
		{"[1234567890,1]", false}, {"[ 1,2]", false}, {"[1,2 ]", false}, {"[-1,2]", false},
		{"[1.5,2]", false}, {"[1e2,2]", false}, {"[1,2,3]", false}, {"[,2]", false}, {"[1,", false}, {"null", false}, {"", false},
	} {
		ev, next, ok := compactPair([]byte(c.in), 0)
		if ok != c.read {
			t.Errorf("%q: read %v, want %v", c.in, ok, c.read)
			continue
		}
		if !ok {
			continue
		}
		s := &jsonScanner{b: []byte(c.in)}
		want, wok := s.pair()
		if !wok || want != ev || s.i != next {
			t.Errorf("%q: compactPair reads %v up to %d, pair %v (%v) up to %d", c.in, ev, next, want, wok, s.i)
		}
	}
}

// skipCompactPair skips what value skips, or leaves it to value.
func TestSkipCompactPairIsValue(t *testing.T) {
	for _, c := range []struct {
		in   string
		skip bool
	}{
		{"[0,0]", true}, {"[12,345],", true}, {"[1234567890123,1]]", true},
		{"[01,2]", false}, {"[1,00]", false}, {"[ 1,2]", false}, {"[-1,2]", false}, {"[1.5,2]", false},
		{"[1,2e3]", false}, {"[1,2,3]", false}, {"[,2]", false}, {"[1,", false}, {"null", false}, {"", false},
	} {
		next := skipCompactPair([]byte(c.in), 0)
		if (next > 0) != c.skip {
			t.Errorf("%q: skipped to %d, want a skip: %v", c.in, next, c.skip)
			continue
		}
		if next < 0 {
			continue
		}
		s := &jsonScanner{b: []byte(c.in)}
		if _, e := s.value(); e != nil || s.i != next {
			t.Errorf("%q: skipCompactPair ends at %d, value at %d (%v)", c.in, next, s.i, e)
		}
	}
}

// plainPrefix stops at the first quote, backslash or control character,
// wherever it falls in a word of eight.
func TestPlainPrefix(t *testing.T) {
	naive := func(b []byte) int {
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 {
				return i
			}
		}
		return len(b)
	}
	base := []byte("QUJDRA+/=abc~\x7f\xc3\xa9xyzQUJDRAQUJDRA")
	for _, stop := range []byte{'"', '\\', 0, 0x1f, '\n'} {
		for at := range len(base) + 1 {
			b := append([]byte(nil), base...)
			if at < len(b) {
				b[at] = stop
			}
			if got, want := plainPrefix(b), naive(b); got != want {
				t.Fatalf("%q: %d, want %d", b, got, want)
			}
		}
	}
	for c := range 256 {
		b := bytes.Repeat([]byte{byte(c)}, 11)
		if got, want := plainPrefix(b), naive(b); got != want {
			t.Fatalf("byte %#x: %d, want %d", c, got, want)
		}
	}
}

// checkInputParts checks and reads body's inputs in parts, as the run
// endpoint does a large body's, and holds the result to doing it in one:
// the same fields and samples, or the same first error.
func checkInputParts(t *testing.T, body []byte) {
	t.Helper()
	const maxSamples = 4
	var raw rawRun
	err := decodeRunBodyInParts(body, &raw, 1, maxSamples)
	var want []runtime.Sample
	var wantErr *Error
	if err == nil && !absent(raw.Inputs) {
		want, wantErr = parseInputs(raw.Inputs, maxSamples)
	}
	for parts := 2; parts <= 5; parts++ {
		var got rawRun
		e := decodeRunBodyInParts(body, &got, parts, maxSamples)
		read := got.read
		got.read = nil
		if !reflect.DeepEqual(e, err) || !reflect.DeepEqual(got, raw) {
			t.Fatalf("%q checked in %d parts: %+v, %v; in one %+v, %v", body, parts, got, e, raw, err)
		}
		if e != nil || absent(got.Inputs) {
			continue
		}
		samples, sErr := parseInputsInParts(got.Inputs, got.samples, read, maxSamples, parts)
		if !reflect.DeepEqual(want, samples) || !reflect.DeepEqual(wantErr, sErr) {
			t.Fatalf("%q checked and read in %d parts: %+v, %v; serially %+v, %v", body, parts, samples, sErr, want, wantErr)
		}
	}
	if err != nil || absent(raw.Inputs) {
		return
	}
	if raw.Inputs[0] == '[' { // the offsets are where a serial walk finds each sample
		s := &jsonScanner{b: raw.Inputs, i: 1}
		var walk []int
		for s.peek() != ']' {
			walk = append(walk, s.i)
			s.skip()
			if s.peek() == ',' {
				s.i++
			}
		}
		if len(walk) > maxSamples {
			walk = nil // too many to record
		}
		if !reflect.DeepEqual(walk, raw.samples) && len(walk)+len(raw.samples) > 0 {
			t.Fatalf("%q: samples start at %v, decodeRunBody says %v", body, walk, raw.samples)
		}
	}
	for parts := 2; parts <= 5; parts++ {
		got, gotErr := parseInputsInParts(raw.Inputs, raw.samples, nil, maxSamples, parts)
		if !reflect.DeepEqual(want, got) || !reflect.DeepEqual(wantErr, gotErr) {
			t.Fatalf("%q in %d parts: %+v, %v; serially %+v, %v", body, parts, got, gotErr, want, wantErr)
		}
	}
}

// randomRunBody writes a run body of up to six samples of every form,
// some of them wrong, with white space here and there.
func randomRunBody(r *rand.Rand) []byte {
	sp := func() string { return []string{"", "", " ", "\n\t "}[r.IntN(4)] }
	var b strings.Builder
	fmt.Fprintf(&b, `{%s"inputs"%s:%s[`, sp(), sp(), sp())
	for k := range r.IntN(7) {
		if k > 0 {
			b.WriteString(sp() + "," + sp())
		}
		switch r.IntN(8) {
		case 0, 1, 2:
			steps := fmt.Sprintf(`"timesteps":%s`, []string{"0", "1", "3", "03", "1e0", "2.5", "1234567890", "123456789"}[r.IntN(8)])
			stepsFirst := r.IntN(2) == 0
			if stepsFirst {
				fmt.Fprintf(&b, `{%s,"events":[`, steps)
			} else {
				b.WriteString(`{"events":[`)
			}
			for j := range r.IntN(40) {
				if j > 0 {
					b.WriteString(",")
				}
				switch r.IntN(40) {
				case 3:
					fmt.Fprintf(&b, "[0%d,%d]", r.IntN(9), r.IntN(9))
				case 4:
					fmt.Fprintf(&b, "[%d,1234567890]", r.IntN(9))
				case 0:
					fmt.Fprintf(&b, "[%d.5,%d]", r.IntN(9), r.IntN(9))
				case 1:
					fmt.Fprintf(&b, `[ %d , "%d" ]`, r.IntN(9), r.IntN(9))
				case 2:
					fmt.Fprintf(&b, "[%d]", r.IntN(9))
				default:
					fmt.Fprintf(&b, "[%d,%d]", r.IntN(100), r.IntN(700))
				}
			}
			if b.WriteString("]"); !stepsFirst && r.IntN(8) > 0 {
				b.WriteString("," + steps)
			}
			b.WriteString("}")
		case 3:
			fmt.Fprintf(&b, `{"events_packed":"%s","timesteps":2}`, []string{"", "AAAAAAEAAAA=", "AAA", "!"}[r.IntN(4)])
		case 4:
			fmt.Fprintf(&b, "[%d,%s0.5%s,1e%d]", r.IntN(9), sp(), sp(), r.IntN(50))
		case 5:
			fmt.Fprintf(&b, "[[1,2],%s[%d],null]", sp(), r.IntN(9))
		case 6:
			b.WriteString([]string{"true", `"x"`, "null", "1", "{}", "[[1],2]", `{"timesteps":1,"s":"},{","events":[]}`, `{"timesteps":1,"x":[{},{}],"events":[]}`}[r.IntN(8)])
		default:
			b.WriteString("[]")
		}
	}
	fmt.Fprintf(&b, "%s]%s}", sp(), sp())
	body := []byte(b.String())
	if r.IntN(4) == 0 { // a syntax error, or not
		body[r.IntN(len(body))] = "{}[],:\" 1x"[r.IntN(9)]
	}
	return body
}

// Bodies of compactly written samples, some almost so.
var compactSampleSeeds = []string{
	`{"inputs":[{"timesteps":1,"events":[[0,1],]},{"timesteps":1,"events":[]}]}`,
	`{"inputs":[{"timesteps":1,"events":[[0,1]]},{"timesteps":1,"events":[[0,1]`,
	`{"inputs":[{"timesteps":1,"events":[[0,1]]},{"timesteps":1,"events":[[0,1]]}`,
	`{"inputs":[{"timesteps":1,"events":[[0,1]]},{"timesteps":1,"timesteps":2,"events":[]}]}`,
	`{"inputs":[{"timesteps":1,"events":[[0,1]]},{"events":[],"events":[[1,1]],"timesteps":2}]}`,
	`{"inputs":[{"timesteps":1,"events":[[0,1]]},{"timesteps":1,"events":[[0,1]]}],"inputs":[[1]]}`,
	`{"inputs":[{"timesteps":1,"events":[[0,1]]},{"timesteps":1}]}`,
	`{"inputs":[{"timesteps":1,"events":[[0,1]]},{"events":[[0,1]]}]}`,
	`{"inputs":[{"timesteps":7,"events":[[0,1],[6,0]]},{"events":[[0,1]],"timesteps":9},{"timesteps":2,"events":[[123456789,0]]}]}`,
}

// Read in parts, a run's inputs are the same samples, or the same first
// error, as read in one.
func TestInputPartsMatchSerial(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		checkInputParts(t, randomRunBody(r))
	}
	for _, body := range append(runBodySeeds, compactSampleSeeds...) {
		checkInputParts(t, []byte(body))
	}
}

// What compactPair reads is JSON: an array that value checks to the same
// end.
func TestCompactPairIsJSON(t *testing.T) {
	for _, in := range []string{"[0,0]", "[01,2]", "[1,00]", "[10,0]", "[123456789,1]", "[1,2]]"} {
		_, next, ok := compactPair([]byte(in), 0)
		s := &jsonScanner{b: []byte(in)}
		_, e := s.value()
		if ok && (e != nil || s.i != next) {
			t.Errorf("%q: compactPair reads it up to %d, value %d (%v)", in, next, s.i, e)
		}
	}
}

func FuzzInputParts(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(randomRunBody(r))
	}
	for _, body := range append(runBodySeeds, compactSampleSeeds...) {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkInputParts(t, body)
	})
}

// A body of more samples than a run may hold records none of them, so
// that a body of many small samples asks for no more memory than a few.
func TestRunBodyRecordsFewSamples(t *testing.T) {
	body := []byte(`{"inputs":[` + strings.Repeat(`{"timesteps":1,"events":[]},`, 999) + `{"timesteps":1,"events":[]}]}`)
	for parts := 1; parts <= 3; parts++ {
		var raw rawRun
		if e := decodeRunBodyInParts(body, &raw, parts, 4); e != nil || raw.samples != nil || raw.read != nil {
			t.Fatalf("in %d parts: %v, %d samples recorded and %d read", parts, e, len(raw.samples), len(raw.read))
		}
		_, e := parseInputsInParts(raw.Inputs, raw.samples, raw.read, 4, parts)
		if e == nil || e.Message != "inputs has 1000 samples; 1 to 4 are allowed" {
			t.Fatalf("in %d parts: %v", parts, e)
		}
	}
}

// A body whose memory the caller holds is read into one buffer of its
// declared length once its first 64 KiB have come, not doubled there.
func TestReadBodyHeldSizedOnce(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), nil)
	for _, n := range []int{100, 64 << 10, 1_000_000, 3 << 20} {
		body := strings.Repeat(" ", n)
		r := httptest.NewRequest("POST", "/v1/deployments/x/run", strings.NewReader(body))
		b, e := s.readBodyHeld(httptest.NewRecorder(), r, 8<<20, int64(n), nil)
		if e != nil || len(b) != n {
			t.Fatalf("read %d bytes of %d, %v", len(b), n, e)
		}
		// Doubling ends in a buffer up to twice the body (1,826,816 bytes
		// for 1,000,000); at once, in one of the body's size, rounded up
		// to the allocator's size class.
		if n > 64<<10 && cap(b) > n+n/16 {
			t.Errorf("%d bytes read into a buffer of %d", n, cap(b))
		}
	}
	// A body longer than the memory held still reads, doubling.
	r := httptest.NewRequest("POST", "/v1/deployments/x/run", strings.NewReader(strings.Repeat(" ", 1<<20)))
	r.ContentLength = -1
	if b, e := s.readBodyHeld(httptest.NewRecorder(), r, 8<<20, 100<<10, nil); e != nil || len(b) != 1<<20 {
		t.Fatalf("read %d bytes, %v", len(b), e)
	}
}
