package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuro-go/neuro/cluster"
	"github.com/neuro-go/neuro/runtime"
)

// TestTelemetryBatches: a node writes the records that come together as
// a few stream messages, not one each, every node counts all of them,
// and the records queued when a node leaves are written before it goes.
func TestTelemetryBatches(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS cluster")
	}
	tc := startCluster(t)
	a, b := tc.join("a"), tc.join("b")
	js, _ := jetstream.New(b.nc)
	ctx := context.Background()
	messages := func() uint64 {
		t.Helper()
		s, err := js.Stream(ctx, cluster.TelemetryStream(b.node))
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	records := func(who string, n int) []runtime.Record {
		recs := make([]runtime.Record, n)
		for i := range recs {
			recs[i] = runtime.Record{At: time.Now(), Principal: who, Model: "m", Endpoint: "chat", PromptTokens: 3, CompletionTokens: 5}
		}
		return recs
	}
	counted := func(who string, want int) func() error {
		return func() error {
			s, err := b.node.Telemetry().Summarize(runtime.Filter{Principal: who})
			if err != nil {
				return err
			}
			if s.Requests.Total != want || s.Tokens.Completion != 5*want {
				return fmt.Errorf("%d requests and %d completion tokens, want %d and %d", s.Requests.Total, s.Tokens.Completion, want, 5*want)
			}
			return nil
		}
	}

	before := messages()
	cluster.QueueRecords(a.node, records("batched", 200))
	eventually(t, 5*time.Second, "200 records counted on b", counted("batched", 200))
	if wrote := messages() - before; wrote > 20 {
		t.Errorf("200 records queued at once took %d stream messages", wrote)
	}

	cluster.QueueRecords(a.node, records("leaving", 7))
	a.node.Close()
	eventually(t, 5*time.Second, "the leaving node's last records counted on b", counted("leaving", 7))
}
