package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/neuro-go/neuro/cluster"
	"github.com/neuro-go/neuro/compile"
	_ "github.com/neuro-go/neuro/compile/onnx" // the network the tests compile
	_ "github.com/neuro-go/neuro/models/lima"  // and the language model
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/tokenizer"
)

const owner = "alice"

func digitsRun(dep string) *runtime.RunRequest {
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(i%7) / 7
	}
	return &runtime.RunRequest{Deployment: dep, Samples: []runtime.Sample{{Vector: x}}, Seed: 7, Principal: owner, Endpoint: "run"}
}

func chatRequest(dep string) *runtime.Request {
	seed := int64(3)
	return &runtime.Request{Deployment: dep, Messages: []tokenizer.Message{{Role: "user", Content: "hello there"}},
		Sampling: runtime.Sampling{Temperature: 0.8, Seed: &seed}, MaxTokens: 12, Principal: owner, Endpoint: "chat"}
}

// TestCluster runs one cluster through the scenarios in order: each
// leaves the cluster as the next needs it (a killed node stays dead).
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three NATS servers")
	}
	tc := startCluster(t)
	a, b, c := tc.join("a"), tc.join("b"), tc.join("c")
	ctx := context.Background()

	var netID string
	var want *runtime.RunResult
	t.Run("compile on a, deploy from b, run through c", func(t *testing.T) {
		data, err := os.ReadFile("../compile/testdata/digits/mlp.onnx")
		if err != nil {
			t.Fatal(err)
		}
		nw, err := a.node.Compile(ctx, &runtime.CompileRequest{Format: "onnx", Data: data, Name: "digits", Owner: owner,
			Import: compile.ImportOptions{Conversion: compile.ConversionOptions{Timesteps: 32}}})
		if err != nil {
			t.Fatal(err)
		}
		netID = nw.ID
		eventually(t, 5*time.Second, "the network registered on b and c", func() error {
			for _, n := range []*testNode{b, c} {
				if _, err := n.node.Model(netID); err != nil {
					return err
				}
			}
			return nil
		})
		// int8 weights: the device's options travel with the desired state.
		int8 := hal.Config{Options: map[string]string{"precision": "int8"}}
		info, err := b.node.CreateDeployment(ctx, runtime.DeploymentSpec{ID: "digits.1", Model: netID, Device: "cpu", Config: int8, MaxBatch: 4, Owner: owner}, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if info.Status != runtime.StatusReady || info.Node == "" || info.Device.Model != "int8 simulator" {
			t.Fatalf("deployment: status %s on node %q, device %+v", info.Status, info.Node, info.Device)
		}
		eventually(t, 5*time.Second, "c sees the deployment ready", func() error {
			ci, err := c.node.DeploymentInfo("digits.1")
			if err == nil && (ci.Status != runtime.StatusReady || ci.Node != info.Node || ci.Device.Model != "int8 simulator") {
				err = fmt.Errorf("c sees %s on %q, device %+v", ci.Status, ci.Node, ci.Device)
			}
			return err
		})
		want, err = c.node.Run(ctx, digitsRun("digits.1"))
		if err != nil {
			t.Fatal(err)
		}
		direct, err := tc.nodes[info.Node].rt.Run(ctx, digitsRun("digits.1"))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want.Outputs, direct.Outputs) {
			t.Fatalf("routed run %+v, direct run %+v", want.Outputs, direct.Outputs)
		}
		if err := b.node.DeleteNetwork(netID, owner); !errors.Is(err, runtime.ErrInUse) {
			t.Fatalf("deleting a deployed network: %v, want ErrInUse", err)
		}
	})

	t.Run("chat stream routed across nodes", func(t *testing.T) {
		if _, err := c.node.CreateDeployment(ctx, runtime.DeploymentSpec{ID: "chat-a", Model: "neuro-1-lite", Node: "a", Owner: owner}, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		var events []string
		res, err := c.node.Generate(ctx, chatRequest("chat-a"), func(ev runtime.Event) error {
			events = append(events, ev.Text)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		direct, err := a.rt.Generate(ctx, chatRequest("chat-a"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) < 2 || strings.Join(events, "") != direct.Choices[0].Text || res.Choices[0].Text != direct.Choices[0].Text {
			t.Fatalf("routed %d events %q, result %q; direct %q", len(events), events, res.Choices[0].Text, direct.Choices[0].Text)
		}
		if res.Deployment != "chat-a" || res.Usage != direct.Usage {
			t.Fatalf("routed result %s %+v, direct %+v", res.Deployment, res.Usage, direct.Usage)
		}
		// The prompt-token limit travels with the request: the serving
		// node refuses a longer prompt. (Another caller's, so that the
		// totals below count owner's requests alone.)
		long := chatRequest("chat-a")
		long.MaxPromptTokens, long.Principal = 1, "carol"
		if _, err := b.node.Generate(ctx, long, nil); !errors.Is(err, runtime.ErrContextLength) || !strings.HasSuffix(err.Error(), "the limit is 1") {
			t.Fatalf("a prompt over MaxPromptTokens routed: %v, want ErrContextLength", err)
		}
		// Several prompts are one call, answered as on the serving node.
		multi := chatRequest("chat-a")
		multi.Messages, multi.Prompts, multi.N, multi.Principal = nil, []string{"Once upon a time", "The"}, 2, "carol"
		routed, err := b.node.Generate(ctx, multi, nil)
		if err != nil {
			t.Fatal(err)
		}
		direct, err = a.rt.Generate(ctx, multi, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(routed.Choices) != 4 || len(routed.Prompts) != 2 || routed.Usage != direct.Usage {
			t.Fatalf("routed %d choices, %d prompts, usage %+v; direct usage %+v", len(routed.Choices), len(routed.Prompts), routed.Usage, direct.Usage)
		}
		for i, ch := range routed.Choices {
			if ch.Index != i || ch.Text != direct.Choices[i].Text {
				t.Fatalf("routed choice %d: %d %q, direct %q", i, ch.Index, ch.Text, direct.Choices[i].Text)
			}
		}
		bad := chatRequest("chat-a")
		bad.Sampling.Temperature = 5
		var pe *runtime.ParamError
		if _, err := b.node.Generate(ctx, bad, nil); !errors.As(err, &pe) || pe.Param != "temperature" {
			t.Fatalf("a bad request routed: %v, want a ParamError on temperature", err)
		}
	})

	t.Run("a language model compiled on b chats through a", func(t *testing.T) {
		data, err := os.ReadFile("../models/lima/testdata/tiny_lm.pt")
		if err != nil {
			t.Fatal(err)
		}
		tok, err := tokenizer.Train(ctx, &tokenizer.TrainOptions{VocabSize: 261, SpecialTokens: tokenizer.NeuroSpecialTokens()}, strings.NewReader("a b"))
		if err != nil {
			t.Fatal(err)
		}
		var tj strings.Builder
		if err := tok.WriteJSON(&tj); err != nil {
			t.Fatal(err)
		}
		nw, err := b.node.Compile(ctx, &runtime.CompileRequest{Format: "pytorch", Data: data, Name: "lm", Owner: owner,
			LanguageModel: &runtime.LanguageModel{Tokenizer: []byte(tj.String()), ChatTemplate: "neuro"}})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, "the language model registered with its tokenizer on a and c", func() error {
			for _, n := range []*testNode{a, c} {
				m, err := n.node.Model(nw.ID)
				if err != nil {
					return err
				}
				if !m.IsLanguageModel() || m.Tokenizer.ChatTemplate() == nil {
					return fmt.Errorf("%s registered it without its tokenizer or template", n.name)
				}
			}
			return nil
		})
		info, err := c.node.CreateDeployment(ctx, runtime.DeploymentSpec{ID: "lm.1", Model: nw.ID, Owner: owner}, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		routed, err := a.node.Generate(ctx, chatRequest("lm.1"), nil)
		if err != nil {
			t.Fatal(err)
		}
		direct, err := tc.nodes[info.Node].rt.Generate(ctx, chatRequest("lm.1"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if routed.Choices[0].Text != direct.Choices[0].Text || routed.Usage.CompletionTokens == 0 {
			t.Fatalf("routed %q, direct %q", routed.Choices[0].Text, direct.Choices[0].Text)
		}
		if err := a.node.Undeploy("lm.1", owner); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("routed calls make no subscriptions", func(t *testing.T) {
		// Every subscription is gossiped to every server: compare them on
		// all three, before and while 8 streams routed from c to a are
		// under way. (JetStream's own, on subjects that begin with '$',
		// come and go as its streams' replicas do.)
		before := subscriptions(tc)
		release, streaming := make(chan struct{}), make(chan struct{})
		var (
			first sync.Once
			once  [8]sync.Once
			errs  = make(chan error, 8)
		)
		for i := range 8 {
			go func() {
				req := chatRequest("chat-a")
				req.Principal = "carol"
				_, err := c.node.Generate(ctx, req, func(runtime.Event) error {
					once[i].Do(func() {
						first.Do(func() { close(streaming) })
						<-release
					})
					return nil
				})
				errs <- err
			}()
		}
		select {
		case <-streaming:
		case err := <-errs:
			close(release)
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // every call has been sent
		var added []string
		for subj, n := range subscriptions(tc) {
			if n > before[subj] {
				added = append(added, fmt.Sprintf("%s (%d)", subj, n-before[subj]))
			}
		}
		close(release)
		for range 8 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if len(added) > 0 {
			t.Fatalf("8 routed calls under way added subscriptions on the servers: %v", added)
		}
	})

	t.Run("telemetry totals equal on every node", func(t *testing.T) {
		eventually(t, 5*time.Second, "equal totals", func() error {
			var got []string
			for _, n := range []*testNode{a, b, c} {
				s, err := n.node.Telemetry().Summarize(runtime.Filter{Principal: owner})
				if err != nil {
					return err
				}
				got = append(got, fmt.Sprintf("%d/%d/%d/%d %v", s.Requests.Total, s.Requests.Errors, s.Tokens.Completion, s.Neuro.Timesteps, s.Requests.ByEndpoint))
			}
			// 2 runs (one routed, one direct), 4 generations (2 of the
			// compiled language model), 1 refused.
			if got[0] != got[1] || got[1] != got[2] || !strings.HasPrefix(got[0], "7/1/") {
				return fmt.Errorf("totals %v", got)
			}
			return nil
		})
	})

	t.Run("keys from the cluster", func(t *testing.T) {
		ka, err := a.node.Keys()
		if err != nil {
			t.Fatal(err)
		}
		kc, err := c.node.Keys()
		if err != nil {
			t.Fatal(err)
		}
		if err := ka.Add(ctx, "sk-1", "bob"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Second, "key on c", func() error {
			if p, ok := kc.Principal("sk-1"); !ok || p != "bob" {
				return errors.New("not yet")
			}
			return nil
		})
		if err := kc.Revoke(ctx, "sk-1"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Second, "revoked on a", func() error {
			if _, ok := ka.Principal("sk-1"); ok {
				return errors.New("still there")
			}
			return nil
		})
	})

	var victim string
	t.Run("a conversation started on one node continues on another", func(t *testing.T) {
		const who = "dave"
		turn := chatRequest("chat-a")
		turn.Principal, turn.SaveState, turn.Sampling.Temperature = who, true, 0
		first, err := b.node.Generate(ctx, turn, nil)
		if err != nil {
			t.Fatal(err)
		}
		if first.State == nil || len(first.State.Data) == 0 {
			t.Fatal("the routed turn brought back no state")
		}
		msgs := append(turn.Messages, tokenizer.Message{Role: "assistant", Content: runtime.ValidText(first.Choices[0].Text)},
			tokenizer.Message{Role: "user", Content: "and then?"})
		rec := &runtime.StoredResponse{ID: runtime.NewResponseID("resp_"), Owner: who, Created: time.Now(), Model: "neuro-1-lite",
			Deployment: "chat-a", Messages: msgs[:2], Object: []byte(`{}`), State: first.State}
		if err := b.node.StoreResponse(ctx, rec); err != nil {
			t.Fatal(err)
		}
		got, err := c.node.Response(ctx, rec.ID, who)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.node.Response(ctx, rec.ID, owner); !errors.Is(err, runtime.ErrResponseNotFound) {
			t.Fatalf("another owner's response: %v", err)
		}
		next := &runtime.Request{Deployment: "chat-a", Messages: msgs, MaxTokens: 8, Resume: got.State, Principal: who, NoCache: true}
		resumed, err := c.node.Generate(ctx, next, nil)
		if err != nil {
			t.Fatal(err)
		}
		whole := *next
		whole.Resume = nil
		direct, err := a.rt.Generate(ctx, &whole, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resumed.Choices[0].Text != direct.Choices[0].Text || resumed.Usage.CachedTokens != len(got.State.Tokens) || direct.Usage.CachedTokens != 0 {
			t.Fatalf("resumed on c %q (%d cached), whole on a %q", resumed.Choices[0].Text, resumed.Usage.CachedTokens, direct.Choices[0].Text)
		}
		// The quota holds cluster-wide, against two nodes storing at once.
		if err := a.node.SetQuota(ctx, runtime.Quota{Responses: 3}); err != nil {
			t.Fatal(err)
		}
		defer a.node.SetQuota(ctx, runtime.Quota{})
		errs := make(chan error, 6)
		for i := range 6 {
			go func() {
				n := []*testNode{b, c}[i%2]
				r := *rec
				r.ID = runtime.NewResponseID("resp_")
				errs <- n.node.StoreResponse(ctx, &r)
			}()
		}
		stored := 0
		for range 6 {
			if err := <-errs; err == nil {
				stored++
			} else if !errors.Is(err, runtime.ErrQuota) {
				t.Fatal(err)
			}
		}
		if stored != 2 {
			t.Fatalf("%d stored past a quota of 3 with 1 already stored, want 2", stored)
		}
		if err := c.node.DeleteResponse(ctx, rec.ID, who); err != nil {
			t.Fatal(err)
		}
		if err := b.node.CheckResponseQuota(who); err != nil {
			t.Fatalf("after a deletion: %v", err)
		}
	})

	t.Run("quotas hold against creates on three nodes at once", func(t *testing.T) {
		const who = "erin"
		if err := a.node.SetQuota(ctx, runtime.Quota{Networks: 2, Deployments: 2}); err != nil {
			t.Fatal(err)
		}
		defer a.node.SetQuota(ctx, runtime.Quota{})
		data, err := os.ReadFile("../compile/testdata/digits/mlp.onnx")
		if err != nil {
			t.Fatal(err)
		}
		nodes := []*testNode{a, b, c}
		type result struct {
			id  string
			err error
		}
		results := make(chan result, 6)
		for i := range 6 {
			go func() {
				nw, err := nodes[i%3].node.Compile(ctx, &runtime.CompileRequest{Format: "onnx", Data: data, Name: fmt.Sprintf("q%d", i), Owner: who,
					Import: compile.ImportOptions{Conversion: compile.ConversionOptions{Timesteps: 8}}})
				if err != nil {
					results <- result{err: err}
					return
				}
				results <- result{id: nw.ID}
			}()
		}
		// passed collects the six results: those the quota let through.
		passed := func() []string {
			var ids []string
			for range 6 {
				r := <-results
				switch {
				case r.err == nil:
					ids = append(ids, r.id)
				case !errors.Is(r.err, runtime.ErrQuota):
					t.Fatal(r.err)
				}
			}
			return ids
		}
		nets := passed()
		if len(nets) != 2 {
			t.Fatalf("%d networks compiled under a quota of 2", len(nets))
		}
		for i := range 6 {
			go func() {
				_, err := nodes[i%3].node.CreateDeployment(ctx, runtime.DeploymentSpec{ID: fmt.Sprintf("q.%d", i), Model: nets[i%2], Device: "cpu", MaxBatch: 1, Owner: who}, 10*time.Second)
				results <- result{id: fmt.Sprintf("q.%d", i), err: err}
			}()
		}
		deps := passed()
		if len(deps) != 2 {
			t.Fatalf("%d deployments created under a quota of 2", len(deps))
		}
		for _, id := range deps {
			if err := b.node.Undeploy(id, who); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range nets {
			eventually(t, 5*time.Second, "the network deleted", func() error { return c.node.DeleteNetwork(id, who) })
		}
		// What was deleted made room again.
		if _, err := a.node.Compile(ctx, &runtime.CompileRequest{Format: "onnx", Data: data, Name: "again", Owner: who,
			Import: compile.ImportOptions{Conversion: compile.ConversionOptions{Timesteps: 8}}}); err != nil {
			t.Fatalf("after the deletions: %v", err)
		}
	})

	t.Run("deployments deleted give their quota back", func(t *testing.T) {
		// Each undeploy releases the deployment's place in the quota,
		// whether or not the node's watch has applied the deletion
		// before the node releases it.
		const who = "frank"
		if err := a.node.SetQuota(ctx, runtime.Quota{Deployments: 2}); err != nil {
			t.Fatal(err)
		}
		defer a.node.SetQuota(ctx, runtime.Quota{})
		nodes := []*testNode{a, b, c}
		for i := range 12 {
			id := fmt.Sprintf("f.%d", i)
			if _, err := nodes[i%3].node.CreateDeployment(ctx, runtime.DeploymentSpec{ID: id, Model: netID, Device: "cpu", MaxBatch: 1, Owner: who}, 0); err != nil {
				t.Fatalf("create %d under a quota of 2, each deleted before the next: %v", i+1, err)
			}
			if err := nodes[(i+1)%3].node.Undeploy(id, who); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("a program compiled again after its twin was deleted loads everywhere", func(t *testing.T) {
		// The same file compiled twice makes the same program bytes: each
		// network keeps its own copy, so deleting the first cannot take
		// the second's program with it.
		data, err := os.ReadFile("../compile/testdata/digits/mlp.onnx")
		if err != nil {
			t.Fatal(err)
		}
		compileOn := func(n *testNode) string {
			nw, err := n.node.Compile(ctx, &runtime.CompileRequest{Format: "onnx", Data: data, Name: "twin", Owner: owner,
				Import: compile.ImportOptions{Conversion: compile.ConversionOptions{Timesteps: 8}}})
			if err != nil {
				t.Fatal(err)
			}
			return nw.ID
		}
		for range 3 {
			first, second := compileOn(a), compileOn(b)
			if err := c.node.DeleteNetwork(first, owner); err != nil {
				t.Fatal(err)
			}
			third := compileOn(c)
			for _, id := range []string{second, third} {
				for _, n := range []*testNode{a, b, c} {
					if _, err := n.node.Model(id); err != nil {
						t.Fatalf("%s after its twin's deletion: %v", n.name, err)
					}
				}
				if err := a.node.DeleteNetwork(id, owner); err != nil {
					t.Fatal(err)
				}
			}
		}
	})

	t.Run("what one node answered, the next node says", func(t *testing.T) {
		// A client behind a load balancer: each request on the next node.
		nodes := []*testNode{a, b, c}
		for i := range 10 {
			x, y, z := nodes[i%3], nodes[(i+1)%3], nodes[(i+2)%3]
			id := fmt.Sprintf("hop.%d", i)
			info, err := x.node.CreateDeployment(ctx, runtime.DeploymentSpec{ID: id, Model: netID, Device: "cpu", MaxBatch: 2, Owner: owner}, 10*time.Second)
			if err != nil || info.Status != runtime.StatusReady {
				t.Fatalf("%s on %s: %s, %v", id, x.name, info.Status, err)
			}
			// Ready on x: a run on y reaches it, and a wrong input width
			// is the run's error, not an unavailable deployment.
			bad := digitsRun(id)
			bad.Samples[0].Vector = bad.Samples[0].Vector[:10]
			if _, err := y.node.Run(ctx, bad); errors.Is(err, runtime.ErrDeviceUnavailable) || err == nil {
				t.Fatalf("%s: a bad run on %s right after %s said ready: %v", id, y.name, x.name, err)
			}
			if info, err := z.node.DeploymentInfo(id); err != nil || info.Status != runtime.StatusReady {
				t.Fatalf("%s: %s says %s after %s said ready: %v", id, z.name, info.Status, x.name, err)
			}
			// Deleted on y: z knows it is gone.
			if err := y.node.Undeploy(id, owner); err != nil {
				t.Fatalf("%s: deleting on %s: %v", id, y.name, err)
			}
			if _, err := z.node.DeploymentInfo(id); !errors.Is(err, runtime.ErrDeploymentNotFound) {
				t.Fatalf("%s: %s still sees it after %s deleted it: %v", id, z.name, y.name, err)
			}
		}
	})

	t.Run("a deletion missed by a stalled watch is applied when it resumes", func(t *testing.T) {
		if _, err := a.node.CreateDeployment(ctx, runtime.DeploymentSpec{ID: "stall.1", Model: netID, Device: "cpu", MaxBatch: 1, Owner: owner}, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		cluster.StallWatch(b.node, "deployments")
		// The deletion waits for b to apply it (awaitApplied), up to
		// catchUpWait, which may or may not outlast b's noticing the
		// stall: what must hold is that b applies it once it has.
		if err := c.node.Undeploy("stall.1", owner); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "b notices its stalled watch and applies the deletion", func() error {
			if _, err := b.node.DeploymentInfo("stall.1"); !errors.Is(err, runtime.ErrDeploymentNotFound) {
				return fmt.Errorf("b still lists it: %v", err)
			}
			return nil
		})
	})

	t.Run("a paused node keeps its deployments", func(t *testing.T) {
		// Its connection stays open while it answers nothing, as when a
		// process is stopped or its CPU saturated: the probes time out,
		// which is no verdict, and the lease (1.5 s) outlasts the pause.
		before, err := a.node.DeploymentInfo("digits.1")
		if err != nil {
			t.Fatal(err)
		}
		tc.stall(before.Node, 700*time.Millisecond)
		time.Sleep(500 * time.Millisecond) // more than the probes' three misses
		for _, n := range []*testNode{a, b, c} {
			info, err := n.node.DeploymentInfo("digits.1")
			if err != nil || info.Node != before.Node || info.Status != runtime.StatusReady {
				t.Fatalf("%s sees digits.1 on %q (%s), before the pause on %q: %v", n.name, info.Node, info.Status, before.Node, err)
			}
		}
		eventually(t, 5*time.Second, "digits.1 answers where it was", func() error {
			_, err := a.node.Run(ctx, digitsRun("digits.1"))
			return err
		})
		if info, _ := a.node.DeploymentInfo("digits.1"); info.Node != before.Node {
			t.Fatalf("digits.1 moved from %q to %q after the pause", before.Node, info.Node)
		}
	})

	t.Run("a lease unreadable after a lost write is kept", func(t *testing.T) {
		// The holder's renewal loses its compare-and-set to a late write of
		// its own, and the read that would tell it so fails: it must keep
		// serving, not drop the deployment or hand it over.
		info, _ := a.node.DeploymentInfo("digits.1")
		holder := tc.nodes[info.Node]
		cluster.FailLeaseReads(holder.node, context.DeadlineExceeded)
		if err := cluster.TouchLease(ctx, holder.node, "digits.1"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // several renewals, each losing
		if _, err := holder.rt.Deployment("digits.1"); err != nil {
			t.Fatalf("the holder dropped digits.1 after a conflict it could not read: %v", err)
		}
		cluster.FailLeaseReads(holder.node, nil)
		eventually(t, 5*time.Second, "digits.1 renewed and answering where it was", func() error {
			after, err := a.node.DeploymentInfo("digits.1")
			if err == nil && (after.Node != holder.name || after.Status != runtime.StatusReady) {
				err = fmt.Errorf("on %q (%s)", after.Node, after.Status)
			}
			if err == nil {
				_, err = a.node.Run(ctx, digitsRun("digits.1"))
			}
			return err
		})
	})

	t.Run("node killed: its deployment moves", func(t *testing.T) {
		info, _ := c.node.DeploymentInfo("digits.1")
		victim = info.Node
		var entry *testNode
		for _, n := range []*testNode{a, b, c} {
			if n.name != victim {
				entry = n
			}
		}
		// A stream served by the victim ends with an error when it dies.
		if _, err := entry.node.CreateDeployment(ctx, runtime.DeploymentSpec{ID: "long", Model: "neuro-1-heavy", Node: victim, Owner: owner, MaxBatch: 1}, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		started := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			req := chatRequest("long")
			req.MaxTokens = 1_000_000
			m, _ := entry.node.Model("neuro-1-heavy")
			stops, _ := m.Tokenizer.StopIDs()
			if id, ok := m.Tokenizer.SpecialID(tokenizer.EndOfText); ok {
				stops = append(stops, id)
			}
			req.Sampling.LogitBias = map[int]float64{}
			for _, id := range stops {
				req.Sampling.LogitBias[id] = -100
			}
			first := true
			_, err := entry.node.Generate(ctx, req, func(runtime.Event) error {
				if first {
					first = false
					close(started)
				}
				return nil
			})
			done <- err
		}()
		<-started
		killed := time.Now()
		tc.kill(victim)
		select {
		case err := <-done:
			if !errors.Is(err, runtime.ErrDeviceUnavailable) {
				t.Fatalf("the stream ended with %v, want ErrDeviceUnavailable", err)
			}
			t.Logf("stream ended %v after the kill: %v", time.Since(killed).Round(time.Millisecond), err)
		case <-time.After(5 * time.Second):
			t.Fatal("the stream hangs after its node died")
		}
		eventually(t, 10*time.Second, "the deployment moved", func() error {
			info, err := entry.node.DeploymentInfo("digits.1")
			if err == nil && (info.Node == victim || info.Node == "" || info.Status != runtime.StatusReady) {
				err = fmt.Errorf("on %q, %s", info.Node, info.Status)
			}
			return err
		})
		t.Logf("moved %v after the kill", time.Since(killed).Round(time.Millisecond))
		got, err := entry.node.Run(ctx, digitsRun("digits.1"))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Outputs, want.Outputs) {
			t.Fatalf("after the move %+v, before %+v", got.Outputs, want.Outputs)
		}
		eventually(t, 5*time.Second, "the dead node reported down", func() error {
			for _, s := range entry.node.Nodes() {
				if s.Name == victim && !s.Up {
					return nil
				}
			}
			return fmt.Errorf("nodes %+v", entry.node.Nodes())
		})
		// The deployment pinned to the dead node says what it waits for.
		eventually(t, 5*time.Second, "the pinned deployment waiting for its node", func() error {
			info, err := entry.node.DeploymentInfo("long")
			if err == nil && (info.Status != runtime.StatusLoading || info.Node != "" || !strings.Contains(info.Waiting, "pinned to node "+victim+", which is not answering")) {
				err = fmt.Errorf("%s on %q, waiting %q", info.Status, info.Node, info.Waiting)
			}
			return err
		})
		if err := entry.node.Undeploy("long", owner); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("NATS server killed: nothing stored is lost", func(t *testing.T) {
		// The meta leader goes: the two left elect another while d joins.
		for _, s := range tc.servers {
			if s.JetStreamIsLeader() {
				s.Shutdown()
				break
			}
		}
		d := tc.join("d") // reaches the two servers left
		if _, err := d.node.Model(netID); err != nil {
			t.Fatalf("a node joining after the loss: %v", err)
		}
		if info, err := d.node.DeploymentInfo("digits.1"); err != nil || info.Owner != owner {
			t.Fatalf("deployment after the loss: %+v %v", info, err)
		}
		eventually(t, 10*time.Second, "a run through the new node", func() error {
			got, err := d.node.Run(ctx, digitsRun("digits.1"))
			if err == nil && !reflect.DeepEqual(got.Outputs, want.Outputs) {
				t.Fatalf("after the loss %+v, before %+v", got.Outputs, want.Outputs)
			}
			return err
		})
	})

	t.Run("partition healed", func(t *testing.T) {
		info, _ := tc.nodes["d"].node.DeploymentInfo("digits.1")
		cutNode := tc.nodes[info.Node]
		var other *testNode
		for _, n := range tc.nodes {
			if !n.dead && n != cutNode && n.name != "d" {
				other = n
			}
		}
		tc.partition(cutNode.name, true)
		eventually(t, 10*time.Second, "the deployment moved off the cut node", func() error {
			info, err := other.node.DeploymentInfo("digits.1")
			if err == nil && (info.Node == cutNode.name || info.Status != runtime.StatusReady) {
				err = fmt.Errorf("on %q, %s", info.Node, info.Status)
			}
			return err
		})
		tc.partition(cutNode.name, false)
		eventually(t, 10*time.Second, "the healed node dropped its copy and routes", func() error {
			if _, err := cutNode.rt.Deployment("digits.1"); err == nil {
				return errors.New("the healed node still runs it")
			}
			got, err := cutNode.node.Run(ctx, digitsRun("digits.1"))
			if err == nil && !reflect.DeepEqual(got.Outputs, want.Outputs) {
				t.Fatalf("after healing %+v, before %+v", got.Outputs, want.Outputs)
			}
			return err
		})
		eventually(t, 5*time.Second, "telemetry equal after healing", func() error {
			got := map[string]int{}
			total := -1
			equal := true
			for _, n := range tc.nodes {
				if n.dead {
					continue
				}
				s, _ := n.node.Telemetry().Summarize(runtime.Filter{Principal: owner})
				got[n.name] = s.Requests.Total
				equal = equal && (total < 0 || total == s.Requests.Total)
				total = s.Requests.Total
			}
			if !equal {
				return fmt.Errorf("totals %v", got)
			}
			return nil
		})
	})

	t.Run("a dropped copy stops after the calls it accepted", func(t *testing.T) {
		var host, entry *testNode
		for _, n := range tc.nodes {
			switch {
			case n.dead:
			case host == nil:
				host = n
			default:
				entry = n
			}
		}
		if _, err := entry.node.CreateDeployment(ctx, runtime.DeploymentSpec{ID: "drop.1", Model: netID, Device: "cpu", Node: host.name, Owner: owner}, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		defer entry.node.Undeploy("drop.1", owner)
		// A call accepted a moment ago has not reached the runtime yet:
		// undeploying now would answer it "not found".
		release := cluster.HoldCall(host.node, "drop.1")
		cluster.Drop(host.node, "drop.1")
		time.Sleep(100 * time.Millisecond)
		if _, err := host.rt.Deployment("drop.1"); err != nil {
			release()
			t.Fatalf("undeployed with a call accepted: %v", err)
		}
		release()
		eventually(t, 2*time.Second, "the copy undeployed once its call ended", func() error {
			if _, err := host.rt.Deployment("drop.1"); err == nil {
				return errors.New("still deployed")
			}
			return nil
		})
		// Pinned to host, the deployment comes back there once its lease
		// lapses; calls meanwhile wait for it.
		eventually(t, 10*time.Second, "drop.1 runs again", func() error {
			_, err := entry.node.Run(ctx, digitsRun("drop.1"))
			return err
		})
	})

	t.Run("a leaving node hands over without a failed call", func(t *testing.T) {
		// Every node agrees where digits.1 runs before one leaves: a node
		// that was cut off last catches up with the leases first.
		var info runtime.DeploymentInfo
		eventually(t, 10*time.Second, "every node reports digits.1 ready on one node", func() error {
			var err error
			if info, err = tc.nodes["d"].node.DeploymentInfo("digits.1"); err != nil {
				return err
			}
			for _, n := range tc.nodes {
				if n.dead {
					continue
				}
				got, err := n.node.DeploymentInfo("digits.1")
				if err == nil && (got.Node != info.Node || got.Status != runtime.StatusReady) {
					err = fmt.Errorf("%s reports it on %q (%s), d on %q (%s)", n.name, got.Node, got.Status, info.Node, info.Status)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		leaver := tc.nodes[info.Node]
		var entry *testNode
		for _, n := range tc.nodes {
			if !n.dead && n != leaver {
				entry = n
			}
		}
		// Calls through another node, without retries, all through the
		// handover.
		stop := make(chan struct{})
		var calls, failed atomic.Int64
		var firstErr atomic.Value
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				calls.Add(1)
				if _, err := entry.node.Run(ctx, digitsRun("digits.1")); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		time.Sleep(100 * time.Millisecond)
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		start := time.Now()
		if err := leaver.node.Leave(lctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("handed over in %v", time.Since(start).Round(time.Millisecond))
		if got, err := leaver.node.DeploymentInfo("digits.1"); err != nil || got.Node == leaver.name || got.Status != runtime.StatusReady {
			t.Fatalf("Leave returned with digits.1 on %q (%s), %v: not yet ready elsewhere", got.Node, got.Status, err)
		}
		time.Sleep(100 * time.Millisecond)
		close(stop)
		// What another node reports comes from its watch of the leases.
		eventually(t, 2*time.Second, "another node reports digits.1 ready elsewhere", func() error {
			after, err := entry.node.DeploymentInfo("digits.1")
			if err == nil && (after.Node == leaver.name || after.Status != runtime.StatusReady) {
				err = fmt.Errorf("on %q (%s)", after.Node, after.Status)
			}
			return err
		})
		if _, err := leaver.rt.Deployment("digits.1"); err == nil {
			t.Fatal("the leaving node still runs digits.1")
		}
		if f := failed.Load(); f > 0 {
			t.Fatalf("%d of %d calls failed during the handover: %v", f, calls.Load(), firstErr.Load())
		}
		t.Logf("%d calls, none failed", calls.Load())
	})
}

// subscriptions counts the subscriptions on every running server by
// subject, but for JetStream's own.
func subscriptions(tc *testCluster) map[string]int {
	m := map[string]int{}
	for _, s := range tc.servers {
		if !s.Running() {
			continue
		}
		sz, _ := s.Subsz(&server.SubszOptions{Subscriptions: true, Limit: 1 << 20})
		for _, d := range sz.Subs {
			if !strings.HasPrefix(d.Subject, "$") {
				m[d.Subject]++
			}
		}
	}
	return m
}
