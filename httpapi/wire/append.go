package wire

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// The appenders below write what encoding/json writes for a string, a
// float64 and a []int of bytes, to a caller's buffer, allocating nothing.
// The server builds its stream chunks and errors with them.

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, as encoding/json writes it:
// invalid UTF-8 becomes U+FFFD; <, >, & and U+2028, U+2029 are escaped
// (safe inside HTML and JavaScript).
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Finite is f as the API sends it: JSON has no infinities, so minus
// infinity (an impossible token's log-probability) is -9999, as OpenAI
// sends it, and plus infinity 9999; NaN is -9999 too.
func Finite(f float64) float64 {
	switch {
	case math.IsInf(f, 1):
		return 9999
	case math.IsInf(f, -1), math.IsNaN(f):
		return -9999
	}
	return f
}

// AppendFloat appends Finite(f) as encoding/json writes a float64: the
// shortest representation, in exponent form below 1e-6 and from 1e21.
func AppendFloat(b []byte, f float64) []byte {
	f = Finite(f)
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmt = 'e'
	}
	b = strconv.AppendFloat(b, f, fmt, -1, 64)
	if fmt == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// AppendBytes appends the bytes of s as a JSON array of integers (the
// "bytes" of a chat log-probability).
func AppendBytes(b []byte, s string) []byte {
	b = append(b, '[')
	for i := 0; i < len(s); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(s[i]), 10)
	}
	return append(b, ']')
}

// Bytes is s's bytes as the "bytes" field of a TokenLogprob holds them.
func Bytes(s string) []int {
	b := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		b[i] = int(s[i])
	}
	return b
}
