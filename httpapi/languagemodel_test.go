package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/httpapi/wire"
	_ "github.com/neuro-go/neuro/models/lima" // the pytorch importer
	"github.com/neuro-go/neuro/models/tokenizers"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/tokenizer"
)

// byteTokenizerJSON is a byte-level tokenizer with the neuro special
// tokens and no merges: 261 tokens, the vocabulary of
// models/lima/testdata/tiny_lm.pt.
func byteTokenizerJSON(t *testing.T) string {
	t.Helper()
	tok, err := tokenizer.Train(context.Background(), &tokenizer.TrainOptions{VocabSize: 261, SpecialTokens: tokenizer.NeuroSpecialTokens()},
		strings.NewReader("a b c"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tok.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// A language model a caller compiles with options.task "causal-lm" is
// served by every generation endpoint once deployed, to its owner only,
// and survives a restart with its tokenizer.
func TestCompileLanguageModel(t *testing.T) {
	dir := t.TempDir()
	rt := runtime.New(&runtime.Options{DataDir: dir})
	rt.AddTokenizer("neuro-bpe-1k", func() (*tokenizer.Tokenizer, error) { return tokenizers.Load("neuro-bpe-1k") })
	s := newTestServer(t, rt, &Options{MaxCompileBytes: 1 << 20})
	lm := readFixture(t, "models/lima/testdata/tiny_lm.pt")
	tok := byteTokenizerJSON(t)

	compileLM := func(key, options string) *wire.CompiledNetwork {
		t.Helper()
		w := do(s, "POST", "/v1/compile", key, compileBody("pytorch", lm, `,"name":"mine","options":{"task":"causal-lm",`+options+`}`))
		if w.Code != 200 {
			t.Fatalf("compile: %d %s", w.Code, w.Body)
		}
		var res wire.CompiledNetwork
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		return &res
	}
	chatty := compileLM(keyAlice, `"tokenizer_file":"`+tok+`","chat_template":"neuro","context_length":512`)
	if r := chatty.LanguageModel; r == nil || r.Tokenizer != "custom" || r.VocabSize != 261 || r.ChatTemplate != "neuro" ||
		r.ContextLength != 512 || r.StateBytes <= 0 {
		t.Fatalf("language model report %+v", chatty.LanguageModel)
	}
	plain := compileLM(keyAlice, `"tokenizer_file":"`+tok+`"`)
	if plain.LanguageModel.ContextLength != runtime.DefaultContextLength || plain.LanguageModel.ChatTemplate != "" {
		t.Fatalf("defaults: %+v", plain.LanguageModel)
	}

	for _, net := range []string{chatty.ID, plain.ID} {
		w := do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`","device":"cpu","id":"`+net+`-cpu"}`)
		if w.Code != 201 {
			t.Fatalf("deploy: %d %s", w.Code, w.Body)
		}
	}
	// On a chip emulator too, as a deployment named in the request.
	if w := do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+chatty.ID+`","device":"loihi","id":"mine-loihi"}`); w.Code != 201 {
		t.Fatalf("deploy on loihi: %d %s", w.Code, w.Body)
	}
	w := do(s, "POST", "/v1/deployments/mine-loihi/chat/completions", keyAlice, `{"messages":[{"role":"user","content":"hi"}],"max_tokens":4}`)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"neuromorphic"`) {
		t.Fatalf("chat on loihi: %d %s", w.Code, w.Body)
	}
	chat := `{"model":"` + chatty.ID + `","messages":[{"role":"user","content":"hi"}],"max_tokens":6,"temperature":0,"logprobs":true,"top_logprobs":2}`
	w = do(s, "POST", "/v1/chat/completions", keyAlice, chat)
	var cc wire.ChatCompletion
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &cc) != nil || cc.Usage.CompletionTokens == 0 || cc.Choices[0].Logprobs == nil {
		t.Fatalf("chat: %d %s", w.Code, w.Body)
	}
	w = do(s, "POST", "/v1/chat/completions", keyAlice, strings.Replace(chat, `"max_tokens"`, `"stream":true,"max_tokens"`, 1))
	if w.Code != 200 || !strings.Contains(w.Body.String(), "data: [DONE]") {
		t.Fatalf("chat stream: %d %s", w.Code, w.Body)
	}
	// The activity extension: the spikes behind each streamed token.
	w = do(s, "POST", "/v1/chat/completions", keyAlice, strings.Replace(chat, `"max_tokens"`, `"stream":true,"neuro":{"activity":true},"max_tokens"`, 1))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"activity":[{"layer"`) {
		t.Fatalf("chat stream with activity: %d %s", w.Code, w.Body)
	}
	w = do(s, "POST", "/v1/responses", keyAlice, `{"model":"`+chatty.ID+`","input":"hi","max_output_tokens":4}`)
	if w.Code != 200 {
		t.Fatalf("responses: %d %s", w.Code, w.Body)
	}
	// Text completion with echo: the prompt's own logprobs.
	w = do(s, "POST", "/v1/completions", keyAlice, `{"model":"`+plain.ID+`","prompt":"abc","max_tokens":0,"echo":true,"logprobs":1}`)
	var cmpl wire.Completion
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &cmpl) != nil || cmpl.Choices[0].Logprobs == nil || len(cmpl.Choices[0].Logprobs.TokenLogprobs) != 3 {
		t.Fatalf("completion: %d %s", w.Code, w.Body)
	}
	// A completion-only model says why it does not chat.
	w = do(s, "POST", "/v1/chat/completions", keyAlice, strings.Replace(chat, chatty.ID, plain.ID, 1))
	checkError(t, w, 400, typeInvalidRequest, "", "messages")
	if !strings.Contains(w.Body.String(), "no chat template") {
		t.Fatalf("completion-only chat: %s", w.Body)
	}

	// The model list says which of them chats, as the console's picker
	// reads it.
	for id, chats := range map[string]bool{chatty.ID: true, plain.ID: false} {
		var rec wire.Model
		if w := do(s, "GET", "/v1/models/"+id, keyAlice, nil); w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &rec) != nil ||
			rec.Capabilities.Chat != chats || !rec.Capabilities.Completions || rec.Neuromorphic.Context.Length == 0 {
			t.Fatalf("%s: chat %v, want %v: %s", id, rec.Capabilities.Chat, chats, w.Body)
		}
	}

	// /metrics, which answers without a key, counts the generations
	// under one label and names no caller's model.
	if w := do(s, "GET", "/metrics", "", nil); w.Code != 200 || strings.Contains(w.Body.String(), chatty.ID) ||
		!strings.Contains(w.Body.String(), `model="`+MetricsNetworkLabel+`"`) {
		t.Fatalf("/metrics names a caller's language model or counts none: %s", w.Body)
	}

	// Another key sees none of it.
	checkError(t, do(s, "GET", "/v1/models/"+chatty.ID, keyBob, nil), 404, typeNotFound, "model_not_found", "")
	checkError(t, do(s, "POST", "/v1/chat/completions", keyBob, chat), 404, typeNotFound, "model_not_found", "")
	if w := do(s, "GET", "/v1/models", keyBob, nil); strings.Contains(w.Body.String(), chatty.ID) {
		t.Fatalf("bob's model list shows alice's language model: %s", w.Body)
	}
	if w := do(s, "GET", "/v1/models", keyAlice, nil); !strings.Contains(w.Body.String(), chatty.ID) {
		t.Fatalf("alice's model list lacks her language model: %s", w.Body)
	}

	// After a restart it loads with its tokenizer and template.
	rt2 := runtime.New(&runtime.Options{DataDir: dir})
	t.Cleanup(func() { rt2.Close() })
	m, err := rt2.Model(chatty.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !m.IsLanguageModel() || m.ContextLength() != 512 || m.Tokenizer.VocabSize() != 261 || m.Tokenizer.ChatTemplate() == nil {
		t.Fatalf("reloaded: language model %v, context %d", m.IsLanguageModel(), m.ContextLength())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := rt2.Deploy(ctx, runtime.DeploymentSpec{ID: "again", Model: chatty.ID, Owner: "alice"}); err != nil {
		t.Fatal(err)
	}
	res, err := rt2.Generate(ctx, &runtime.Request{Deployment: "again", Principal: "alice", Prompt: "hi", MaxTokens: 3}, nil)
	if err != nil || res.Usage.CompletionTokens == 0 {
		t.Fatalf("generate after a restart: %+v %v", res, err)
	}
}

// What cannot be a language model is refused naming the problem.
func TestCompileLanguageModelRefusals(t *testing.T) {
	rt := runtime.New(nil)
	rt.AddTokenizer("neuro-bpe-1k", func() (*tokenizer.Tokenizer, error) { return tokenizers.Load("neuro-bpe-1k") })
	s := newTestServer(t, rt, &Options{MaxCompileBytes: 1 << 20})
	lm := readFixture(t, "models/lima/testdata/tiny_lm.pt")
	tok := byteTokenizerJSON(t)
	for _, c := range []struct {
		name, file, options string
		status              int
		param, want         string
	}{
		{"vocabulary mismatch", "tiny_lm", `"task":"causal-lm","tokenizer":"neuro-bpe-1k"`, 422, "", "261 token values and gives 261 logits, tokenizer neuro-bpe-1k has 1024"},
		{"no tokenizer", "tiny_lm", `"task":"causal-lm"`, 400, "options.tokenizer", "needs a tokenizer"},
		{"unknown tokenizer", "tiny_lm", `"task":"causal-lm","tokenizer":"llama"`, 400, "options.tokenizer", `no tokenizer is named "llama" (have neuro-bpe-1k`},
		{"both tokenizers", "tiny_lm", `"task":"causal-lm","tokenizer":"neuro-bpe-1k","tokenizer_file":"` + tok + `"`, 400, "options.tokenizer", "not both"},
		{"broken tokenizer file", "tiny_lm", `"task":"causal-lm","tokenizer_file":"` + base64.StdEncoding.EncodeToString([]byte(`{"model":7}`)) + `"`, 400, "options.tokenizer", "cannot be read"},
		{"unknown template", "tiny_lm", `"task":"causal-lm","tokenizer_file":"` + tok + `","chat_template":"llama3"`, 400, "options.chat_template", `no chat template is named "llama3" (have chatml, neuro)`},
		{"template the tokenizer lacks", "tiny_lm", `"task":"causal-lm","tokenizer_file":"` + tok + `","chat_template":"chatml"`, 400, "options.chat_template", `"<|im_end|>" is not a token`},
		{"unknown task", "tiny_lm", `"task":"translation"`, 400, "options.task", `"translation" is not a task`},
		{"tokenizer without the task", "tiny_lm", `"tokenizer":"neuro-bpe-1k"`, 400, "options.tokenizer", `with options.task "causal-lm"`},
		{"context length", "tiny_lm", `"task":"causal-lm","tokenizer_file":"` + tok + `","context_length":0`, 400, "options.context_length", ""},
		{"a classifier", "compile/testdata/digits/mlp_module.pt", `"task":"causal-lm","tokenizer_file":"` + tok + `","timesteps":8`, 400, "options.task", "is a classifier"},
		{"a spiking network of another width", "models/lima/testdata/tiny.pt", `"task":"causal-lm","tokenizer_file":"` + tok + `"`, 422, "", "it takes 16 token values and gives 16 logits, tokenizer custom has 261 tokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := lm
			if c.file != "tiny_lm" {
				file = readFixture(t, c.file)
			}
			w := do(s, "POST", "/v1/compile", keyAlice, compileBody("pytorch", file, `,"options":{`+c.options+`}`))
			code := "invalid_value"
			if c.status == 422 {
				code = "unsupported_model"
			}
			checkError(t, w, c.status, typeInvalidRequest, code, c.param)
			var e apiErr
			json.Unmarshal(w.Body.Bytes(), &e)
			if !strings.Contains(e.Error.Message, c.want) {
				t.Fatalf("the message does not say %q: %s", c.want, e.Error.Message)
			}
		})
	}
}

