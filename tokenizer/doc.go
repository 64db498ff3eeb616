// Package tokenizer is a byte-level BPE tokenizer as GPT-2 and the Hugging
// Face tokenizers library define it, with the tokenizer.json format, a
// trainer, a streaming decoder and chat templates.
//
// # Overview
//
// A Tokenizer comes from Load or LoadFile (a Hugging Face tokenizer.json
// whose model is a byte-level BPE), LoadGPT2 (OpenAI's encoder.json and
// vocab.bpe) or Train (learn merges from text). Encode turns text into ids
// and Decode turns ids back into text; EncodeSpecial also recognises
// special tokens written in the text, for text that the program itself
// wrote. A Decoder turns ids into text one at a time for streaming, holding
// back the bytes of an unfinished UTF-8 character. A ChatTemplate, plain
// data stored in tokenizer.json under "neuro_chat_template", renders
// messages into a prompt; EncodeChat encodes them so that special tokens
// typed by a user stay text. Save and WriteJSON write tokenizer.json files
// that Hugging Face's libraries load and encode identically.
//
// Encoding splits the text at added tokens, then into pre-tokens with the
// GPT-2 pattern (GPT2Pattern, implemented as a scanner in linear time),
// maps each byte to its byte-level symbol and applies the merges by rank,
// lowest first and leftmost among equals.
//
// The project's own tokenizers (models/tokenizers) are trained by
// go run ./tokenizer/internal/traincorpus; their special tokens are
// NeuroSpecialTokens and their template NeuroChatTemplate.
//
// # Invariants
//
//   - Decode(Encode(s)) == s for every string s, including invalid UTF-8:
//     encoding works on bytes, and an invalid byte is one "other" character
//     for the pre-tokenizer. The same holds for EncodeSpecial, and for the
//     concatenation of a Decoder's outputs followed by Flush.
//   - Decode returns the tokens' bytes verbatim and skips ids outside the
//     vocabulary; a Decoder returns only whole characters, except bytes that
//     can never become valid UTF-8, which it passes on at once.
//   - Encode never recognises special tokens; non-special added tokens are
//     recognised by every encoding function.
//   - Encoding time is linear in the length of the text (O(n log n) inside
//     a single very long pre-token), and encoding allocates nothing but the
//     result once its word cache is warm.
//   - Load never panics on any input: a malformed file gives a *FieldError
//     naming the field and wrapping ErrFormat, ErrUnsupported or
//     ErrTooLarge, and nothing larger than MaxVocabSize ids is allocated.
//   - A Tokenizer is immutable after construction (except SetChatTemplate)
//     and safe for concurrent use.
package tokenizer
