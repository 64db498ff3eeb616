package tokenizer

import (
	"errors"
	"fmt"
)

// Sentinel errors that callers can branch on with errors.Is.
var (
	// ErrFormat is wrapped by every error about a malformed tokenizer file.
	ErrFormat = errors.New("tokenizer: malformed tokenizer file")
	// ErrUnsupported is wrapped when a tokenizer file is well formed but uses
	// a feature this package does not implement (a normalizer, a WordPiece
	// model, BPE dropout, ...).
	ErrUnsupported = errors.New("tokenizer: unsupported tokenizer feature")
	// ErrUnknownID is wrapped when a token id is outside the vocabulary.
	ErrUnknownID = errors.New("tokenizer: unknown token id")
	// ErrUnknownRole is wrapped when a chat message has a role that the
	// template does not know.
	ErrUnknownRole = errors.New("tokenizer: unknown chat role")
	// ErrTooLarge is wrapped when a vocabulary or file exceeds the limits.
	ErrTooLarge = errors.New("tokenizer: too large")
)

// FieldError reports a problem with one field of a tokenizer file. Field is a
// JSON path such as "model.merges[12]" or "added_tokens[3].id".
type FieldError struct {
	Field string
	Msg   string
	Err   error // ErrFormat, ErrUnsupported or ErrTooLarge
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("tokenizer: %s: %s", e.Field, e.Msg)
}

func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(kind error, field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...), Err: kind}
}
