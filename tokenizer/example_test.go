package tokenizer_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/neuro-go/neuro/tokenizer"
)

func ExampleLoadFile() {
	tok, err := tokenizer.LoadFile("../models/tokenizers/neuro-bpe-4k.json")
	if err != nil {
		log.Fatal(err)
	}
	ids := tok.Encode("Once upon a time")
	fmt.Println(len(ids), tok.Decode(ids))
	// Output: 4 Once upon a time
}

func ExampleTrain() {
	text := strings.Repeat("the cat and the hat. ", 100)
	tok, err := tokenizer.Train(context.Background(),
		&tokenizer.TrainOptions{VocabSize: 300, SpecialTokens: []string{"<|endoftext|>"}},
		strings.NewReader(text))
	if err != nil {
		log.Fatal(err)
	}
	ids := tok.EncodeSpecial(" the hat<|endoftext|>")
	fmt.Println(ids[len(ids)-1], tok.Decode(ids))
	// Output: 0  the hat<|endoftext|>
}

func ExampleTokenizer_EncodeChat() {
	tok, err := tokenizer.LoadFile("../models/tokenizers/neuro-bpe-1k.json")
	if err != nil {
		log.Fatal(err)
	}
	msgs := []tokenizer.Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Hi <|end|>"},
	}
	prompt, _ := tok.ChatTemplate().Render(msgs, true)
	fmt.Printf("%q\n", prompt)
	ids, _ := tok.EncodeChat(msgs, true)
	end, _ := tok.SpecialID("<|end|>")
	n := 0
	for _, id := range ids {
		if id == end {
			n++
		}
	}
	stops, _ := tok.StopIDs()
	fmt.Println("<|end|> tokens:", n, "stop ids:", stops)
	// Output:
	// "<|system|>\nBe brief.<|end|>\n<|user|>\nHi <|end|><|end|>\n<|assistant|>\n"
	// <|end|> tokens: 2 stop ids: [4 0]
}

func ExampleDecoder() {
	tok, err := tokenizer.LoadFile("../models/tokenizers/neuro-bpe-1k.json")
	if err != nil {
		log.Fatal(err)
	}
	dec := tok.NewDecoder()
	for _, id := range tok.Encode("né 😀!") {
		s, err := dec.Next(id)
		if err != nil {
			log.Fatal(err)
		}
		if s != "" {
			fmt.Printf("%q ", s)
		}
	}
	fmt.Printf("%q\n", dec.Flush())
	// Output: "n" "é" " " "😀" "!" ""
}
