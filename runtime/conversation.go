package runtime

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/neuro-go/neuro/tokenizer"
)

// State is a language model's state after a conversation's tokens: all
// a later turn needs of them. Its size does not grow with the
// conversation: a spiking model's context is its neurons' state.
type State struct {
	// Model and Deployment made it; Device names the device and its
	// settings, whose numbers the state holds.
	Model      string `json:"model"`
	Deployment string `json:"deployment"`
	Device     string `json:"device"`
	// Tokens are the tokens the state has read, in order.
	Tokens []int `json:"tokens"`
	// Data is the device's saved slot (hal.Snapshotter).
	Data []byte `json:"data"`
}

// Bytes is what the state holds: its data and its tokens (4 bytes each
// when stored).
func (s *State) Bytes() int { return len(s.Data) + 4*len(s.Tokens) }

// resumePoint is where a sequence starts: after the first n tokens of its
// prompt, from data (a saved slot), or at the start when data is nil.
type resumePoint struct {
	n    int
	data []byte
}

// stateDevice names what a deployment's states depend on besides the
// program: its device and the device's settings.
func (d *Deployment) stateDevice() string {
	s := d.Device.Name
	for _, x := range []string{d.Device.Model, d.spec.Precision} {
		if x != "" {
			s += "/" + x
		}
	}
	return s
}

// cacheScope is the prefix cache's scope of a deployment and principal.
// The deployment's serial number, not its ID, keeps a deployment made
// again under the same ID from reading its predecessor's states.
func (d *Deployment) cacheScope(principal string) string {
	return d.cachePrefix() + principal
}

func (d *Deployment) cachePrefix() string { return strconv.FormatUint(d.serial, 10) + "\x00" }

// resumePoints chooses where each prompt's sequences start: after the
// longest prefix of it that req.Resume or the prefix cache holds a state
// for. A prompt whose log-probabilities are wanted is read whole.
func (r *Runtime) resumePoints(d *Deployment, req *Request, prompts [][]int) ([]resumePoint, error) {
	pts := make([]resumePoint, len(prompts))
	if st := req.Resume; st != nil && st.Model != d.Model.ID {
		return nil, &ParamError{"model", fmt.Sprintf("the conversation's state belongs to model %q, not %q", st.Model, d.Model.ID)}
	}
	if !d.snapshots || (req.Echo && req.Logprobs) {
		return pts, nil
	}
	cache := r.cache
	if req.NoCache {
		cache = nil
	}
	for p, prompt := range prompts {
		limit := len(prompt) - 1 // the last token is read for its logits
		if st := req.Resume; p == 0 && st != nil && st.Deployment == d.ID && st.Device == d.stateDevice() &&
			len(st.Tokens) <= limit && slices.Equal(st.Tokens, prompt[:len(st.Tokens)]) {
			pts[p] = resumePoint{len(st.Tokens), st.Data}
		}
		if cache != nil {
			if n, data := cache.lookup(d.cacheScope(req.Principal), prompt, limit); n > pts[p].n {
				pts[p] = resumePoint{n, data}
			}
		}
	}
	return pts, nil
}

// enter prepares slot i for the sequence just admitted to it: it loads
// the state the sequence resumes from, or resets the slot. A state the
// device refuses is recomputed.
func (w *worker) enter(i int) {
	s := w.slots[i]
	s.canSave = w.snap != nil
	if p := s.resume; p.data != nil && w.snap != nil {
		if err := w.snap.LoadSlot(i, p.data); err == nil {
			s.pos, s.fed, s.cached = p.n, p.n, p.n
			return
		}
	}
	s.pos, s.fed, s.cached = 0, 0, 0
	w.inst.Reset(i)
}

// checkpoint leaves the slot's state after tokens in the prefix cache.
func (w *worker) checkpoint(i int, s *seq, tokens []int) []byte {
	if w.snap == nil {
		return nil
	}
	data, err := w.snap.SaveSlot(nil, i)
	if err != nil {
		return nil
	}
	if c := w.d.rt.cache; c != nil && !s.req.NoCache {
		c.put(w.d.cacheScope(s.req.Principal), tokens, data)
	}
	return data
}

// finished handles a sequence whose answer is complete. One that asked
// for its state stays in its slot to close the turn (closeTurn); any
// other leaves its state after what it read in the prefix cache.
func (w *worker) finished(i int, s *seq) {
	if s.held {
		if w.closeTurn(i, s) {
			return // it reads the closing tokens first
		}
	} else if w.snap != nil && !s.req.NoCache && s.fed > s.cached {
		w.checkpoint(i, s, s.read())
	}
	w.free(i)
}

// closeTurn starts reading the conversation's closed turn: the messages
// and the answer as the chat template writes them, encoded as a prompt
// that sent them whole would be, so that the next turn's prompt extends
// the state's tokens. When the tokens read so far are a prefix of them
// (the answer's tokens encode its text canonically), only the rest is
// read; otherwise the slot goes back to the longest state that is one. It
// reports whether tokens remain to read; when none do, the state is
// saved at once.
func (w *worker) closeTurn(i int, s *seq) bool {
	msgs := append(slices.Clip(s.req.Messages), tokenizer.Message{Role: "assistant", Content: ValidText(s.text.String())})
	turn, err := s.model.Tokenizer.EncodeChat(msgs, false)
	if err != nil {
		s.release()
		return false
	}
	read := s.read()
	common := commonPrefix(read, turn)
	switch {
	case common == len(read):
	case s.promptState != nil && common >= len(s.prompt) && w.snap.LoadSlot(i, s.promptState) == nil:
		s.fed = len(s.prompt)
	case s.resume.data != nil && common >= s.resume.n && w.snap.LoadSlot(i, s.resume.data) == nil:
		s.fed = s.resume.n
	default:
		w.inst.Reset(i)
		s.fed = 0
	}
	s.closing = turn
	if s.fed < len(turn) {
		return true
	}
	w.saveTurn(i, s)
	return false
}

// saveTurn saves the closed turn's state as the sequence's result and in
// the prefix cache, and lets the request finish.
func (w *worker) saveTurn(i int, s *seq) {
	if data := w.checkpoint(i, s, s.closing); data != nil {
		d := w.d
		s.state = &State{Model: d.Model.ID, Deployment: d.ID, Device: d.stateDevice(), Tokens: s.closing, Data: data}
	}
	s.release()
}

// ValidText is text as a client reads it from JSON: each byte that is not
// part of valid UTF-8 becomes U+FFFD, as encoding/json writes it. A turn
// is closed on the answer's ValidText, so that the conversation a client
// sends back, the answer as it read it, extends the turn's state.
func ValidText(text string) string {
	if utf8.ValidString(text) {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	return b.String()
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
