package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuro-go/neuro/runtime"
)

func TestRetrySendsAgainWhatGotNoAnswer(t *testing.T) {
	for _, c := range []struct {
		name  string
		err   error
		tries int // how many tries retry makes when each fails with err
	}{
		{"no answer", context.DeadlineExceeded, 3},
		{"no responders", nats.ErrNoResponders, 1},
		{"cluster unavailable", fmt.Errorf("bucket: %w", &jetstream.APIError{Code: 503, ErrorCode: 10008}), 3},
		{"jetstream off", jetstream.ErrJetStreamNotEnabled, 1},
		{"bad config", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamNameInUse}, 1},
		{"other", errors.New("disk full"), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			tries := 0
			err := retry(context.Background(), func(ctx context.Context) error {
				if _, ok := ctx.Deadline(); !ok {
					t.Fatal("a try has no deadline of its own")
				}
				tries++
				if tries < 3 {
					return c.err
				}
				return nil
			})
			if tries != c.tries {
				t.Fatalf("%d tries, want %d", tries, c.tries)
			}
			if (c.tries == 1) != (err != nil) {
				t.Fatalf("retry returned %v after %d tries", err, tries)
			}
		})
	}
}

func TestJoinWithoutJetStream(t *testing.T) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	rt := runtime.New(nil)
	defer rt.Close()
	_, err = Join(ctx, nc, rt, &Options{Name: "a"})
	if err == nil || !strings.Contains(err.Error(), "JetStream") {
		t.Fatalf("got %v, want an error that names JetStream", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the error took %v", d)
	}
}

func TestRetryEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := retry(ctx, func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("retry outlived its context by %v", d)
	}
}
