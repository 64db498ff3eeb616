package tokenizer

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// MaxVocabSize bounds the number of ids a tokenizer may have; files that
// declare more (or an id beyond it) are refused before anything of that size
// is allocated. The largest published BPE vocabularies have about 262k
// entries.
const MaxVocabSize = 1 << 20

// AddedToken is a token matched in the raw text before pre-tokenisation, so
// that it is never split: the special tokens of a model, or words a user
// added to the vocabulary. The fields are those of tokenizer.json.
type AddedToken struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
	// SingleWord: match only when not touching a letter, digit or '_'.
	SingleWord bool `json:"single_word"`
	// LStrip and RStrip: the match takes the whitespace to its left or right.
	LStrip bool `json:"lstrip"`
	RStrip bool `json:"rstrip"`
	// Normalized is kept for round trips; this package has no normalizers.
	Normalized bool `json:"normalized"`
	// Special tokens are recognised only by EncodeSpecial, and can be skipped
	// when decoding.
	Special bool `json:"special"`
}

// Tokenizer is a byte-level BPE tokenizer. It is safe for concurrent use,
// except SetChatTemplate, which must not run concurrently with other calls.
type Tokenizer struct {
	tokens     []string       // id -> token ("" for holes)
	vocab      map[string]int // token -> id, model vocabulary and added tokens
	modelSize  int            // number of entries of model.vocab
	byteIDs    [256]int32
	merges     map[uint64]uint64 // pair(a,b) -> rank<<32 | merged id
	mergeList  [][2]int32        // by rank
	decoded    []byte            // bytes of every id, back to back
	decodedOff []uint32          // id -> [off[id], off[id+1]) in decoded
	special    []bool            // id -> is a special added token
	defined    []bool            // id -> has a token (false for holes)
	inModel    []bool            // id -> is in model.vocab

	added          []AddedToken // sorted by id
	matchAll       *addedMatcher
	matchPlain     *addedMatcher // only the non-special added tokens; nil if none
	addPrefixSpace bool
	ignoreMerges   bool
	unkID          int // -1 when none
	chat           *ChatTemplate

	states sync.Pool // *encodeState
}

// buildSpec is what every constructor (Load, LoadGPT2, Train) produces before
// the tables are built.
type buildSpec struct {
	vocab          map[string]int // model vocabulary
	merges         [][2]string
	mergesField    string // for error messages
	added          []AddedToken
	addPrefixSpace bool
	ignoreMerges   bool
	unkToken       string
	chat           *ChatTemplate
}