// A prompt sent as token ids is the prompt those ids encode: the same
// echo, text and log-probabilities as the text it decodes to.
func TestPromptTokenIDs(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	s := newTestServer(t, rt, nil)
	m, err := rt.Model("neuro-1")
	if err != nil {
		t.Fatal(err)
	}
	const text = "Once upon a time"
	ids, _ := json.Marshal(m.Tokenizer.Encode(text))
	score := func(prompt string) wire.Completion {
		t.Helper()
		w := do(s, "POST", "/v1/completions", keyAlice, `{"model":"neuro-1","prompt":`+prompt+`,"max_tokens":0,"echo":true,"logprobs":1}`)
		var c wire.Completion
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &c) != nil {
			t.Fatalf("%s: %d %s", prompt, w.Code, w.Body)
		}
		return c
	}
	byText, byIDs, nested := score(`"`+text+`"`), score(string(ids)), score(`[`+string(ids)+`,`+string(ids)+`]`)
	want, _ := json.Marshal(byText.Choices[0])
	for _, c := range append(byIDs.Choices, nested.Choices...) {
		c.Index = 0
		if got, _ := json.Marshal(c); !bytes.Equal(got, want) {
			t.Fatalf("token ids gave %s, the text %s", got, want)
		}
	}
	if byIDs.Usage.PromptTokens != byText.Usage.PromptTokens || nested.Usage.PromptTokens != 2*byText.Usage.PromptTokens {
		t.Fatalf("prompt tokens: text %d, ids %d, two prompts of ids %d", byText.Usage.PromptTokens, byIDs.Usage.PromptTokens, nested.Usage.PromptTokens)
	}
	w := do(s, "POST", "/v1/completions", keyAlice, `{"model":"neuro-1","prompt":[1,99999]}`)
	checkError(t, w, 400, typeInvalidRequest, "", "prompt")
	if !strings.Contains(w.Body.String(), "99999, not an id of") {
		t.Fatalf("out-of-vocabulary id: %s", w.Body)
	}
}
