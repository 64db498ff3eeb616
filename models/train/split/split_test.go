package split

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpus writes files into a directory and returns it with the record
// that splits each after its first line.
func corpus(t *testing.T, files map[string]string) (string, *Record) {
	t.Helper()
	dir := t.TempDir()
	rec := &Record{}
	for _, name := range []string{"extra/b.txt", "extra/a.txt", "chat.jsonl", "plain.txt"} {
		text, ok := files[name]
		if !ok {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(text))
		rec.Sources = append(rec.Sources, File{File: name, Size: int64(len(text)), TrainBytes: int64(strings.IndexByte(text, '\n') + 1), SHA256: hex.EncodeToString(sum[:])})
	}
	return dir, rec
}

func TestEncode(t *testing.T) {
	dir, rec := corpus(t, map[string]string{
		"extra/b.txt": "Once upon a time.\nThe end.",
		"extra/a.txt": "Chapter one.\nIt rained.",
		"chat.jsonl":  `{"turns":[{"speaker":"A","text":"hi"},{"speaker":"B","text":"hello"}]}` + "\n" + `{"turns":[{"speaker":"B","text":"bye"},{"speaker":"A","text":"ok"}]}` + "\n",
		"plain.txt":   "only training\n",
	})
	srcs, err := Encode(dir, rec, "neuro-bpe-1k", nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range srcs {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "books chat plain" {
		t.Fatalf("sources %q", got)
	}
	books, chat, plain := srcs[0], srcs[1], srcs[2]
	if strings.Join(books.Files, " ") != "extra/b.txt extra/a.txt" || books.Val.TextBytes != int64(len("The end.")+len("It rained.")) || books.Val.Documents != 2 {
		t.Errorf("books: %+v", books)
	}
	if chat.Train.TextBytes != int64(len("hi")+len("hello")) || chat.Val.TextBytes != int64(len("bye")+len("ok")) || chat.Val.Documents != 1 {
		t.Errorf("chat: train %+v, val %+v", chat.Train, chat.Val)
	}
	if plain.Val.Documents != 0 || len(plain.Val.IDs) != 0 || plain.Train.Documents != 1 {
		t.Errorf("plain: %+v", plain)
	}
	held, err := Encode(dir, rec, "neuro-bpe-1k", &Options{HeldOutOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(held[0].Train.IDs) != 0 || len(held[0].Val.IDs) != len(books.Val.IDs) {
		t.Errorf("held-out only: train %d ids, val %d (want 0, %d)", len(held[0].Train.IDs), len(held[0].Val.IDs), len(books.Val.IDs))
	}

	// A file that is not the one recorded is refused.
	rec.Sources[0].SHA256 = strings.Repeat("0", 64)
	if _, err := Encode(dir, rec, "neuro-bpe-1k", nil); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Errorf("changed file: %v", err)
	}
	rec.Sources[0].Size++
	if _, err := Encode(dir, rec, "neuro-bpe-1k", nil); err == nil || !strings.Contains(err.Error(), "size") {
		t.Errorf("resized file: %v", err)
	}
}
