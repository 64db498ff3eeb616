// Package split encodes the project corpus as the neuro-1 models were
// trained and evaluated on it: every file models/tokenizers/heldout.json
// lists, checked against its size and SHA-256 and split where that file
// says (bytes [0, train_bytes) are the training part, the rest is held
// out), and grouped into sources.
//
// Plain text files are one document each, followed by <|endoftext|>.
// Dialogue .jsonl files are rendered conversation by conversation with the
// project chat template (tokenizer.NeuroChatTemplate): the first speaker of
// a conversation is the user, the other the assistant (Taskmaster's "user"
// and "assistant" keep their roles); each conversation is followed by
// <|endoftext|>. The 58 books under extra/*.txt are one source, "books";
// every other file is its own source, named after the file.
//
// The command tokenize writes what Encode returns as the token files that
// train.py reads; the held-out test of this module encodes the held-out
// parts itself.
package split
