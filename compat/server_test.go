package compat

import (
	"context"
	"testing"
	"time"

	"github.com/neuro-go/neuro/httpapi/client/clienttest"
	"github.com/neuro-go/neuro/runtime"
)

// start runs a server on 127.0.0.1: the real handler over small
// random-weight models, or mock mode.
func start(t *testing.T, mock bool) *clienttest.Server {
	t.Helper()
	srv, err := clienttest.Start(context.Background(), &clienttest.Options{Mock: mock, NoLoihi: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func modes(t *testing.T, f func(t *testing.T, srv *clienttest.Server, mock bool)) {
	for _, mock := range []bool{false, true} {
		name := "real"
		if mock {
			name = "mock"
		}
		t.Run(name, func(t *testing.T) { f(t, start(t, mock), mock) })
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitAbandoned checks that a stream a client broke off stopped the
// generation: the deployment has no active or queued sequence within a
// few seconds, and the caller's telemetry counts the request as failed
// after far fewer tokens than it would have run to.
func waitAbandoned(t *testing.T, srv *clienttest.Server, deployment string) {
	t.Helper()
	d, err := srv.Runtime.Deployment(deployment)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		active, queued := d.Load()
		if active == 0 && queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still has %d active and %d queued sequences 5 s after the client left", deployment, active, queued)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The telemetry record is written when the handler returns, just
	// after the slot is freed.
	for {
		sum, err := srv.Runtime.Telemetry().Summarize(runtime.Filter{Deployment: deployment})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Requests.Errors == 1 {
			if sum.Tokens.Completion >= 1024 {
				t.Fatalf("the abandoned request generated %d tokens", sum.Tokens.Completion)
			}
			t.Logf("abandoned after %d tokens", sum.Tokens.Completion)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the abandoned request is not counted as failed: %+v", sum.Requests)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func endless(t *testing.T) map[string]float64 {
	b, err := clienttest.EndlessBias()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
