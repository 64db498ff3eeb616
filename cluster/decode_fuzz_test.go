package cluster

import (
	"encoding/json"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/neuro-go/neuro/runtime"
)

// The cluster's decoders read what other nodes wrote: bucket records, the
// telemetry stream, rate reports and the calls and replies of routed
// requests. Each fuzz target holds one to this: any bytes decode or give
// an error, never a panic, and what decodes keeps the invariants the node
// relies on.

// stable fails unless v, encoded and decoded again by dec, encodes the
// same: a record that decodes means one thing.
func stable[T any](t *testing.T, v T, dec func([]byte) (T, error)) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		return // a time outside the years JSON writes; the decoder took it
	}
	again, err := dec(b)
	if err != nil {
		t.Fatalf("%s does not decode again: %v", b, err)
	}
	b2, _ := json.Marshal(again)
	if string(b) != string(b2) {
		t.Fatalf("decoded again %s, was %s", b2, b)
	}
}

func seed(f *testing.F, v any, damaged ...string) {
	b, err := json.Marshal(v)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, d := range damaged {
		f.Add([]byte(d))
	}
}

func FuzzDecodeSpec(f *testing.F) {
	good, _ := json.Marshal(spec{ID: "d.1", Model: "neuro-1-lite", Device: "cpu", MaxBatch: 4, Replicas: 1, Owner: "alice",
		Created: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Options: map[string]string{"precision": "int8"}})
	f.Add("d.1", good)
	f.Add("d.2", good)
	f.Add("", []byte(`{"id":""}`))
	f.Add("x", []byte(`{"id":"x","max_batch_size":-1,"replicas":1e9,"created":"0000-01-01T00:00:00Z","device_options":null}`))
	f.Add("x", []byte(`{"id":"x","created":"not a time"}`))
	f.Fuzz(func(t *testing.T, key string, b []byte) {
		s, err := decodeSpec(key, b)
		if err != nil {
			return
		}
		if s.ID != key {
			t.Fatalf("record %q decoded as deployment %q", key, s.ID)
		}
		stable(t, s, func(b []byte) (spec, error) { return decodeSpec(key, b) })
	})
}

func FuzzDecodeLease(f *testing.F) {
	seed(f, lease{Node: "a", Status: runtime.StatusReady, Active: 2, Queued: 1},
		`{"node":"a","status":"failed","failure":"x"}`, `{"active":-1,"queued":1e30}`, `[]`, `nul`)
	f.Fuzz(func(t *testing.T, b []byte) {
		if l, err := decodeLease(b); err == nil {
			stable(t, l, decodeLease)
		}
	})
}

func FuzzDecodeMember(f *testing.F) {
	seed(f, member{Devices: []string{"cpu", "loihi"}, Joined: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		`{"devices":null,"joined":"2026-13-01T00:00:00Z"}`, `{"devices":[1]}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := decodeMember(b); err == nil {
			stable(t, m, decodeMember)
		}
	})
}

func FuzzDecodeNetMeta(f *testing.F) {
	good, _ := json.Marshal(netMeta{Network: &runtime.Network{ID: "net-1", Name: "digits", Owner: "alice"},
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Program: "ab12", Node: "a"})
	f.Add("net-1", good)
	f.Add("net-2", good)
	f.Add("net-1", []byte(`{"network":null}`))
	f.Add("", []byte(`{"network":{}}`))
	f.Fuzz(func(t *testing.T, key string, b []byte) {
		m, err := decodeNetMeta(key, b)
		if err != nil {
			return
		}
		if m.Network == nil || m.Network.ID != key {
			t.Fatalf("record %q decoded as %+v", key, m.Network)
		}
		stable(t, m, func(b []byte) (netMeta, error) { return decodeNetMeta(key, b) })
	})
}

func FuzzDecodeKeyRecord(f *testing.F) {
	seed(f, keyRecord{Principal: "bob"}, `{"principal":""}`, `{"principal":7}`, `{}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeKeyRecord(b)
		if err == nil && p == "" {
			t.Fatalf("%q: a key of no principal", b)
		}
	})
}

// FuzzDecodeQuota: a stored quota that decodes is one the runtime takes.
func FuzzDecodeQuota(f *testing.F) {
	seed(f, runtime.Quota{Networks: 3, NetworkBytes: 1 << 20, Deployments: 2},
		`{"Networks":-1,"NetworkBytes":-1,"Deployments":0}`, `{"Deployments":1e100}`, `{"Networks":"x"}`)
	rt := runtime.New(nil)
	f.Cleanup(func() { rt.Close() })
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := decodeQuota(b)
		if err != nil {
			return
		}
		stable(t, q, decodeQuota)
		rt.SetQuota(q)
		rt.Quota()
	})
}

