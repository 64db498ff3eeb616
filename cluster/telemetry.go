package cluster

import (
	"bytes"
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
// what the others wrote: telemetryBatch and a few milliseconds on a
// LAN).
func (n *Node) Telemetry() *runtime.Telemetry { return n.tel }

// A node writes its records to the stream in batches: the first record
// waits at most telemetryBatch for others to join it, and a batch holds
// at most telemetryBatchBytes of JSON. A replicated write per batch
// rather than per request keeps the stream's work, which shares the
// node's processors with the calls it routes and serves, small beside
// them.
const (
	telemetryBatch      = 20 * time.Millisecond
	telemetryBatchBytes = 256 << 10
)

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
	n.telDone = make(chan struct{})
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer close(n.telDone)
		defer func() { n.telRead.Load().(jetstream.ConsumeContext).Stop() }()
		n.writeTelemetry()
	}()
	return nil
}

// writeTelemetry writes the queued records in batches until the node
// stops, or until it leaves: then what is queued is written within 2 s,
// as a node cut off from NATS must still leave.
func (n *Node) writeTelemetry() {
	timer := time.NewTimer(telemetryBatch)
	timer.Stop()
	var batch []byte
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-n.telStop:
			ctx, cancel := context.WithTimeout(n.ctx, 2*time.Second)
			defer cancel()
			for {
				select {
				case rec := <-n.telq:
					if batch = appendRecord(batch, rec); len(batch) < telemetryBatchBytes {
						continue
					}
				default:
				}
				if len(batch) == 0 || ctx.Err() != nil || n.nc.IsClosed() {
					return
				}
				n.publishRecords(ctx, append(batch, ']'))
				batch = batch[:0]
			}
		case rec := <-n.telq:
			if len(batch) == 0 {
				timer.Reset(telemetryBatch)
			}
			if batch = appendRecord(batch, rec); len(batch) < telemetryBatchBytes {
				continue
			}
			timer.Stop()
		case <-timer.C:
			if len(batch) == 0 {
				continue
			}
		}
		n.publishRecords(n.ctx, append(batch, ']'))
		batch = batch[:0]
	}
}

// appendRecord adds a record to a batch being written as a JSON array,
// its closing bracket not yet written.
func appendRecord(batch []byte, rec runtime.Record) []byte {
	b, _ := json.Marshal(rec)
	if len(batch) == 0 {
		batch = append(batch, '[')
	} else {
		batch = append(batch, ',')
	}
	return append(batch, b...)
}

// publishRecords writes a batch to the stream, retrying until it is
// stored or ctx ends; the message id makes a retry after a lost
// acknowledgement harmless (JetStream drops the duplicate).
func (n *Node) publishRecords(ctx context.Context, batch []byte) {
	m := nats.NewMsg(n.subject("telemetry", n.o.Name))
	m.Data = batch
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

// flushTelemetry has what is queued written before the node leaves.
func (n *Node) flushTelemetry() {
	if n.telDone == nil {
		return
	}
	close(n.telStop)
	<-n.telDone
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
		if recs, err := decodeRecords(m.Data()); err == nil {
			for _, rec := range recs {
				n.tel.Add(rec)
			}
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

// decodeRecords reads a message a node wrote to the telemetry stream:
// a batch of records as a JSON array, or one record alone.
func decodeRecords(b []byte) ([]runtime.Record, error) {
	var recs []runtime.Record
	if b = bytes.TrimLeft(b, " \t\r\n"); len(b) > 0 && b[0] == '{' {
		recs = make([]runtime.Record, 1)
		if err := json.Unmarshal(b, &recs[0]); err != nil {
			return nil, fmt.Errorf("cluster: telemetry record: %w", err)
		}
		return recs, nil
	}
	if err := json.Unmarshal(b, &recs); err != nil {
		return nil, fmt.Errorf("cluster: telemetry records: %w", err)
	}
	return recs, nil
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