func newTokenizer(spec buildSpec) (*Tokenizer, error) {
	if len(spec.vocab) == 0 {
		return nil, fieldErr(ErrFormat, "model.vocab", "empty vocabulary")
	}
	if len(spec.vocab)+len(spec.added) > MaxVocabSize {
		return nil, fieldErr(ErrTooLarge, "model.vocab", "%d entries, more than the limit of %d", len(spec.vocab)+len(spec.added), MaxVocabSize)
	}
	maxID := -1
	for tok, id := range spec.vocab {
		if id < 0 || id >= MaxVocabSize {
			return nil, fieldErr(ErrTooLarge, "model.vocab", "token %q has id %d, outside [0, %d)", tok, id, MaxVocabSize)
		}
		maxID = max(maxID, id)
	}
	for i, a := range spec.added {
		if a.ID < 0 || a.ID >= MaxVocabSize {
			return nil, fieldErr(ErrTooLarge, fmt.Sprintf("added_tokens[%d].id", i), "id %d outside [0, %d)", a.ID, MaxVocabSize)
		}
		if a.Content == "" {
			return nil, fieldErr(ErrFormat, fmt.Sprintf("added_tokens[%d].content", i), "empty token")
		}
		maxID = max(maxID, a.ID)
	}
	// Holes are allowed (tokenizer.json does not forbid them) but not a table
	// mostly made of holes, which would be a cheap way to ask for memory.
	if maxID+1 > 2*(len(spec.vocab)+len(spec.added))+1024 {
		return nil, fieldErr(ErrTooLarge, "model.vocab", "largest id %d is far beyond the %d tokens defined", maxID, len(spec.vocab)+len(spec.added))
	}
	t := &Tokenizer{
		tokens:         make([]string, maxID+1),
		vocab:          make(map[string]int, len(spec.vocab)+len(spec.added)),
		modelSize:      len(spec.vocab),
		special:        make([]bool, maxID+1),
		inModel:        make([]bool, maxID+1),
		addPrefixSpace: spec.addPrefixSpace,
		ignoreMerges:   spec.ignoreMerges,
		unkID:          -1,
		chat:           spec.chat,
	}
	defined := make([]bool, maxID+1)
	for tok, id := range spec.vocab {
		if defined[id] {
			return nil, fieldErr(ErrFormat, "model.vocab", "id %d is used by both %q and %q", id, t.tokens[id], tok)
		}
		defined[id] = true
		t.inModel[id] = true
		t.tokens[id] = tok
		t.vocab[tok] = id
	}
	added := append([]AddedToken(nil), spec.added...)
	sort.SliceStable(added, func(i, j int) bool { return added[i].ID < added[j].ID })
	for i, a := range added {
		if i > 0 && added[i-1].ID == a.ID {
			return nil, fieldErr(ErrFormat, "added_tokens", "id %d is used by both %q and %q", a.ID, added[i-1].Content, a.Content)
		}
		if defined[a.ID] && t.tokens[a.ID] != a.Content {
			return nil, fieldErr(ErrFormat, "added_tokens", "id %d is %q in added_tokens but %q in model.vocab", a.ID, a.Content, t.tokens[a.ID])
		}
		if id, ok := t.vocab[a.Content]; ok && id != a.ID {
			return nil, fieldErr(ErrFormat, "added_tokens", "token %q has id %d in added_tokens but %d in model.vocab", a.Content, a.ID, id)
		}
		defined[a.ID] = true
		t.tokens[a.ID] = a.Content
		t.vocab[a.Content] = a.ID
		t.special[a.ID] = a.Special
	}
	t.added = added
	t.defined = defined

	for b := 0; b < 256; b++ {
		id, ok := spec.vocab[byteRuneStrings[b]]
		if !ok {
			if spec.unkToken != "" {
				if unk, ok := t.vocab[spec.unkToken]; ok {
					t.byteIDs[b] = int32(unk)
					continue
				}
			}
			return nil, fieldErr(ErrFormat, "model.vocab", "byte 0x%02x (symbol %q) is missing; a byte-level vocabulary needs all 256", b, byteRuneStrings[b])
		}
		t.byteIDs[b] = int32(id)
	}
	if spec.unkToken != "" {
		if unk, ok := t.vocab[spec.unkToken]; ok {
			t.unkID = unk
		} else {
			return nil, fieldErr(ErrFormat, "model.unk_token", "%q is not in the vocabulary", spec.unkToken)
		}
	}

	t.merges = make(map[uint64]uint64, len(spec.merges))
	t.mergeList = make([][2]int32, 0, len(spec.merges))
	for i, m := range spec.merges {
		a, ok := spec.vocab[m[0]]
		if !ok {
			return nil, fieldErr(ErrFormat, fmt.Sprintf("%s[%d]", spec.mergesField, i), "%q is not in model.vocab", m[0])
		}
		b, ok := spec.vocab[m[1]]
		if !ok {
			return nil, fieldErr(ErrFormat, fmt.Sprintf("%s[%d]", spec.mergesField, i), "%q is not in model.vocab", m[1])
		}
		ab, ok := spec.vocab[m[0]+m[1]]
		if !ok {
			return nil, fieldErr(ErrFormat, fmt.Sprintf("%s[%d]", spec.mergesField, i), "merged token %q is not in model.vocab", m[0]+m[1])
		}
		key := pairKey(int32(a), int32(b))
		if _, dup := t.merges[key]; dup {
			continue // the first (lowest) rank wins, as in Hugging Face tokenizers
		}
		t.merges[key] = uint64(len(t.mergeList))<<32 | uint64(ab)
		t.mergeList = append(t.mergeList, [2]int32{int32(a), int32(b)})
	}

	// Decoded bytes of every id.
	t.decodedOff = make([]uint32, len(t.tokens)+1)
	size := 0
	for _, tok := range t.tokens {
		size += len(tok)
	}
	t.decoded = make([]byte, 0, size)
	for id, tok := range t.tokens {
		t.decodedOff[id] = uint32(len(t.decoded))
		if id < len(t.special) && t.isAdded(id) {
			t.decoded = append(t.decoded, tok...)
		} else {
			t.decoded = append(t.decoded, symbolsToBytes(tok)...)
		}
	}
	t.decodedOff[len(t.tokens)] = uint32(len(t.decoded))

	t.matchAll = newAddedMatcher(added, true)
	t.matchPlain = newAddedMatcher(added, false)
	t.states.New = func() any { return newEncodeState() }
	return t, nil
}

