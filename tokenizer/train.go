package tokenizer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"unicode/utf8"
)

// TrainOptions configures Train and NewTrainer. The zero value trains a
// 1024-id vocabulary with no special tokens.
type TrainOptions struct {
	// VocabSize is the number of ids wanted: special tokens, the 256 byte
	// symbols and the merges. 0 means 1024. Training stops earlier when no
	// pair occurs MinFrequency times.
	VocabSize int
	// SpecialTokens get the first ids, in order. They are never split, never
	// merged, and their text is skipped in the training data.
	SpecialTokens []string
	// MinFrequency is the least number of occurrences for a pair to be
	// merged; 0 or 1 means any pair that occurs.
	MinFrequency int
	// MaxTokenLength, when positive, is the longest token (in bytes) a merge
	// may create.
	MaxTokenLength int
	// ChatTemplate is attached to the trained tokenizer; its stop texts must
	// be among SpecialTokens.
	ChatTemplate *ChatTemplate
	// Logger receives progress at debug level; nil is silent.
	Logger *slog.Logger
}

// Validate checks the options.
func (o *TrainOptions) Validate() error {
	vs := o.vocabSize()
	if vs < 256+len(o.SpecialTokens) {
		return fmt.Errorf("tokenizer: TrainOptions.VocabSize %d is less than the 256 byte symbols plus %d special tokens", vs, len(o.SpecialTokens))
	}
	if vs > MaxVocabSize {
		return fmt.Errorf("tokenizer: TrainOptions.VocabSize %d: %w (limit %d)", vs, ErrTooLarge, MaxVocabSize)
	}
	seen := map[string]bool{}
	for i, s := range o.SpecialTokens {
		if s == "" {
			return fmt.Errorf("tokenizer: TrainOptions.SpecialTokens[%d] is empty", i)
		}
		if seen[s] {
			return fmt.Errorf("tokenizer: TrainOptions.SpecialTokens[%d] %q is repeated", i, s)
		}
		seen[s] = true
	}
	if o.MinFrequency < 0 || o.MaxTokenLength < 0 {
		return errors.New("tokenizer: TrainOptions.MinFrequency and MaxTokenLength must not be negative")
	}
	if o.ChatTemplate != nil {
		if err := o.ChatTemplate.Validate(); err != nil {
			return err
		}
		for i, s := range o.ChatTemplate.Stop {
			if !seen[s] {
				return fmt.Errorf("tokenizer: TrainOptions.ChatTemplate.Stop[%d] %q is not a special token", i, s)
			}
		}
	}
	return nil
}

func (o *TrainOptions) vocabSize() int {
	if o.VocabSize == 0 {
		return 1024
	}
	return o.VocabSize
}

// Trainer learns a byte-level BPE. Feed it text with Add and ReadFrom, then
// call Train. Only the table of distinct pre-tokens and their counts is
// kept, so the text can be far larger than memory.
type Trainer struct {
	opts    TrainOptions
	match   *addedMatcher
	words   map[string]int64
	readBuf []byte
}

