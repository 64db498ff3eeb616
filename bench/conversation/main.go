// Command conversation measures time to first token over a long
// conversation, three ways, through the REST API on the loopback
// interface:
//
//		go run ./bench/conversation [-model neuro-1-heavy] [-turns 8] [-answer 90] [-repeat 5]
//
//	  - responses: POST /v1/responses, each turn continuing the last with
//	    previous_response_id: the server resumes from the stored state and
//	    reads only the new input;
//	  - chat+cache: POST /v1/chat/completions with the whole history every
//	    turn, the prefix-state cache on (the server's default);
//	  - chat: the same against a server with the cache off, which reads
//	    the whole history every turn.
//
// Every turn is streamed at temperature 0, so the three conversations are
// the same (the program checks that they are); time to first token is
// from sending the request to reading the first text delta. The three
// ways take turns within each repeat, so a slow moment of the machine
// touches all of them; each figure is the median over -repeat
// conversations, with the slowest and fastest. It also prints the bytes
// each stored turn costs beside the model's state.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	goruntime "runtime"
	"slices"
	"strings"
	"time"

	"github.com/neuro-go/neuro/bench/roofline"
	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all" // the neuro-1 language models
	"github.com/neuro-go/neuro/runtime"
)

// topics make the users' turns: each turn asks about one, in about a
// hundred tokens.
var topics = []string{
	"the sea and the boats that sail on it in the morning",
	"a small fox who lives at the edge of a large forest",
	"the old lighthouse keeper and the storm that came in the night",
	"a girl who builds a kite with her brother on a windy day",
	"the baker who wakes up before the sun to make bread for the town",
	"a cat that finds a secret garden behind the school",
	"two friends who get lost on a mountain path and find their way home",
	"the moon, the stars and a boy who wants to count them all",
	"a dragon who is afraid of the dark and a knight who helps him",
	"the river that runs through the village and the fish that live in it",
}

func userTurn(i int) string {
	t := topics[i%len(topics)]
	return fmt.Sprintf("Please tell me a story about %s. I would like to hear what happens first, what happens next, "+
		"and how it ends. Make it kind and simple, with a happy ending, and tell me how everyone feels at the end of the day, "+
		"when the story about %s is over. Please also tell me what the weather was like, what everyone had for dinner, "+
		"and what they dreamed about when they went to sleep that night.", t, t)
}

const system = "You are a helpful assistant who tells short stories."

type turnResult struct {
	ttft   time.Duration
	text   string
	input  int // prompt tokens
	cached int
	id     string // the stored response's
}

type server struct {
	url, key string
	rt       *runtime.Runtime
}

func main() {
	model := flag.String("model", models.Heavy, "model")
	turns := flag.Int("turns", 8, "turns per conversation")
	answer := flag.Int("answer", 90, "max tokens of each answer")
	repeat := flag.Int("repeat", 5, "conversations per way")
	flag.Parse()
	if err := run(*model, *turns, *answer, *repeat); err != nil {
		fmt.Fprintln(os.Stderr, "conversation:", err)
		os.Exit(1)
	}
}

func newServer(ctx context.Context, cache int64) (*server, func(), error) {
	rt := runtime.New(&runtime.Options{PrefixCacheBytes: cache})
	if err := models.Register(rt); err != nil {
		return nil, nil, err
	}
	if _, err := models.Deploy(ctx, rt, nil); err != nil {
		return nil, nil, err
	}
	key := "sk-bench-conversation"
	h, err := httpapi.New(rt, &httpapi.Options{Keys: map[string]string{key: "bench"}, RequestsPerMinute: -1, ConcurrentRequests: -1})
	if err != nil {
		return nil, nil, err
	}
	ts := httptest.NewServer(h)
	return &server{url: ts.URL, key: key, rt: rt}, func() { ts.Close(); rt.Close() }, nil
}

func run(model string, turns, answer, repeat int) error {
	ctx := context.Background()
	on, closeOn, err := newServer(ctx, 0)
	if err != nil {
		return err
	}
	defer closeOn()
	off, closeOff, err := newServer(ctx, -1)
	if err != nil {
		return err
	}
	defer closeOff()
	ways := []struct {
		name string
		conv func() ([]turnResult, error)
	}{
		{"responses", func() ([]turnResult, error) { return viaResponses(on, model, turns, answer) }},
		{"chat+cache", func() ([]turnResult, error) { return viaChat(on, model, turns, answer) }},
		{"chat", func() ([]turnResult, error) { return viaChat(off, model, turns, answer) }},
	}
	// One conversation each first, unmeasured: it warms the servers and
	// checks that the three ways have the same conversation.
	var first [][]turnResult
	for _, w := range ways {
		res, err := w.conv()
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		first = append(first, res)
	}
	for i := range first[0] {
		for k := 1; k < len(ways); k++ {
			if first[k][i].text != first[0][i].text {
				return fmt.Errorf("turn %d: %s answered %q, %s %q", i+1, ways[k].name, first[k][i].text, ways[0].name, first[0][i].text)
			}
		}
	}
	ttft := make([][][]time.Duration, len(ways)) // way, turn, repeat
	for k := range ways {
		ttft[k] = make([][]time.Duration, turns)
	}
	for range repeat {
		for k, w := range ways {
			res, err := w.conv()
			if err != nil {
				return fmt.Errorf("%s: %w", w.name, err)
			}
			for i, r := range res {
				ttft[k][i] = append(ttft[k][i], r.ttft)
			}
		}
	}
	fmt.Printf("%s, %d turns of at most %d answer tokens, median of %d conversations (fastest-slowest), %s, GOMAXPROCS %d\n",
		model, turns, answer, repeat, roofline.CPUName(), goruntime.GOMAXPROCS(0))
	fmt.Printf("%-5s %12s", "turn", "prompt tok")
	for _, w := range ways {
		fmt.Printf(" %26s", w.name+" TTFT ms (cached)")
	}
	fmt.Println()
	for i := range turns {
		fmt.Printf("%-5d %12d", i+1, first[2][i].input)
		for k := range ways {
			med, lo, hi := stats(ttft[k][i])
			fmt.Printf(" %9.1f (%5.1f-%5.1f) %5d", ms(med), ms(lo), ms(hi), first[k][i].cached)
		}
		fmt.Println()
	}
	for k, w := range ways {
		m1, _, _ := stats(ttft[k][0])
		mn, _, _ := stats(ttft[k][turns-1])
		fmt.Printf("%s: turn %d / turn 1 = %.2f\n", w.name, turns, float64(mn)/float64(m1))
	}
	return storedBytes(on, turns, answer)
}

