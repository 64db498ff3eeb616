package tokenizer

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Message is one turn of a conversation.
type Message struct {
	// Role is "system", "developer" (treated as "system"), "user" or
	// "assistant".
	Role    string `json:"role"`
	Content string `json:"content"`
}

// RoleFormat is the text written around the content of one role's turn.
type RoleFormat struct {
	Prefix string `json:"prefix"`
	Suffix string `json:"suffix"`
}

// ChatTemplate turns messages into a model's prompt. It is data, not code: a
// model ships it as JSON (in tokenizer.json under the top-level key
// "neuro_chat_template", or alongside), and the zero value renders the bare
// contents one after another.
type ChatTemplate struct {
	// Start is written once, before the first message (a BOS token, say).
	Start     string     `json:"start,omitempty"`
	System    RoleFormat `json:"system"`
	User      RoleFormat `json:"user"`
	Assistant RoleFormat `json:"assistant"`
	// GenerationPrompt is written after the messages when an answer is
	// wanted: where the assistant's text begins. Empty means
	// Assistant.Prefix.
	GenerationPrompt string `json:"generation_prompt,omitempty"`
	// Stop lists the texts that end an assistant turn; for a template whose
	// markers are special tokens, each is one special token.
	Stop []string `json:"stop,omitempty"`
	// DefaultSystem, when not empty, is the system message used when the
	// messages start with none.
	DefaultSystem string `json:"default_system,omitempty"`
}

// Special tokens of the project's own tokenizers (models/tokenizers).
const (
	EndOfText = "<|endoftext|>" // separates documents in training; ends generation
	System    = "<|system|>"    // opens a system turn
	User      = "<|user|>"      // opens a user turn
	Assistant = "<|assistant|>" // opens an assistant turn
	End       = "<|end|>"       // closes any turn
)

// NeuroSpecialTokens returns the special tokens of the project's
// tokenizers, in id order (ids 0 to 4).
func NeuroSpecialTokens() []string { return []string{EndOfText, System, User, Assistant, End} }

// NeuroChatTemplate returns the chat template of the project's models:
//
//	<|system|>\n{system}<|end|>\n<|user|>\n{user}<|end|>\n<|assistant|>\n{answer}<|end|>\n
//
// A generation stops at <|end|> or <|endoftext|>.
func NeuroChatTemplate() *ChatTemplate {
	return &ChatTemplate{
		System:           RoleFormat{Prefix: System + "\n", Suffix: End + "\n"},
		User:             RoleFormat{Prefix: User + "\n", Suffix: End + "\n"},
		Assistant:        RoleFormat{Prefix: Assistant + "\n", Suffix: End + "\n"},
		GenerationPrompt: Assistant + "\n",
		Stop:             []string{End, EndOfText},
	}
}

// ChatML's markers, for ChatMLTemplate.
const (
	IMStart = "<|im_start|>"
	IMEnd   = "<|im_end|>"
)

// ChatMLTemplate returns the ChatML chat template:
//
//	<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n{answer}<|im_end|>\n
//
// A generation stops at <|im_end|>, which must be a token of the
// vocabulary (SetChatTemplate checks).
func ChatMLTemplate() *ChatTemplate {
	turn := func(role string) RoleFormat { return RoleFormat{Prefix: IMStart + role + "\n", Suffix: IMEnd + "\n"} }
	return &ChatTemplate{System: turn("system"), User: turn("user"), Assistant: turn("assistant"),
		GenerationPrompt: IMStart + "assistant\n", Stop: []string{IMEnd}}
}

// chatTemplates are the templates NamedChatTemplate knows.
var chatTemplates = map[string]func() *ChatTemplate{"neuro": NeuroChatTemplate, "chatml": ChatMLTemplate}