// NewTrainer returns a Trainer; opts may be nil.
func NewTrainer(opts *TrainOptions) (*Trainer, error) {
	var o TrainOptions
	if opts != nil {
		o = *opts
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var sp []AddedToken
	for i, s := range o.SpecialTokens {
		sp = append(sp, AddedToken{ID: i, Content: s, Special: true})
	}
	return &Trainer{opts: o, match: newAddedMatcher(sp, true), words: make(map[string]int64)}, nil
}

// Add counts the pre-tokens of one document.
func (tr *Trainer) Add(text string) { tr.count(text, true) }

// Words returns the number of distinct pre-tokens counted so far.
func (tr *Trainer) Words() int { return len(tr.words) }

// count counts the pre-tokens of text, skipping special tokens. Unless
// final, the last pre-token is left uncounted (the text that follows may
// extend it) and its offset returned.
func (tr *Trainer) count(text string, final bool) int {
	off := 0
	for {
		start, end, id := len(text), len(text), -1
		if tr.match != nil {
			start, end, id = tr.match.find(text)
		}
		seg := text[:start]
		last := 0
		for i := 0; i < len(seg); {
			j := nextPiece(seg, i)
			if id < 0 && !final && j == len(seg) {
				last = i
				break
			}
			p := seg[i:j]
			if c, ok := tr.words[p]; ok {
				tr.words[p] = c + 1
			} else {
				tr.words[strings.Clone(p)] = 1
			}
			i = j
			last = j
		}
		if id < 0 {
			return off + last
		}
		off += end
		text = text[end:]
	}
}

// ReadFrom counts the pre-tokens of one document read from r, in chunks of
// a megabyte, splitting exactly as if the whole text were at hand.
func (tr *Trainer) ReadFrom(r io.Reader) (int64, error) {
	const chunk = 1 << 20
	if tr.readBuf == nil {
		tr.readBuf = make([]byte, 0, 2*chunk)
	}
	buf := tr.readBuf[:0]
	var total int64
	for {
		if cap(buf)-len(buf) < chunk {
			nb := make([]byte, len(buf), 2*cap(buf)+chunk)
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		total += int64(n)
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			tr.count(string(buf), true)
			tr.readBuf = buf[:0]
			return total, nil
		}
		if err != nil {
			return total, fmt.Errorf("tokenizer: reading training text: %w", err)
		}
		if len(buf) < chunk {
			continue
		}
		// Keep a tail that might hold a partial special token or character
		// out of this round; count up to the start of the last pre-token.
		cut := len(buf) - 256
		for cut > 0 && !utf8.RuneStart(buf[cut]) {
			cut--
		}
		rest := tr.count(string(buf[:cut]), false)
		n2 := copy(buf, buf[rest:])
		buf = buf[:n2]
	}
}

// Train learns the merges from what was fed and returns the tokenizer.
// vocabSize, when not 0, replaces TrainOptions.VocabSize, so that one
// count of a corpus trains several sizes. Ties between equally frequent
// pairs go to the pair of smaller ids, so the result is deterministic. The
// Trainer can be fed more and trained again.
func (tr *Trainer) Train(ctx context.Context, vocabSize int) (*Tokenizer, error) {
	o := tr.opts
	if vocabSize != 0 {
		o.VocabSize = vocabSize
		if err := o.Validate(); err != nil {
			return nil, err
		}
	}
	nSpecial := len(o.SpecialTokens)
	tokens := make([]string, 0, o.vocabSize())
	tokens = append(tokens, o.SpecialTokens...)
	tokLen := make([]int, 0, o.vocabSize())
	for range o.SpecialTokens {
		tokLen = append(tokLen, 0)
	}
	for b := 0; b < 256; b++ {
		tokens = append(tokens, byteRuneStrings[b])
		tokLen = append(tokLen, 1)
	}
	type word struct {
		syms  []int32
		count int64
	}
	words := make([]word, 0, len(tr.words))
	counts := make(map[uint64]int64)
	where := make(map[uint64][]int32)
	for w, c := range tr.words {
		syms := make([]int32, len(w))
		for i := 0; i < len(w); i++ {
			syms[i] = int32(nSpecial + int(w[i]))
		}
		wi := int32(len(words))
		words = append(words, word{syms, c})
		for i := 0; i+1 < len(syms); i++ {
			k := pairKey(syms[i], syms[i+1])
			counts[k] += c
			if l := where[k]; len(l) == 0 || l[len(l)-1] != wi {
				where[k] = append(l, wi)
			}
		}
	}
	h := make(pairHeap, 0, len(counts))
	for k, c := range counts {
		h = append(h, pairItem{c, k})
	}
	h.init()
	minFreq := int64(max(o.MinFrequency, 1))
	var merges [][2]string
	lastSeen := make([]int32, len(words))
	for i := range lastSeen {
		lastSeen[i] = -1
	}
	changed := make(map[uint64]struct{})
	for len(tokens) < o.vocabSize() && len(h) > 0 {
		if len(merges)%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("tokenizer: training: %w", err)
			}
		}
		top := h.pop()
		cur := counts[top.pair]
		if cur != top.count {
			if cur > 0 {
				h.push(pairItem{cur, top.pair})
			}
			continue
		}
		if cur < minFreq {
			break
		}
		a, b := int32(top.pair>>32), int32(uint32(top.pair))
		if o.MaxTokenLength > 0 && tokLen[a]+tokLen[b] > o.MaxTokenLength {
			delete(counts, top.pair)
			continue
		}
		id := int32(len(tokens))
		tokens = append(tokens, tokens[a]+tokens[b])
		tokLen = append(tokLen, tokLen[a]+tokLen[b])
		merges = append(merges, [2]string{tokens[a], tokens[b]})
		stamp := int32(len(merges))
		clear(changed)
		for _, wi := range where[top.pair] {
			if lastSeen[wi] == stamp {
				continue
			}
			lastSeen[wi] = stamp
			w := &words[wi]
			s := w.syms
			for i := 0; i+1 < len(s); i++ {
				if s[i] != a || s[i+1] != b {
					continue
				}
				if i > 0 {
					counts[pairKey(s[i-1], a)] -= w.count
				}
				counts[top.pair] -= w.count
				if i+2 < len(s) {
					counts[pairKey(b, s[i+2])] -= w.count
				}
				s[i] = id
				s = append(s[:i+1], s[i+2:]...)
				if i > 0 {
					k := pairKey(s[i-1], id)
					counts[k] += w.count
					changed[k] = struct{}{}
					where[k] = append(where[k], wi)
				}
				if i+1 < len(s) {
					k := pairKey(id, s[i+1])
					counts[k] += w.count
					changed[k] = struct{}{}
					where[k] = append(where[k], wi)
				}
			}
			w.syms = s
		}
		delete(counts, top.pair)
		delete(where, top.pair)
		for k := range changed {
			if c := counts[k]; c > 0 {
				h.push(pairItem{c, k})
			}
		}
		if o.Logger != nil && len(merges)%256 == 0 {
			o.Logger.Debug("tokenizer: training", "merges", len(merges), "vocab", len(tokens), "count", cur)
		}
	}
	spec := buildSpec{vocab: make(map[string]int, len(tokens)), merges: merges, mergesField: "merges", chat: o.ChatTemplate.Clone()}
	for i, s := range o.SpecialTokens {
		spec.added = append(spec.added, AddedToken{ID: i, Content: s, Special: true})
	}
	for id, tok := range tokens {
		if id >= nSpecial {
			if prev, dup := spec.vocab[tok]; dup {
				// A special token spelled like a byte symbol would collide.
				return nil, fmt.Errorf("tokenizer: training: token %q has ids %d and %d", tok, prev, id)
			}
		}
		spec.vocab[tok] = id
	}
	return newTokenizer(spec)
}

// Train learns a byte-level BPE from texts, each one document, read in
// streaming fashion; see Trainer.
func Train(ctx context.Context, opts *TrainOptions, texts ...io.Reader) (*Tokenizer, error) {
	tr, err := NewTrainer(opts)
	if err != nil {
		return nil, err
	}
	for _, r := range texts {
		if _, err := tr.ReadFrom(r); err != nil {
			return nil, err
		}
	}
	return tr.Train(ctx, 0)
}

type pairItem struct {
	count int64
	pair  uint64
}

// pairHeap puts the largest count first, then the smaller pair.
type pairHeap = heap[pairItem]

//lint:ignore U1000 called through heap's type constraint, which staticcheck does not follow
func (a pairItem) less(b pairItem) bool {
	return a.count > b.count || (a.count == b.count && a.pair < b.pair)
}
