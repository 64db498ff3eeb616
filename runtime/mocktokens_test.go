package runtime

import "testing"

func TestMockTokens(t *testing.T) {
	if MockTokens(nil) != nil {
		t.Error("tokens without a tokenizer")
	}
	ids := MockTokens(testTok)
	if len(ids) == 0 {
		t.Fatal("no tokens")
	}
	for _, id := range ids {
		if testTok.IsSpecial(id) || !isWord(testTok.Decode([]int{id})) {
			t.Fatalf("token %d %q is special or not a word", id, testTok.Decode([]int{id}))
		}
	}
}
