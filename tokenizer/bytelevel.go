package tokenizer

// The byte-level alphabet of GPT-2: every byte is given a printable rune so
// that a token is a string of visible characters. Printable Latin-1 bytes map
// to themselves; the other 68 bytes map, in order, to U+0100 onwards (a space
// becomes 'Ġ', a newline 'Ċ'). The table is computed, never mutated, so it is
// not global mutable state.

// byteRunes[b] is the rune that stands for byte b.
var byteRunes = func() [256]rune {
	var t [256]rune
	n := 0
	for b := 0; b < 256; b++ {
		if printableByte(byte(b)) {
			t[b] = rune(b)
		} else {
			t[b] = rune(256 + n)
			n++
		}
	}
	return t
}()

// byteRuneStrings[b] is string(byteRunes[b]), to build token strings without
// allocating per byte.
var byteRuneStrings = func() [256]string {
	var t [256]string
	for b := range t {
		t[b] = string(byteRunes[b])
	}
	return t
}()

func printableByte(b byte) bool {
	return ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || 0xAE <= b
}

// runeBytes is the inverse of byteRunes: runeBytes[r] = b+1 when
// byteRunes[b] == r, and 0 for runes outside the alphabet.
var runeBytes = func() [256 + 68]int16 {
	var t [256 + 68]int16
	for b, r := range byteRunes {
		t[r] = int16(b) + 1
	}
	return t
}()

// runeByte returns the byte that rune r stands for in the byte-level
// alphabet, and false when r is not part of it.
func runeByte(r rune) (byte, bool) {
	if r < 0 || int(r) >= len(runeBytes) || runeBytes[r] == 0 {
		return 0, false
	}
	return byte(runeBytes[r] - 1), true
}

// bytesToSymbols writes the byte-level form of p (one rune per byte).
func bytesToSymbols(p []byte) string {
	n := 0
	for _, b := range p {
		n += len(byteRuneStrings[b])
	}
	buf := make([]byte, 0, n)
	for _, b := range p {
		buf = append(buf, byteRuneStrings[b]...)
	}
	return string(buf)
}

// symbolsToBytes is the inverse of bytesToSymbols, following the Hugging Face
// ByteLevel decoder: when any rune of s is outside the byte-level alphabet,
// the whole of s is taken verbatim (its UTF-8 bytes).
func symbolsToBytes(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		b, ok := runeByte(r)
		if !ok {
			return []byte(s)
		}
		out = append(out, b)
	}
	return out
}
