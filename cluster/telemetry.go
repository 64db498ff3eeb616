package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuro-go/neuro/runtime"
)

// Telemetry is the cluster's: every node forwards the records it makes
// to one replicated stream, and every node's store reads the whole
// stream back, so that any node gives the same totals (once it has read
// what the others wrote, a few milliseconds on a LAN).
func (n *Node) Telemetry() *runtime.Telemetry { return n.tel }

var telSeq atomic.Uint64

func (n *Node) startTelemetry(ctx context.Context) error {
	if err := n.readTelemetry(ctx); err != nil {
		return err
	}
	forward := func(rec runtime.Record) {
		select {
		case n.telq <- rec:
		default:
			n.log.Warn("telemetry queue full: a record is lost", "principal", rec.Principal)
		}
	}
	n.rt.Telemetry().Forward(forward)
	n.tel.Forward(forward)
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer func() { n.telRead.Load().(jetstream.ConsumeContext).Stop() }()
		for {
			select {
			case <-n.ctx.Done():
				return
			case rec := <-n.telq:
				n.publishRecord(n.ctx, rec)
			}
		}
	}()
	return nil
}

// publishRecord writes a record to the stream, retrying until it is
// stored or ctx ends; the message id makes a retry after a lost
// acknowledgement harmless (JetStream drops the duplicate).
func (n *Node) publishRecord(ctx context.Context, rec runtime.Record) {
	b, _ := json.Marshal(rec)
	m := nats.NewMsg(n.subject("telemetry", n.o.Name))
	m.Data = b
	m.Header.Set(jetstream.MsgIDHeader, n.o.Name+"-"+strconv.FormatInt(time.Now().UnixNano(), 36)+"-"+strconv.FormatUint(telSeq.Add(1), 36))
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := n.js.PublishMsg(pctx, m)
		cancel()
		if err == nil || ctx.Err() != nil {
			return
		}
		n.log.Debug("telemetry publish failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// flushTelemetry publishes what is queued before the node leaves, for
// at most 2 s: a node cut off from NATS must still leave.
func (n *Node) flushTelemetry() {
	ctx, cancel := context.WithTimeout(n.ctx, 2*time.Second)
	defer cancel()
	for ctx.Err() == nil && !n.nc.IsClosed() {
		select {
		case rec := <-n.telq:
			n.publishRecord(ctx, rec)
		default:
			return
		}
	}
}

// readTelemetry reads the stream into the node's store from the record
// after the last one read.
func (n *Node) readTelemetry(ctx context.Context) error {
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy}
	if last := n.telSeq.Load(); last > 0 {
		cfg = jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: last + 1}
	}
	cons, err := n.js.OrderedConsumer(ctx, n.bucket("telemetry"), cfg)
	if err != nil {
		return fmt.Errorf("cluster: reading telemetry: %w", err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		md, err := m.Metadata()
		if err != nil || md.Sequence.Stream <= n.telSeq.Load() {
			return
		}
		n.telSeq.Store(md.Sequence.Stream)
		if rec, err := decodeRecord(m.Data()); err == nil {
			n.tel.Add(rec)
		}
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		n.log.Debug("reading telemetry", "err", err)
	}))
	if err != nil {
		return fmt.Errorf("cluster: reading telemetry: %w", err)
	}
	n.telRead.Store(cc)
	return nil
}

// decodeRecord reads a telemetry record a node wrote to the stream.
func decodeRecord(b []byte) (runtime.Record, error) {
	var rec runtime.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return runtime.Record{}, fmt.Errorf("cluster: telemetry record: %w", err)
	}
	return rec, nil
}

// checkTelemetry reads the stream again when it has held newer records
// than were read for a LeaseTTL (a reader can stall when its NATS
// server is lost).
func (n *Node) checkTelemetry() {
	ctx, cancel := n.opCtx()
	defer cancel()
	st, err := n.js.Stream(ctx, n.bucket("telemetry"))
	if err != nil {
		return
	}
	info, err := st.Info(ctx)
	if err != nil {
		return
	}
	if info.State.LastSeq <= n.telSeq.Load() {
		n.telBehind = time.Time{}
		return
	}
	if n.telBehind.IsZero() {
		n.telBehind = time.Now()
		return
	}
	if time.Since(n.telBehind) > n.o.LeaseTTL {
		n.log.Warn("reading telemetry stalled; reading it again")
		n.telBehind = time.Time{}
		old := n.telRead.Load().(jetstream.ConsumeContext)
		if err := n.readTelemetry(ctx); err == nil {
			old.Stop()
		}
	}
}
