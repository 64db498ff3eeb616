package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The GPT-2 pre-tokenisation pattern,
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// written as a scanner: Go's regexp has no lookahead, and a scanner runs in
// time linear in the text with no backtracking. \s is Unicode White_Space
// (unicode.IsSpace), \p{L} unicode.IsLetter, \p{N} unicode.IsNumber. A byte
// that does not start a valid UTF-8 sequence counts as one "other" character,
// so invalid input is split like punctuation and still round-trips.

// GPT2Pattern is the regular expression that the scanner implements, as GPT-2
// and the Hugging Face ByteLevel pre-tokenizer write it.
const GPT2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

const (
	clsOther uint8 = iota
	clsLetter
	clsNumber
	clsSpace
)

// asciiClass classifies the ASCII bytes; bytes >= 0x80 are looked up rune by
// rune.
var asciiClass = func() [128]uint8 {
	var t [128]uint8
	for b := 0; b < 128; b++ {
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z':
			t[b] = clsLetter
		case '0' <= b && b <= '9':
			t[b] = clsNumber
		case b == ' ', '\t' <= b && b <= '\r':
			t[b] = clsSpace
		default:
			t[b] = clsOther
		}
	}
	return t
}()

// classAt returns the class of the character starting at s[i] and its length
// in bytes. i must be < len(s).
func classAt(s string, i int) (uint8, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && n <= 1:
		return clsOther, 1
	case unicode.IsLetter(r):
		return clsLetter, n
	case unicode.IsNumber(r):
		return clsNumber, n
	case unicode.IsSpace(r):
		return clsSpace, n
	}
	return clsOther, n
}

// nextPiece returns the end of the pre-token that starts at s[i]; i < len(s).
func nextPiece(s string, i int) int {
	c := s[i]
	if c == '\'' && i+1 < len(s) {
		switch s[i+1] {
		case 's', 't', 'm', 'd':
			return i + 2
		case 'r', 'v':
			if i+2 < len(s) && s[i+2] == 'e' {
				return i + 3
			}
		case 'l':
			if i+2 < len(s) && s[i+2] == 'l' {
				return i + 3
			}
		}
	}
	j := i
	if c == ' ' && i+1 < len(s) {
		if cls, _ := classAt(s, i+1); cls != clsSpace {
			j = i + 1 // " ?" joins the run that follows
		}
	}
	cls, n := classAt(s, j)
	if cls != clsSpace {
		j += n
		for j < len(s) {
			// ASCII fast path: stay in this loop without a call while the class holds.
			if b := s[j]; b < utf8.RuneSelf {
				if asciiClass[b] != cls {
					break
				}
				j++
				continue
			}
			c2, n2 := classAt(s, j)
			if c2 != cls {
				break
			}
			j += n2
		}
		return j
	}
	// Whitespace: \s+(?!\S) takes the run but leaves its last character to
	// the word that follows; \s+ takes a lone character.
	last := j
	j += n
	for j < len(s) {
		c2, n2 := classAt(s, j)
		if c2 != clsSpace {
			break
		}
		last = j
		j += n2
	}
	if j == len(s) || last == i {
		return j
	}
	return last
}

// pieces calls f for each pre-token of s, in order.
func pieces(s string, f func(p string)) {
	for i := 0; i < len(s); {
		j := nextPiece(s, i)
		f(s[i:j])
		i = j
	}
}