// storedBytes runs one conversation through stored responses with each
// model and prints what its stored turns cost: the state of the last
// turn, its whole record (state, the conversation's text and the
// response object), and the mean record of a turn.
func storedBytes(s *server, turns, answer int) error {
	fmt.Printf("\n%-17s %8s %12s %13s %15s\n", "model", "tokens", "state bytes", "last record", "mean per turn")
	for _, model := range models.Names() {
		n0, b0 := s.rt.ResponseStats()
		res, err := viaResponses(s, model, turns, answer)
		if err != nil {
			return err
		}
		n1, b1 := s.rt.ResponseStats()
		last, err := s.rt.Response(context.Background(), res[len(res)-1].id, "bench")
		if err != nil {
			return err
		}
		rec, err := last.MarshalBinary()
		if err != nil {
			return err
		}
		fmt.Printf("%-17s %8d %12d %13d %15d\n", model, len(last.State.Tokens), len(last.State.Data), len(rec), (b1-b0)/int64(n1-n0))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func stats(ds []time.Duration) (med, lo, hi time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[0], s[len(s)-1]
}

func viaResponses(s *server, model string, turns, answer int) ([]turnResult, error) {
	var out []turnResult
	prev := ""
	for i := range turns {
		body := map[string]any{"model": model, "input": userTurn(i), "instructions": system, "temperature": 0,
			"max_output_tokens": answer, "stream": true}
		if prev != "" {
			body["previous_response_id"] = prev
		}
		r, id, err := stream(s, "/v1/responses", body, func(ev map[string]any) (string, bool) {
			d, _ := ev["delta"].(string)
			return d, ev["type"] == "response.output_text.delta"
		})
		if err != nil {
			return nil, err
		}
		prev, r.id = id, id
		out = append(out, r)
	}
	return out, nil
}

func viaChat(s *server, model string, turns, answer int) ([]turnResult, error) {
	var out []turnResult
	msgs := []map[string]string{{"role": "system", "content": system}}
	for i := range turns {
		msgs = append(msgs, map[string]string{"role": "user", "content": userTurn(i)})
		body := map[string]any{"model": model, "messages": msgs, "temperature": 0, "max_tokens": answer, "stream": true,
			"stream_options": map[string]any{"include_usage": true}}
		r, _, err := stream(s, "/v1/chat/completions", body, func(ev map[string]any) (string, bool) {
			ch, _ := ev["choices"].([]any)
			if len(ch) == 0 {
				return "", false
			}
			delta, _ := ch[0].(map[string]any)["delta"].(map[string]any)
			c, _ := delta["content"].(string)
			return c, true
		})
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, map[string]string{"role": "assistant", "content": r.text})
		out = append(out, r)
	}
	return out, nil
}

// stream posts body and reads its events: text picks an event's text
// delta. It returns the turn, and the response id when there is one.
func stream(s *server, path string, body any, text func(map[string]any) (string, bool)) (turnResult, string, error) {
	var r turnResult
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", s.url+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return r, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		var e bytes.Buffer
		e.ReadFrom(resp.Body)
		return r, "", fmt.Errorf("%s: %d %s", path, resp.StatusCode, e.String())
	}
	var id string
	var sb strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return r, "", err
		}
		if t, ok := text(ev); ok && t != "" {
			if r.ttft == 0 {
				r.ttft = time.Since(start)
			}
			sb.WriteString(t)
		}
		usage, _ := ev["usage"].(map[string]any)
		if resp, ok := ev["response"].(map[string]any); ok {
			id, _ = resp["id"].(string)
			usage, _ = resp["usage"].(map[string]any)
		}
		if usage != nil {
			r.input = num(usage, "prompt_tokens") + num(usage, "input_tokens")
			r.cached = num(nested(usage, "prompt_tokens_details"), "cached_tokens") + num(nested(usage, "input_tokens_details"), "cached_tokens")
		}
	}
	r.text = sb.String()
	return r, id, sc.Err()
}

func nested(m map[string]any, k string) map[string]any {
	v, _ := m[k].(map[string]any)
	return v
}

func num(m map[string]any, k string) int {
	v, _ := m[k].(float64)
	return int(v)
}
