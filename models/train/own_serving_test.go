package train_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuro-go/neuro/httpapi"
	_ "github.com/neuro-go/neuro/models/lima" // the pytorch importer, with the lima architecture
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	_ "github.com/neuro-go/neuro/runtime/hal/loihi"
	"github.com/neuro-go/neuro/tokenizer"
)

// TestOwnModelOverREST: the model own.py wrote, compiled over REST as a
// causal language model with the tokenizer.json written with it, and
// deployed on the cpu device at float32, scores valid.txt through
// /v1/completions (echo and logprobs, the prompts sent as token ids in
// train.py's windows of 128 tokens from rest) at the bits per byte
// results.json records. The same text through a deployment on the Loihi
// 2 emulator, with its fixed-point weights, is reported beside it.
func TestOwnModelOverREST(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(ownDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var res ownResults
	if err := json.Unmarshal(read("results.json"), &res); err != nil {
		t.Fatal(err)
	}
	rt := runtime.New(nil)
	defer rt.Close()
	const key = "sk-own"
	srv, err := httpapi.New(rt, &httpapi.Options{Keys: map[string]string{key: "me"}, RequestsPerMinute: -1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	post := func(path string, body any, out any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", ts.URL+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var nw struct {
		ID            string `json:"id"`
		LanguageModel struct {
			VocabSize  int `json:"vocab_size"`
			StateBytes int `json:"state_bytes"`
		} `json:"language_model"`
	}
	post("/v1/compile", map[string]any{"model_format": "pytorch", "model_file": base64.StdEncoding.EncodeToString(read("model.pt")), "name": "own",
		"options": map[string]any{"task": "causal-lm", "tokenizer_file": base64.StdEncoding.EncodeToString(read("tokenizer.json")), "chat_template": "neuro"}}, &nw)
	if nw.LanguageModel.VocabSize != res.VocabSize {
		t.Fatalf("compiled with %d ids, results.json has %d", nw.LanguageModel.VocabSize, res.VocabSize)
	}

	tok, err := tokenizer.Load(bytes.NewReader(read("tokenizer.json")))
	if err != nil {
		t.Fatal(err)
	}
	text := read(res.Valid)
	eot, _ := tok.SpecialID(tokenizer.EndOfText)
	ids := append(tok.Encode(string(text)), eot)
	var windows [][]int
	for w := 0; w*window < len(ids)-1; w++ {
		windows = append(windows, ids[w*window:min((w+1)*window+1, len(ids))])
	}
	// bpb scores the windows on a deployment of the model on device.
	bpb := func(device string, options map[string]any) float64 {
		var dep struct{}
		spec := map[string]any{"model": nw.ID, "device": device, "id": "own-" + device}
		maps.Copy(spec, options)
		post("/v1/deployments", spec, &dep)
		defer func() {
			req, _ := http.NewRequest("DELETE", ts.URL+"/v1/deployments/own-"+device, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		nats := 0.0
		for i := 0; i < len(windows); i += 16 {
			var c struct {
				Choices []struct {
					Logprobs struct {
						TokenLogprobs []*float64 `json:"token_logprobs"`
					} `json:"logprobs"`
				} `json:"choices"`
			}
			post("/v1/completions", map[string]any{"model": nw.ID, "prompt": windows[i:min(i+16, len(windows))],
				"max_tokens": 0, "echo": true, "logprobs": 0}, &c)
			for _, ch := range c.Choices {
				for _, lp := range ch.Logprobs.TokenLogprobs[1:] {
					nats -= *lp
				}
			}
		}
		return nats / math.Ln2 / float64(len(text))
	}
	cpu := bpb("cpu", map[string]any{"precision": "float32"})
	if math.Abs(cpu-res.BPB) > 1e-4 {
		t.Fatalf("%.6f bits per byte on %s through REST on cpu, results.json has %.6f", cpu, res.Valid, res.BPB)
	}
	loihi := bpb("loihi", nil)
	t.Logf("bits per byte on %s (%d tokens, %d windows): training %.5f, REST on cpu (float32) %.5f, REST on loihi %.5f; state %d bytes",
		res.Valid, len(ids), len(windows), res.BPB, cpu, loihi, nw.LanguageModel.StateBytes)
}
