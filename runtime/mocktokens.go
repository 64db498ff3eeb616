package runtime

import (
	"strings"

	"github.com/neuro-go/neuro/tokenizer"
)

// MockTokens are the tokens a mock device (package runtime/hal/mock,
// Options.Tokens) should answer with for a language model that reads and
// writes tok's vocabulary: its whole lower-case words (a space and three
// or more letters), or failing those every token that is not special. A
// special token (the end of the text or of a turn) is never among them,
// so that a mock completion runs to its max_tokens unless a stop sequence
// matches: mock text is for developing clients. A nil tok has none.
func MockTokens(tok *tokenizer.Tokenizer) []int {
	if tok == nil {
		return nil
	}
	var words, plain []int
	for id := 0; id < tok.VocabSize(); id++ {
		if tok.IsSpecial(id) {
			continue
		}
		plain = append(plain, id)
		if isWord(tok.Decode([]int{id})) {
			words = append(words, id)
		}
	}
	if len(words) == 0 {
		return plain
	}
	return words
}

// isWord reports a space and three or more lower-case letters.
func isWord(s string) bool {
	if len(s) < 4 || s[0] != ' ' {
		return false
	}
	return strings.Trim(s[1:], "abcdefghijklmnopqrstuvwxyz") == ""
}
