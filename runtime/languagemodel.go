package runtime

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
	"github.com/neuro-go/neuro/tokenizer"
)

// LanguageModel makes Compile store a network as a language model, which
// the generation calls (Generate, and through them chat, completions and
// responses) serve once it is deployed. The network must follow the
// convention the built-in models follow: one input that takes the token
// of each step as a one-hot vector of the vocabulary, and one output read
// as that step's next-token logits; its state carries the context from
// token to token.
type LanguageModel struct {
	// Tokenizer is a tokenizer.json file, in the Hugging Face format
	// package tokenizer reads; TokenizerName names a tokenizer the
	// runtime knows instead (AddTokenizer). Exactly one is set.
	Tokenizer     []byte
	TokenizerName string
	// ChatTemplate names a built-in chat template
	// (tokenizer.NamedChatTemplate: "neuro", "chatml"). Empty makes a
	// completion-only model: a chat request to it is refused naming the
	// missing template.
	ChatTemplate string
	// ContextLength is the most tokens a sequence may hold (prompt and
	// answer). Default DefaultContextLength.
	ContextLength int
}

// DefaultContextLength is LanguageModel.ContextLength's default: the
// built-in models' limit. A recurrent network's state does not grow with
// the context, so the limit bounds what one request may cost.
const DefaultContextLength = 2048

// MaxContextLength bounds LanguageModel.ContextLength.
const MaxContextLength = 1 << 20

// LanguageModelReport is what Compile found of a language model.
type LanguageModelReport struct {
	// Tokenizer is the tokenizer's name, or "custom" for an uploaded
	// file.
	Tokenizer    string `json:"tokenizer"`
	VocabSize    int    `json:"vocab_size"`
	ChatTemplate string `json:"chat_template,omitempty"`
	// ContextLength is the most tokens a sequence may hold.
	ContextLength int `json:"context_length"`
	// StateBytes is the size of one sequence's saved state (State.Data):
	// what a stored conversation costs, whatever its length.
	StateBytes int `json:"state_bytes"`
}

// The program metadata a compiled language model carries, so that it
// loads again (after a restart, on another node of a cluster) with the
// tokenizer it was compiled with.
const (
	metaContextLength = "context_length"
	metaTokenizer     = "tokenizer"
	metaTokenizerJSON = "tokenizer.json"
	metaChatTemplate  = "chat_template"
)

// AddTokenizer makes a tokenizer known by name to
// LanguageModel.TokenizerName; load runs each time a compile names it.
// Package models adds the tokenizers it ships when it registers its
// models. A second tokenizer of the same name replaces the first.
func (r *Runtime) AddTokenizer(name string, load func() (*tokenizer.Tokenizer, error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tokenizers == nil {
		r.tokenizers = map[string]func() (*tokenizer.Tokenizer, error){}
	}
	r.tokenizers[name] = load
}

// Tokenizers lists the names AddTokenizer was given, sorted.
func (r *Runtime) Tokenizers() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.tokenizers))
	for n := range r.tokenizers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// tokenizerFor reads or looks up lm's tokenizer and attaches its chat
// template. It returns the name the report gives the tokenizer.
func (r *Runtime) tokenizerFor(lm *LanguageModel) (*tokenizer.Tokenizer, string, error) {
	var tok *tokenizer.Tokenizer
	name := lm.TokenizerName
	switch {
	case len(lm.Tokenizer) > 0 && name != "":
		return nil, "", &ParamError{"options.tokenizer", "send a tokenizer.json file or a tokenizer's name, not both"}
	case len(lm.Tokenizer) > 0:
		t, err := tokenizer.Load(bytes.NewReader(lm.Tokenizer))
		if err != nil {
			return nil, "", &ParamError{"options.tokenizer", "the tokenizer.json cannot be read: " + err.Error()}
		}
		tok, name = t, "custom"
	case name != "":
		r.mu.RLock()
		load, ok := r.tokenizers[name]
		r.mu.RUnlock()
		if !ok {
			have := strings.Join(r.Tokenizers(), ", ")
			if have == "" {
				have = "none"
			}
			return nil, "", &ParamError{"options.tokenizer", fmt.Sprintf("no tokenizer is named %q (have %s; or send a tokenizer.json in base64)", name, have)}
		}
		t, err := load()
		if err != nil {
			return nil, "", fmt.Errorf("runtime: tokenizer %q: %w", name, err)
		}
		tok = t
	default:
		return nil, "", &ParamError{"options.tokenizer", "a language model needs a tokenizer: the name of one the server ships, or a tokenizer.json in base64"}
	}
	var tmpl *tokenizer.ChatTemplate
	if lm.ChatTemplate != "" {
		t, err := tokenizer.NamedChatTemplate(lm.ChatTemplate)
		if err != nil {
			return nil, "", &ParamError{"options.chat_template", err.Error()}
		}
		tmpl = t
	}
	if err := tok.SetChatTemplate(tmpl); err != nil {
		return nil, "", &ParamError{"options.chat_template", fmt.Sprintf("chat template %q does not fit tokenizer %s: %v", lm.ChatTemplate, name, err)}
	}
	return tok, name, nil
}

