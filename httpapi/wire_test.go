package httpapi

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

// The stream chunks and errors are written by hand (a streamed token
// allocates nothing); the contract is wire's types. These tests check
// that every hand-written event is byte for byte what encoding/json
// writes for the wire value it stands for.

// awkward texts: invalid and partial UTF-8, HTML characters, JavaScript
// line separators, control characters, quotes.
var awkward = []string{"", "plain", "a\xffb", "\xe2\x82", "<b>&amp;</b>", "line\u2028sep\u2029", "\x00\x01\b\f\n\r\t\x7f", `"q" \ /`, "é中🙂"}

// awkward floats: JSON cannot hold the first three; the rest switch
// between encoding/json's fixed and exponent forms.
var awkwardFloats = []float64{math.Inf(-1), math.Inf(1), math.NaN(), 0, math.Copysign(0, -1), -1e-7, -1.5e-6, -1e-6, -0.000012, -2.5, 1e20, 1e21, 123456789, -9999}

func TestAppendFloatIsEncodingJSON(t *testing.T) {
	for _, f := range awkwardFloats {
		want, err := json.Marshal(wire.Finite(f))
		if err != nil {
			t.Fatal(err)
		}
		if got := wire.AppendFloat(nil, f); !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v) = %s, encoding/json %s", f, got, want)
		}
	}
}

