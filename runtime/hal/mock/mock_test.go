package mock_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/runtime/hal/haltest"
	"github.com/neuro-go/neuro/runtime/hal/mock"
	"github.com/neuro-go/neuro/snn"
)

func open(t *testing.T) *mock.Device {
	t.Helper()
	base, err := hal.Open("cpu", hal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return mock.New(base, nil)
}

// run presents the one-hot tokens to slot of in and returns the argmax
// of the output after each.
func run(t *testing.T, in hal.Instance, slot int, tokens []int) []int {
	t.Helper()
	n, m := in.Inputs()[0].Size, in.Outputs()[0].Size
	x := make([]float32, in.Batch()*n)
	var out []int
	for _, tok := range tokens {
		clear(x)
		x[slot*n+tok] = 1
		if err := in.Step(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		y := in.Output(0)[slot*m : (slot+1)*m]
		out = append(out, slices.Index(y, slices.Max(y)))
	}
	return out
}

func TestSameInputsSameOutputsInAnySlot(t *testing.T) {
	d := open(t)
	if d.Capabilities().Name != "cpu" {
		t.Fatalf("the mock does not take its base's name: %+v", d.Capabilities())
	}
	p := haltest.Program(6, 3)
	alone, err := d.Load(context.Background(), p, 1)
	if err != nil {
		t.Fatal(err)
	}
	batched, err := d.Load(context.Background(), p, 4)
	if err != nil {
		t.Fatal(err)
	}
	tokens := []int{1, 4, 2, 0, 5, 3, 3, 1}
	a := run(t, alone, 0, tokens)
	b := run(t, batched, 2, tokens)
	if !slices.Equal(a, b) {
		t.Fatalf("alone %v, in slot 2 of 4 %v", a, b)
	}
	if c := run(t, alone, 0, []int{5, 5, 5, 5, 5, 5, 5, 5}); slices.Equal(a, c) {
		t.Fatalf("other inputs gave the same outputs %v", c)
	}
	if err := alone.Reset(0); err != nil {
		t.Fatal(err)
	}
	if again := run(t, alone, 0, tokens); !slices.Equal(a, again) {
		t.Fatalf("after Reset %v, want %v", again, a)
	}
}

func TestRefusesWhatTheBaseWould(t *testing.T) {
	d := open(t)
	in, err := d.Load(context.Background(), haltest.Program(6, 3), 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Step(context.Background(), make([]float32, 5)); !errors.Is(err, snn.ErrInputSize) {
		t.Errorf("a short input: %v", err)
	}
	if err := in.Reset(2); err == nil {
		t.Error("slot 2 of 2 reset")
	}
	if _, err := d.Load(context.Background(), &compile.Program{}, 1); err == nil {
		t.Error("a program without a graph loaded")
	}
	if _, err := d.Load(context.Background(), haltest.Program(6, 3), 0); err == nil {
		t.Error("batch 0 loaded")
	}
	in.Close()
	if err := in.Step(context.Background(), make([]float32, 12)); !errors.Is(err, hal.ErrClosed) {
		t.Errorf("step after Close: %v", err)
	}
}

// With Tokens, every output chosen is one of them.
func TestTokensBoundTheOutputs(t *testing.T) {
	base, err := hal.Open("cpu", hal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tokens := []int{4, 2}
	in, err := mock.New(base, &mock.Options{Tokens: tokens}).Load(context.Background(), haltest.Program(6, 6), 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range run(t, in, 1, []int{1, 4, 2, 0, 5, 3, 3, 1}) {
		if !slices.Contains(tokens, id) {
			t.Fatalf("output %d is not one of %v", id, tokens)
		}
	}
}