// ChatTemplateNames lists the names NamedChatTemplate knows, sorted.
func ChatTemplateNames() []string {
	names := make([]string, 0, len(chatTemplates))
	for n := range chatTemplates {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NamedChatTemplate returns a built-in chat template by name: "neuro"
// (NeuroChatTemplate) or "chatml" (ChatMLTemplate).
func NamedChatTemplate(name string) (*ChatTemplate, error) {
	f, ok := chatTemplates[name]
	if !ok {
		return nil, fmt.Errorf("tokenizer: no chat template is named %q (have %s)", name, strings.Join(ChatTemplateNames(), ", "))
	}
	return f(), nil
}

// Clone returns a deep copy of c.
func (c *ChatTemplate) Clone() *ChatTemplate {
	if c == nil {
		return nil
	}
	d := *c
	d.Stop = append([]string(nil), c.Stop...)
	return &d
}

// Validate checks the template on its own: no empty stop text.
func (c *ChatTemplate) Validate() error {
	for i, s := range c.Stop {
		if s == "" {
			return fmt.Errorf("tokenizer: chat template: stop[%d] is empty", i)
		}
	}
	return nil
}

func (c *ChatTemplate) role(i int, m Message) (*RoleFormat, error) {
	switch m.Role {
	case "system", "developer":
		return &c.System, nil
	case "user":
		return &c.User, nil
	case "assistant":
		return &c.Assistant, nil
	}
	return nil, fmt.Errorf("tokenizer: chat message %d: %w %q (want system, developer, user or assistant)", i, ErrUnknownRole, m.Role)
}

func (c *ChatTemplate) generationPrompt() string {
	if c.GenerationPrompt != "" {
		return c.GenerationPrompt
	}
	return c.Assistant.Prefix
}

// walk calls emit for each part of the prompt, saying whether it is
// template text (which may hold special tokens) or message content.
func (c *ChatTemplate) walk(msgs []Message, addGenerationPrompt bool, emit func(s string, template bool)) error {
	emit(c.Start, true)
	if c.DefaultSystem != "" && (len(msgs) == 0 || (msgs[0].Role != "system" && msgs[0].Role != "developer")) {
		emit(c.System.Prefix, true)
		emit(c.DefaultSystem, true)
		emit(c.System.Suffix, true)
	}
	for i, m := range msgs {
		f, err := c.role(i, m)
		if err != nil {
			return err
		}
		emit(f.Prefix, true)
		emit(m.Content, false)
		emit(f.Suffix, true)
	}
	if addGenerationPrompt {
		emit(c.generationPrompt(), true)
	}
	return nil
}

// Render returns the prompt text of msgs. With addGenerationPrompt it ends
// with the text that opens the assistant's answer. Encode the result with
// Tokenizer.EncodeChat rather than EncodeSpecial when contents come from
// users, so that special tokens typed by a user stay plain text.
func (c *ChatTemplate) Render(msgs []Message, addGenerationPrompt bool) (string, error) {
	var b strings.Builder
	err := c.walk(msgs, addGenerationPrompt, func(s string, _ bool) { b.WriteString(s) })
	if err != nil {
		return "", err
	}
	return b.String(), nil
}

// ErrNoChatTemplate is returned by EncodeChat and StopIDs when the tokenizer
// has no chat template.
var ErrNoChatTemplate = errors.New("tokenizer: no chat template")

// ChatTemplate returns a copy of the tokenizer's chat template, or nil.
func (t *Tokenizer) ChatTemplate() *ChatTemplate { return t.chat.Clone() }

// SetChatTemplate attaches c (copied) to the tokenizer, after checking that
// every stop text is one token of the vocabulary; nil removes it. It must not
// be called concurrently with other methods.
func (t *Tokenizer) SetChatTemplate(c *ChatTemplate) error {
	if c == nil {
		t.chat = nil
		return nil
	}
	if err := t.checkChatTemplate(c); err != nil {
		return err
	}
	t.chat = c.Clone()
	return nil
}

func (t *Tokenizer) checkChatTemplate(c *ChatTemplate) error {
	if err := c.Validate(); err != nil {
		return err
	}
	for i, s := range c.Stop {
		if _, ok := t.vocab[s]; !ok {
			return fmt.Errorf("tokenizer: chat template: stop[%d] %q is not a token of the vocabulary", i, s)
		}
	}
	return nil
}

// StopIDs returns the ids of the chat template's stop tokens.
func (t *Tokenizer) StopIDs() ([]int, error) {
	if t.chat == nil {
		return nil, ErrNoChatTemplate
	}
	ids := make([]int, 0, len(t.chat.Stop))
	for _, s := range t.chat.Stop {
		ids = append(ids, t.vocab[s])
	}
	return ids, nil
}

// EncodeChat renders msgs with the tokenizer's chat template and encodes
// the result. Added tokens, special ones included, are recognised in the
// template's text but not in message contents; apart from that the ids are
// those of EncodeSpecial on the rendered text.
func (t *Tokenizer) EncodeChat(msgs []Message, addGenerationPrompt bool) ([]int, error) {
	if t.chat == nil {
		return nil, ErrNoChatTemplate
	}
	st := t.states.Get().(*encodeState)
	defer t.states.Put(st)
	var plain strings.Builder
	var ids []int
	flush := func() {
		ids = t.encodeSegment(st, ids, plain.String())
		plain.Reset()
	}
	err := t.chat.walk(msgs, addGenerationPrompt, func(s string, template bool) {
		if !template {
			// Plain text, except for added tokens that are not special.
			for s != "" {
				start, end, id := len(s), len(s), -1
				if t.matchPlain != nil {
					start, end, id = t.matchPlain.find(s)
				}
				plain.WriteString(s[:start])
				if id < 0 {
					break
				}
				flush()
				ids = append(ids, id)
				s = s[end:]
			}
			return
		}
		for s != "" {
			start, end, id := len(s), len(s), -1
			if t.matchAll != nil {
				start, end, id = t.matchAll.find(s)
			}
			plain.WriteString(s[:start])
			if id < 0 {
				break
			}
			flush()
			ids = append(ids, id)
			s = s[end:]
		}
	})
	if err != nil {
		return nil, err
	}
	flush()
	return ids, nil
}
