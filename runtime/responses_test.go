package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/neuro-go/neuro/tokenizer"
)

func testStored(owner string, data int) *StoredResponse {
	return &StoredResponse{
		ID: NewResponseID("resp_"), Owner: owner, Created: time.Unix(1_700_000_000, 0).UTC(), Model: "test-lm", Deployment: "test-cpu",
		Messages: []tokenizer.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}},
		Object:   json.RawMessage(`{"object":"response"}`),
		State:    &State{Model: "test-lm", Deployment: "test-cpu", Device: "cpu", Tokens: []int{1, 2, 3}, Data: bytes.Repeat([]byte{7}, data)},
	}
}

// clock is a settable Options.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestStoredResponses: a stored response is its owner's only, counts
// against the owner's quota of responses and bytes, is gone after its
// TTL or its deletion, and with a data directory survives a restart.
func TestStoredResponses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	opts := &Options{DataDir: dir, Now: clk.Now, Quota: Quota{Responses: 3, ResponseBytes: 20 << 10, ResponseTTL: time.Hour}}
	rt := New(opts)
	a := testStored("alice", 4<<10)
	if err := rt.StoreResponse(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := rt.Response(ctx, a.ID, "alice")
	if err != nil || !bytes.Equal(got.State.Data, a.State.Data) || got.Messages[1].Content != "hello" || string(got.Object) != string(a.Object) {
		t.Fatalf("read back: %v %+v", err, got)
	}
	if _, err := rt.Response(ctx, a.ID, "bob"); !errors.Is(err, ErrResponseNotFound) {
		t.Fatalf("another owner's: %v", err)
	}
	if err := rt.DeleteResponse(ctx, a.ID, "bob"); !errors.Is(err, ErrResponseNotFound) {
		t.Fatalf("another owner deleting: %v", err)
	}

	// Bytes: 4 KiB and 12 KiB fit in 20 KiB; another 8 KiB does not.
	b := testStored("alice", 12<<10)
	if err := rt.StoreResponse(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := rt.StoreResponse(ctx, testStored("alice", 8<<10)); !errors.Is(err, ErrQuota) {
		t.Fatalf("over the bytes quota: %v", err)
	}
	// Count: a third fits, a fourth does not; bob's quota is his own.
	if err := rt.StoreResponse(ctx, testStored("alice", 10)); err != nil {
		t.Fatal(err)
	}
	if err := rt.CheckResponseQuota("alice"); !errors.Is(err, ErrQuota) {
		t.Fatalf("over the count quota: %v", err)
	}
	if err := rt.StoreResponse(ctx, testStored("bob", 10)); err != nil {
		t.Fatal(err)
	}

	// A restart keeps them.
	rt2 := New(opts)
	if _, err := rt2.Response(ctx, b.ID, "alice"); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	if n, _ := rt2.ResponseStats(); n != 4 {
		t.Fatalf("%d responses after a restart, want 4", n)
	}
	if err := rt2.DeleteResponse(ctx, b.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt2.Response(ctx, b.ID, "alice"); !errors.Is(err, ErrResponseNotFound) {
		t.Fatalf("deleted: %v", err)
	}
	if err := rt2.StoreResponse(ctx, testStored("alice", 10)); err != nil {
		t.Fatalf("after a deletion the quota has room: %v", err)
	}

	// The TTL: an hour later they are gone, and their room is free.
	clk.add(time.Hour + time.Second)
	if _, err := rt2.Response(ctx, a.ID, "alice"); !errors.Is(err, ErrResponseNotFound) {
		t.Fatalf("expired: %v", err)
	}
	for range 3 {
		if err := rt2.StoreResponse(ctx, testStored("alice", 10)); err != nil {
			t.Fatalf("after expiry: %v", err)
		}
	}
	if rt3 := New(opts); func() int { n, _ := rt3.ResponseStats(); return n }() != 3 {
		t.Fatal("expired responses were loaded again after a restart")
	}
}

func FuzzStoredResponse(f *testing.F) {
	b, _ := testStored("alice", 40).MarshalBinary()
	f.Add(b)
	noState := testStored("bob", 0)
	noState.State = nil
	b2, _ := noState.MarshalBinary()
	f.Add(b2)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := UnmarshalStoredResponse(b)
		if err != nil {
			return
		}
		again, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		s2, err := UnmarshalStoredResponse(again)
		if err != nil || s2.ID != s.ID || (s.State != nil && !bytes.Equal(s2.State.Data, s.State.Data)) {
			t.Fatalf("a decoded response does not survive encoding again: %v", err)
		}
	})
}
