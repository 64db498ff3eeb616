package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStreamedActivity: with "neuro":{"activity":true} every content
// chunk of a stream says which neurons of each spiking layer fired for
// its token; without it no chunk has the field; it needs stream: true.
func TestStreamedActivity(t *testing.T) {
	s := newTestServer(t, newTestRuntime(t, nil, 2), nil)
	w := do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"neuro-1-lite","messages":[{"role":"user","content":"Hello"}],"max_tokens":8,"seed":1,"stream":true,"neuro":{"activity":true}}`) // seeded: unseeded, the test model may end at once
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	content, spikes := 0, 0
	for _, ev := range sseEvents(t, w.Body) {
		if ev == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct{ Content *string }
			}
			Neuro *struct {
				Activity []struct {
					Layer   string
					Neurons int
					Spikes  []int
				}
			}
		}
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Choices) == 0 || c.Choices[0].Delta.Content == nil || *c.Choices[0].Delta.Content == "" {
			continue
		}
		content++
		if c.Neuro == nil || len(c.Neuro.Activity) == 0 {
			t.Fatalf("a content chunk without activity: %s", ev)
		}
		for _, l := range c.Neuro.Activity {
			if l.Layer == "" || l.Neurons == 0 {
				t.Fatalf("layer %+v", l)
			}
			for _, i := range l.Spikes {
				if i < 0 || i >= l.Neurons {
					t.Fatalf("neuron %d of a layer of %d", i, l.Neurons)
				}
			}
			spikes += len(l.Spikes)
		}
	}
	if content == 0 || spikes == 0 {
		t.Errorf("%d content chunks, %d spikes", content, spikes)
	}
	plain := do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"neuro-1-lite","messages":[{"role":"user","content":"Hello"}],"max_tokens":4,"stream":true}`)
	if strings.Contains(plain.Body.String(), `"neuro"`) {
		t.Error("activity sent unasked")
	}
	checkError(t, do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"neuro-1-lite","messages":[{"role":"user","content":"Hello"}],"neuro":{"activity":true}}`),
		400, typeInvalidRequest, "invalid_value", "neuro.activity")
	checkError(t, do(s, "POST", "/v1/completions", keyAlice, `{"model":"neuro-1-lite","prompt":"x","neuro":true}`),
		400, typeInvalidRequest, "invalid_type", "neuro")
}

// TestUsageSaysWhatTheDeviceDid: a completion's usage carries its
// timesteps, spikes and energy, streamed or not.
func TestUsageSaysWhatTheDeviceDid(t *testing.T) {
	s := newTestServer(t, newTestRuntime(t, nil, 2), nil)
	var c struct {
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
			Neuromorphic     struct {
				Timesteps int64
				Spikes    float64
				EnergyUJ  float64 `json:"energy_uj"`
			}
		}
	}
	w := do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"neuro-1-lite","messages":[{"role":"user","content":"Hi"}],"max_tokens":5}`)
	json.Unmarshal(w.Body.Bytes(), &c)
	if n := c.Usage.Neuromorphic; n.Timesteps == 0 || n.Spikes == 0 || n.EnergyUJ == 0 {
		t.Errorf("usage %s", w.Body)
	}
	w = do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"neuro-1-lite","messages":[{"role":"user","content":"Hi"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`)
	if !strings.Contains(w.Body.String(), `"neuromorphic":{"timesteps":`) {
		t.Errorf("the usage chunk: %s", w.Body)
	}
}

// TestResponsesStreamedActivity: the same extension on a streamed
// response puts the activity on its output_text.delta events.
func TestResponsesStreamedActivity(t *testing.T) {
	s := newTestServer(t, newTestRuntime(t, nil, 2), nil)
	w := do(s, "POST", "/v1/responses", keyAlice, `{"model":"neuro-1-lite","input":"Hello","max_output_tokens":8,"temperature":0,"stream":true,"neuro":{"activity":true}}`)
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	deltas, spikes := 0, 0
	for _, line := range strings.Split(w.Body.String(), "\n") {
		ev, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var e struct {
			Type  string
			Neuro *struct {
				Activity []struct{ Spikes []int }
			}
		}
		if err := json.Unmarshal([]byte(ev), &e); err != nil {
			t.Fatal(err)
		}
		if e.Type != "response.output_text.delta" {
			continue
		}
		deltas++
		if e.Neuro == nil || len(e.Neuro.Activity) == 0 {
			t.Fatalf("a delta without activity: %s", ev)
		}
		for _, l := range e.Neuro.Activity {
			spikes += len(l.Spikes)
		}
	}
	if deltas == 0 || spikes == 0 {
		t.Errorf("%d deltas, %d spikes", deltas, spikes)
	}
	checkError(t, do(s, "POST", "/v1/responses", keyAlice, `{"model":"neuro-1-lite","input":"Hello","neuro":{"activity":true}}`),
		400, typeInvalidRequest, "invalid_value", "neuro.activity")
}