func (t *Tokenizer) isAdded(id int) bool {
	i := sort.Search(len(t.added), func(i int) bool { return t.added[i].ID >= id })
	return i < len(t.added) && t.added[i].ID == id
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// VocabSize returns the number of ids: one more than the largest id of the
// model vocabulary and the added tokens.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// TokenToID returns the id of a token, written as it appears in the
// vocabulary (byte-level symbols, so " the" is "Ġthe"), or an added token's
// content.
func (t *Tokenizer) TokenToID(token string) (int, bool) {
	id, ok := t.vocab[token]
	return id, ok
}

// IDToToken returns the vocabulary entry of id, in its byte-level form for
// model tokens and verbatim for added tokens.
func (t *Tokenizer) IDToToken(id int) (string, bool) {
	if id < 0 || id >= len(t.tokens) || !t.defined[id] {
		return "", false
	}
	return t.tokens[id], true
}

// TokenBytes returns the bytes that id decodes to. The slice must not be
// modified.
func (t *Tokenizer) TokenBytes(id int) ([]byte, bool) {
	if id < 0 || id >= len(t.tokens) || !t.defined[id] {
		return nil, false
	}
	return t.decoded[t.decodedOff[id]:t.decodedOff[id+1]:t.decodedOff[id+1]], true
}

// AddedTokens returns a copy of the added tokens, by id.
func (t *Tokenizer) AddedTokens() []AddedToken { return append([]AddedToken(nil), t.added...) }

// IsSpecial reports whether id is a special added token.
func (t *Tokenizer) IsSpecial(id int) bool { return id >= 0 && id < len(t.special) && t.special[id] }

// SpecialID returns the id of the special token with the given content.
func (t *Tokenizer) SpecialID(content string) (int, bool) {
	id, ok := t.vocab[content]
	if !ok || !t.special[id] {
		return 0, false
	}
	return id, true
}

// NumMerges returns the number of merge rules.
func (t *Tokenizer) NumMerges() int { return len(t.mergeList) }

// Encode returns the ids of text. Special tokens written in text are not
// recognised (their text is encoded like any other), so user input cannot
// forge them; added tokens that are not special are recognised. Any byte
// string is accepted, including invalid UTF-8, and Decode(Encode(s)) == s.
func (t *Tokenizer) Encode(text string) []int {
	return t.AppendEncode(make([]int, 0, len(text)/3+1), text)
}

// EncodeSpecial is Encode that also recognises special tokens written in
// the text, as Hugging Face tokenizers do by default. Use it for text that
// the program writes, such as a rendered chat template, never for user input.
func (t *Tokenizer) EncodeSpecial(text string) []int {
	return t.AppendEncodeSpecial(make([]int, 0, len(text)/3+1), text)
}

// AppendEncode appends the ids of text to dst, as Encode does, and returns
// the extended slice. With a dst of enough capacity it does not allocate
// once its word cache is warm.
func (t *Tokenizer) AppendEncode(dst []int, text string) []int {
	return t.appendEncode(dst, text, t.matchPlain)
}

// AppendEncodeSpecial appends the ids of text to dst, as EncodeSpecial does.
func (t *Tokenizer) AppendEncodeSpecial(dst []int, text string) []int {
	return t.appendEncode(dst, text, t.matchAll)
}

func (t *Tokenizer) appendEncode(dst []int, text string, m *addedMatcher) []int {
	st := t.states.Get().(*encodeState)
	dst = t.appendEncodeWith(st, dst, text, m)
	t.states.Put(st)
	return dst
}

func (t *Tokenizer) appendEncodeWith(st *encodeState, dst []int, text string, m *addedMatcher) []int {
	for len(text) > 0 {
		start, end, id := len(text), len(text), -1
		if m != nil {
			start, end, id = m.find(text)
		}
		dst = t.encodeSegment(st, dst, text[:start])
		if id < 0 {
			break
		}
		dst = append(dst, id)
		text = text[end:]
	}
	return dst
}

func (t *Tokenizer) encodeSegment(st *encodeState, dst []int, seg string) []int {
	if seg == "" {
		return dst
	}
	if t.addPrefixSpace && seg[0] != ' ' {
		seg = " " + seg
	}
	for i := 0; i < len(seg); {
		j := nextPiece(seg, i)
		st.work++
		dst = t.encodeWord(st, dst, seg[i:j])
		i = j
	}
	return dst
}

// Decode returns the text of ids: the bytes of each token, concatenated.
// Special tokens are included. Ids outside the vocabulary are skipped. The
// result is exactly the bytes that were encoded, so it is valid UTF-8 when
// the ids came from encoding valid UTF-8; arbitrary id sequences may end
// inside a character (use strings.ToValidUTF8 to replace such bytes, or a
// Decoder to hold them back).
func (t *Tokenizer) Decode(ids []int) string {
	n := 0
	for _, id := range ids {
		if uint(id) < uint(len(t.tokens)) {
			n += int(t.decodedOff[id+1] - t.decodedOff[id])
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, id := range ids {
		if uint(id) < uint(len(t.tokens)) {
			b.Write(t.decoded[t.decodedOff[id]:t.decodedOff[id+1]])
		}
	}
	return b.String()
}

// AppendDecode appends the bytes of ids to dst; ids outside the vocabulary
// are skipped.
func (t *Tokenizer) AppendDecode(dst []byte, ids []int) []byte {
	for _, id := range ids {
		if uint(id) < uint(len(t.tokens)) {
			dst = append(dst, t.decoded[t.decodedOff[id]:t.decodedOff[id+1]]...)
		}
	}
	return dst
}

// addedMatcher finds added tokens in text: the leftmost match, and the
// longest of those starting there.
type addedMatcher struct {
	first  [256]bool
	tokens []AddedToken // longest first
}

func newAddedMatcher(added []AddedToken, withSpecial bool) *addedMatcher {
	m := &addedMatcher{}
	for _, a := range added {
		if a.Special && !withSpecial {
			continue
		}
		m.tokens = append(m.tokens, a)
		m.first[a.Content[0]] = true
	}
	if len(m.tokens) == 0 {
		return nil
	}
	sort.SliceStable(m.tokens, func(i, j int) bool { return len(m.tokens[i].Content) > len(m.tokens[j].Content) })
	return m
}

// find returns the span [start, end) of the first added token in s and its
// id, or (len(s), len(s), -1). The span includes whitespace taken by LStrip
// and RStrip.
func (m *addedMatcher) find(s string) (start, end, id int) {
	for i := 0; i < len(s); i++ {
		if !m.first[s[i]] {
			continue
		}
		for k := range m.tokens {
			a := &m.tokens[k]
			if !strings.HasPrefix(s[i:], a.Content) {
				continue
			}
			e := i + len(a.Content)
			if a.SingleWord && (isWordBefore(s, i) || isWordAfter(s, e)) {
				continue
			}
			st := i
			if a.LStrip {
				for st > 0 {
					r, n := utf8.DecodeLastRuneInString(s[:st])
					if !unicode.IsSpace(r) {
						break
					}
					st -= n
				}
			}
			if a.RStrip {
				for e < len(s) {
					r, n := utf8.DecodeRuneInString(s[e:])
					if !unicode.IsSpace(r) {
						break
					}
					e += n
				}
			}
			return st, e, a.ID
		}
	}
	return len(s), len(s), -1
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

func isWordBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isWordRune(r)
}

func isWordAfter(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isWordRune(r)
}
