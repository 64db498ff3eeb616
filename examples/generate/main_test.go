package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestGenerate(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-chat", "Hello! How are you?", "-max-tokens", "12", "-temperature", "0"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "[neuro-1-lite on cpu:") || strings.Index(out.String(), "[neuro-1-lite") < 2 {
		t.Fatalf("output %q", out.String())
	}
	if err := run(nil, &out); err == nil || !strings.Contains(err.Error(), "-chat") {
		t.Fatalf("no text: %v", err)
	}
	if err := run([]string{"-model", "gpt-4", "-prompt", "x"}, &out); err == nil || !strings.Contains(err.Error(), "neuro-1-lite") {
		t.Fatalf("unknown model: %v", err)
	}
}