// spentTarget records what a RateShare passes on.
type spentTarget map[string]int

func (s spentTarget) SpentElsewhere(p string, n int) { s[p] += n }

// FuzzRateReport: another node's report reaches the server as its counts,
// and this node's own report not at all.
func FuzzRateReport(f *testing.F) {
	seed(f, rateReport{Node: "b", Counts: map[string]int{"alice": 3, "bob": 1}},
		`{"node":"me","counts":{"alice":1}}`, `{"node":"b","counts":{"alice":-5,"":1e9}}`, `{"counts":null}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		got := spentTarget{}
		r := &RateShare{n: &Node{o: Options{Name: "me"}}, counts: map[string]int{}, target: got}
		r.receive(&nats.Msg{Data: b})
		rep, err := decodeRateReport(b)
		if err != nil || rep.Node == "me" {
			if len(got) != 0 {
				t.Fatalf("%q: passed on %v", b, got)
			}
			return
		}
		want := spentTarget{}
		for p, c := range rep.Counts {
			want[p] += c
		}
		if !maps.Equal(got, want) {
			t.Fatalf("%q: passed on %v, want %v", b, got, want)
		}
	})
}

// FuzzDecodeRecord: telemetry records from the stream, one alone or a
// batch, are kept and summarized whatever their values.
func FuzzDecodeRecord(f *testing.F) {
	seed(f, runtime.Record{At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Principal: "alice", Model: "m", Endpoint: "chat",
		Latency: time.Second, TTFT: time.Millisecond, PromptTokens: 5, CompletionTokens: 7},
		`{"At":"0001-01-01T00:00:00Z","Latency":-9223372036854775808,"TTFT":-1,"PromptTokens":-3,"Err":true}`,
		`{"At":"9999-12-31T23:59:59Z","Principal":"","CompletionTokens":9223372036854775807}`, `{"Stats":{}}`,
		`[{"Principal":"a","PromptTokens":1},{"Principal":"b","Err":true}]`, `[]`, ` [null]`)
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := decodeRecords(b)
		if err != nil {
			return
		}
		tel := runtime.NewTelemetry(4, nil)
		for _, rec := range recs {
			tel.Add(rec)
			tel.Add(rec)
			if _, err := tel.Summarize(runtime.Filter{Principal: rec.Principal, Window: time.Hour}); err != nil {
				t.Fatalf("%q: %v", b, err)
			}
		}
		if _, err := tel.Summarize(runtime.Filter{}); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
	})
}

// FuzzWire: a routed call, its accept and its replies (JSON) decode or
// give an error; a decoded error maps back to an error.
func FuzzWire(f *testing.F) {
	three := int64(3)
	for _, v := range []any{
		&call{Kind: "gen", Inbox: "_INBOX.x", Gen: &runtime.Request{Deployment: "d", MaxTokens: 4, Sampling: runtime.Sampling{Seed: &three}}, Stream: true},
		&call{Kind: "run", Inbox: "_INBOX.y", Run: &runtime.RunRequest{Deployment: "d", Samples: []runtime.Sample{{Vector: []float32{1, 2}}}}},
		&accept{Node: "a", Err: &wireErr{Code: "param", Param: "temperature", Msg: "too hot"}},
		&reply{Event: &runtime.Event{Text: "\xe2\x82"}},
		&reply{Done: true, Err: &wireErr{Code: "overloaded", Msg: "busy"}},
	} {
		b, err := encode(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		var c call
		_ = decode(b, &c)
		var a accept
		if decode(b, &a) == nil && a.Err != nil {
			checkWireErr(t, a.Err)
		}
		var r reply
		if decode(b, &r) == nil && r.Err != nil {
			checkWireErr(t, r.Err)
		}
	})
}

func checkWireErr(t *testing.T, w *wireErr) {
	err := w.err()
	if err == nil {
		t.Fatalf("%+v maps to no error", w)
	}
	var pe *runtime.ParamError
	if w.Code == "param" && (!errors.As(err, &pe) || pe.Param != w.Param) {
		t.Fatalf("%+v maps to %v", w, err)
	}
	if w.Code != "param" && err.Error() != w.Msg {
		t.Fatalf("%+v maps to %q", w, err)
	}
}