// checkLanguageModelSpec checks what Compile is given for a language
// model before the file is imported.
func checkLanguageModelSpec(lm *LanguageModel) error {
	if lm.ContextLength < 0 || lm.ContextLength > MaxContextLength {
		return &ParamError{"options.context_length", fmt.Sprintf("context_length %d is outside 1 to %d", lm.ContextLength, MaxContextLength)}
	}
	return nil
}

// makeLanguageModel turns a compiled program into a language model: it
// checks the ports against the tokenizer's vocabulary, sets the token
// encoding and logit decoding, and records the tokenizer in the
// program's metadata.
func makeLanguageModel(p *compile.Program, lm *LanguageModel, tok *tokenizer.Tokenizer, tokName string) (*LanguageModelReport, error) {
	shapes, err := p.Graph.Shapes()
	if err != nil {
		return nil, err
	}
	ins, outs := p.Graph.NamesOfKind(snn.KindInput), p.Graph.NamesOfKind(snn.KindOutput)
	if len(ins) != 1 || len(outs) != 1 {
		return nil, &compile.UnsupportedError{Reason: fmt.Sprintf("a language model has one input (the token) and one output (the logits); this network has %d inputs and %d outputs", len(ins), len(outs))}
	}
	v := tok.VocabSize()
	in, out := snn.Size(shapes[ins[0]].Out), snn.Size(shapes[outs[0]].Out)
	if in != v || out != v {
		return nil, &compile.UnsupportedError{Node: ins[0], Reason: fmt.Sprintf("the network's vocabulary does not match the tokenizer's: it takes %d token values and gives %d logits, tokenizer %s has %d tokens", in, out, tokName, v)}
	}
	var tj bytes.Buffer
	if err := tok.WriteJSON(&tj); err != nil {
		return nil, err
	}
	n := lm.ContextLength
	if n == 0 {
		n = DefaultContextLength
	}
	p.Task = compile.TaskCausalLM
	p.Input = compile.Encoding{Kind: compile.InputOneHot, Node: ins[0], Size: v}
	p.Output = compile.Decoding{Kind: compile.OutputLogits, Node: outs[0], Size: v}
	if p.Metadata == nil {
		p.Metadata = map[string]string{}
	}
	p.Metadata[metaContextLength] = strconv.Itoa(n)
	p.Metadata[metaTokenizer] = tokName
	p.Metadata[metaTokenizerJSON] = tj.String()
	if lm.ChatTemplate != "" {
		p.Metadata[metaChatTemplate] = lm.ChatTemplate
	}
	state, err := sequenceStateBytes(p)
	if err != nil {
		return nil, err
	}
	return &LanguageModelReport{Tokenizer: tokName, VocabSize: v, ChatTemplate: lm.ChatTemplate, ContextLength: n, StateBytes: state}, nil
}

// sequenceStateBytes is the size of the state one sequence of p saves.
func sequenceStateBytes(p *compile.Program) (int, error) {
	sim, err := snn.NewSimulator(p.Graph, &snn.Options{Dt: p.Dt, Batch: 1})
	if err != nil {
		return 0, err
	}
	b, err := sim.SaveSlot(nil, 0)
	return len(b), err
}

// NetworkModel is the model a stored network registers as: with the
// tokenizer its program carries when it was compiled as a language
// model. A cluster node registers the networks other nodes compiled with
// it.
func NetworkModel(n *Network, p *compile.Program) (*Model, error) {
	m := &Model{ID: n.ID, Program: p, OwnedBy: n.Owner, Created: n.Created, Network: n,
		Card: Card{Description: "compiled network " + n.Name}}
	if p.Task != compile.TaskCausalLM {
		return m, nil
	}
	tj, ok := p.Metadata[metaTokenizerJSON]
	if !ok {
		return nil, fmt.Errorf("runtime: network %s is a language model whose program carries no tokenizer", n.ID)
	}
	tok, err := tokenizer.Load(strings.NewReader(tj))
	if err != nil {
		return nil, fmt.Errorf("runtime: network %s: its tokenizer: %w", n.ID, err)
	}
	m.Tokenizer = tok
	m.Card.Description = "compiled language model " + n.Name
	return m, nil
}
