package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// Decoder turns ids into text one at a time, for streaming a generation: it
// returns only whole UTF-8 characters and holds back the bytes of a
// character that a token ended inside, until the next tokens complete it.
// A Decoder is not safe for concurrent use; make one per stream.
type Decoder struct {
	t       *Tokenizer
	pending []byte
	out     []byte // what NextBytes returned last
	// SkipSpecial drops special tokens from the text.
	SkipSpecial bool
}

// NewDecoder returns a streaming decoder.
func (t *Tokenizer) NewDecoder() *Decoder { return &Decoder{t: t} }

// Next feeds one id and returns the text it completes, often "" when the
// token ends inside a character. An id outside the vocabulary is an error
// wrapping ErrUnknownID, and changes nothing.
//
// Bytes that cannot begin or continue a valid UTF-8 character are not held:
// they are returned as they are, so that an invalid sequence never stalls
// the stream. Flush returns what is held at the end.
func (d *Decoder) Next(id int) (string, error) {
	b, ok := d.t.TokenBytes(id)
	if !ok {
		return "", fmt.Errorf("tokenizer: decoding id %d: %w (vocabulary size %d)", id, ErrUnknownID, d.t.VocabSize())
	}
	if d.SkipSpecial && d.t.special[id] {
		return "", nil
	}
	d.pending = append(d.pending, b...)
	n := completeLen(d.pending)
	if n == 0 {
		return "", nil
	}
	s := string(d.pending[:n])
	d.pending = append(d.pending[:0], d.pending[n:]...)
	return s, nil
}

// NextBytes is Next without the string: the bytes it returns are the
// decoder's own and valid until its next call, so that a caller that
// copies them (into a strings.Builder, say) allocates nothing per token.
func (d *Decoder) NextBytes(id int) ([]byte, error) {
	b, ok := d.t.TokenBytes(id)
	if !ok {
		return nil, fmt.Errorf("tokenizer: decoding id %d: %w (vocabulary size %d)", id, ErrUnknownID, d.t.VocabSize())
	}
	if d.SkipSpecial && d.t.special[id] {
		return nil, nil
	}
	d.pending = append(d.pending, b...)
	n := completeLen(d.pending)
	d.out = append(d.out[:0], d.pending[:n]...)
	d.pending = append(d.pending[:0], d.pending[n:]...)
	return d.out, nil
}

// Flush returns the bytes still held (an incomplete character at the end of
// the stream) and resets the decoder.
func (d *Decoder) Flush() string {
	s := string(d.pending)
	d.pending = d.pending[:0]
	return s
}

// Reset drops what is held.
func (d *Decoder) Reset() { d.pending = d.pending[:0] }

// completeLen returns the length of the longest prefix of p that does not
// end inside a character that could still be completed: everything except a
// trailing valid-but-incomplete UTF-8 prefix.
func completeLen(p []byte) int {
	// A character is at most 4 bytes: look for the start of the last one.
	for k := 1; k <= utf8.UTFMax && k <= len(p); k++ {
		c := p[len(p)-k]
		if c < utf8.RuneSelf {
			return len(p) // ASCII: nothing pending after it
		}
		if utf8.RuneStart(c) {
			tail := p[len(p)-k:]
			if utf8.FullRune(tail) {
				return len(p)
			}
			// Incomplete: hold it if it is a valid prefix of some
			// character, as utf8.FullRune's false tells for a start byte
			// followed by continuation bytes in range.
			if validPrefix(tail) {
				return len(p) - k
			}
			return len(p)
		}
	}
	return len(p)
}

// validPrefix reports whether p (a start byte and fewer continuation bytes
// than it needs) can still become a valid character.
func validPrefix(p []byte) bool {
	var buf [utf8.UTFMax]byte
	n := copy(buf[:], p)
	// Complete it with the smallest continuation bytes allowed and see
	// whether some completion is valid; the second byte's range depends on
	// the first (E0, ED, F0, F4), so try the range ends.
	for _, fill := range []byte{0x80, 0x90, 0x9F, 0xA0, 0xBF} {
		for i := n; i < utf8.UTFMax; i++ {
			buf[i] = fill
		}
		need := 0
		switch c := p[0]; {
		case c >= 0xF0:
			need = 4
		case c >= 0xE0:
			need = 3
		default:
			need = 2
		}
		if r, size := utf8.DecodeRune(buf[:need]); r != utf8.RuneError && size == need {
			return true
		}
	}
	return false
}