func FuzzAppendIsEncodingJSON(f *testing.F) {
	for i, s := range awkward {
		f.Add(s, awkwardFloats[i%len(awkwardFloats)])
	}
	f.Fuzz(func(t *testing.T, s string, x float64) {
		want, _ := json.Marshal(s)
		if got := wire.AppendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, encoding/json %s", s, got, want)
		}
		want, _ = json.Marshal(wire.Finite(x))
		if got := wire.AppendFloat(nil, x); !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v) = %s, encoding/json %s", x, got, want)
		}
		want, _ = json.Marshal(wire.Bytes(s))
		if got := wire.AppendBytes(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendBytes(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}

func TestErrorEventIsEncodingJSON(t *testing.T) {
	for _, s := range awkward {
		for _, e := range []*Error{{Type: typeServer, Message: s}, {Type: typeInvalidRequest, Param: s + "p", Code: s + "c", Message: s}} {
			body := &wire.ErrorBody{Message: e.Message, Type: e.Type}
			if e.Param != "" {
				body.Param = &e.Param
			}
			if e.Code != "" {
				body.Code = &e.Code
			}
			want, _ := json.Marshal(wire.ErrorResponse{Error: body})
			if got := appendErrorJSON(nil, e); !bytes.Equal(got, want) {
				t.Errorf("error %q:\n got %s\nwant %s", s, got, want)
			}
		}
	}
}

// streamEvents are events that exercise every part of a chunk.
func streamEvents() []runtime.Event {
	var evs []runtime.Event
	for i, s := range awkward {
		lp := runtime.TokenLogprob{Text: s, Logprob: awkwardFloats[i%len(awkwardFloats)]}
		for j := range 4 { // alternatives, with a repeated text
			lp.Top = append(lp.Top, runtime.TokenLogprob{Text: awkward[(i+j*3)%len(awkward)], Logprob: awkwardFloats[(i+j)%len(awkwardFloats)]})
		}
		lp.Top = append(lp.Top, runtime.TokenLogprob{Text: lp.Top[0].Text, Logprob: -50})
		ev := runtime.Event{Choice: i % 2, Text: s, Logprobs: []runtime.TokenLogprob{lp, {Text: "x", Logprob: -0.5}}}
		if i%3 == 0 {
			ev.Activity = []runtime.LayerActivity{{Layer: s, Neurons: 8, Spikes: []int{1, 5}}, {Layer: "l", Neurons: 2, Spikes: []int{}}}
		}
		if i == 4 {
			ev.Logprobs = nil
		}
		evs = append(evs, ev)
	}
	return append(evs, runtime.Event{Choice: 0, FinishReason: runtime.FinishStop}, runtime.Event{Choice: 1, Text: "end", FinishReason: runtime.FinishLength})
}

// wantChunks is what a stream of evs must carry, as wire values.
func wantChunks(g *genRequest, evs []runtime.Event, usage *wire.Usage) []any {
	const id, model = "id-<1>", "m&m"
	var out []any
	chat := func(ch wire.ChatChunkChoice, neuro *wire.ChunkNeuro) {
		out = append(out, &wire.ChatCompletionChunk{ID: id, Object: "chat.completion.chunk", Created: 7, Model: model, Choices: []wire.ChatChunkChoice{ch}, Neuro: neuro})
	}
	text := func(ch wire.CompletionChoice, neuro *wire.ChunkNeuro) {
		out = append(out, &wire.Completion{ID: id, Object: "text_completion", Created: 7, Model: model, Choices: []wire.CompletionChoice{ch}, Neuro: neuro})
	}
	if g.chat {
		for i := range g.n {
			chat(wire.ChatChunkChoice{Index: i, Delta: wire.ChatDelta{Role: "assistant"}}, nil)
		}
	}
	offsets := make([]int, g.n)
	for _, ev := range evs {
		if ev.Text != "" || len(ev.Logprobs) > 0 || ev.Activity != nil {
			var neuro *wire.ChunkNeuro
			if g.activity {
				neuro = &wire.ChunkNeuro{Activity: []wire.LayerActivity{}}
				for _, l := range ev.Activity {
					neuro.Activity = append(neuro.Activity, wire.LayerActivity{Layer: l.Layer, Neurons: l.Neurons, Spikes: l.Spikes})
				}
			}
			if g.chat {
				ch := wire.ChatChunkChoice{Index: ev.Choice, Delta: wire.ChatDelta{Content: ev.Text}}
				if g.logprobs {
					ch.Logprobs = chatLogprobsOf(ev.Logprobs)
				}
				chat(ch, neuro)
			} else {
				ch := wire.CompletionChoice{Index: ev.Choice, Text: ev.Text}
				if g.logprobs {
					ch.Logprobs = &wire.CompletionLogprobs{Tokens: []string{}, TokenLogprobs: []*float64{}, TopLogprobs: []map[string]float64{}, TextOffset: []int{}}
					for _, lp := range ev.Logprobs {
						offsets[ev.Choice] = addLogprob(ch.Logprobs, lp, offsets[ev.Choice], true)
					}
				}
				text(ch, neuro)
			}
		}
		if ev.FinishReason != "" {
			if g.chat {
				chat(wire.ChatChunkChoice{Index: ev.Choice, FinishReason: string(ev.FinishReason)}, nil)
			} else {
				text(wire.CompletionChoice{Index: ev.Choice, FinishReason: string(ev.FinishReason)}, nil)
			}
		}
	}
	if g.includeUsage {
		if g.chat {
			out = append(out, &wire.ChatCompletionChunk{ID: id, Object: "chat.completion.chunk", Created: 7, Model: model, Choices: []wire.ChatChunkChoice{}, Usage: usage})
		} else {
			out = append(out, &wire.Completion{ID: id, Object: "text_completion", Created: 7, Model: model, Choices: []wire.CompletionChoice{}, Usage: usage})
		}
	}
	return out
}

func TestStreamChunksAreEncodingJSON(t *testing.T) {
	usage := &wire.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7,
		Neuromorphic: wire.NeuromorphicUsage{Timesteps: 1 << 40, Spikes: 1.5e6, SynapticOps: 2.5e21, EnergyUJ: 1.25e-7}}
	s := &Server{opts: Options{Now: time.Now}}
	for _, chat := range []bool{true, false} {
		for _, logprobs := range []bool{false, true} {
			for _, extra := range []bool{false, true} {
				g := &genRequest{chat: chat, n: 2, logprobs: logprobs, topLogprobs: 4, activity: extra, includeUsage: extra, prompts: []string{"p"}}
				w := httptest.NewRecorder()
				st := newSSE(w, s, g, "id-<1>", 7, "m&m")
				evs := streamEvents()
				for _, ev := range evs {
					if err := st.event(ev); err != nil {
						t.Fatal(err)
					}
				}
				st.finish(usage)
				events := strings.Split(strings.TrimSuffix(w.Body.String(), "\n\n"), "\n\n")
				if events[len(events)-1] != "data: [DONE]" {
					t.Fatalf("last event %q", events[len(events)-1])
				}
				events = events[:len(events)-1]
				want := wantChunks(g, evs, usage)
				if len(events) != len(want) {
					t.Fatalf("chat %v logprobs %v extra %v: %d events, want %d", chat, logprobs, extra, len(events), len(want))
				}
				for i, ev := range events {
					wb, err := json.Marshal(want[i])
					if err != nil {
						t.Fatal(err)
					}
					if got := strings.TrimPrefix(ev, "data: "); got != string(wb) {
						t.Errorf("chat %v logprobs %v extra %v, event %d:\n got %s\nwant %s", chat, logprobs, extra, i, got, wb)
					}
				}
			}
		}
	}
}
