package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/snn"
)

// faultyDevice wraps the CPU device and fails every instance's Step once
// a shared countdown reaches zero: a fault injector for the layer below,
// in the manner of pebble's errorfs.
type faultyDevice struct {
	*cpu.Device
	left *atomic.Int64
}

func (d faultyDevice) Capabilities() hal.Capabilities {
	c := d.Device.Capabilities()
	c.Name = "faulty"
	return c
}

func (d faultyDevice) Load(ctx context.Context, p *compile.Program, batch int) (hal.Instance, error) {
	in, err := d.Device.Load(ctx, p, batch)
	if err != nil {
		return nil, err
	}
	return &faultyInstance{Instance: in, left: d.left}, nil
}

type faultyInstance struct {
	hal.Instance
	left *atomic.Int64
}

var errInjected = errors.New("injected device fault")

func (f *faultyInstance) Step(ctx context.Context, inputs ...[]float32) error {
	if f.left.Add(-1) < 0 {
		return errInjected
	}
	return f.Instance.Step(ctx, inputs...)
}

func (f *faultyInstance) Counters() snn.Counters { return f.Instance.Counters() }

var faultySteps atomic.Int64

func init() {
	hal.Register("faulty", func(hal.Config) (hal.Device, error) {
		d, err := cpu.New(nil)
		return faultyDevice{d, &faultySteps}, err
	})
}

// A device that fails mid-generation fails the requests on it, queued ones
// included, with ErrDeviceUnavailable; none hangs; the deployment reports
// itself failed and refuses new work.
func TestDeviceFailureFailsRequests(t *testing.T) {
	faultySteps.Store(200)
	rt := New(&Options{QueueDepth: 16})
	defer rt.Close()
	if err := rt.RegisterModel(&Model{ID: "test-lm", Program: testProgram(testTok.VocabSize(), 48, 1), Tokenizer: testTok}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Deploy(context.Background(), DeploymentSpec{ID: "f", Model: "test-lm", Device: "faulty", MaxBatch: 2}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = rt.Generate(context.Background(), &Request{Model: "test-lm", Prompt: "Once upon a time", MaxTokens: 100}, nil)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("requests hang after a device failure")
	}
	for i, err := range errs {
		if !errors.Is(err, ErrDeviceUnavailable) {
			t.Errorf("request %d: %v, want ErrDeviceUnavailable", i, err)
		}
	}
	d, _ := rt.Deployment("f")
	if d.Status() != StatusFailed || !errors.Is(d.Failure(), ErrDeviceUnavailable) {
		t.Fatalf("deployment %s, failure %v", d.Status(), d.Failure())
	}
	if _, err := rt.Generate(context.Background(), &Request{Model: "test-lm", Prompt: "x"}, nil); !errors.Is(err, ErrDeviceUnavailable) {
		t.Fatalf("after the failure: %v", err)
	}
}
