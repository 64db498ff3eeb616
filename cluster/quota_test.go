package cluster_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/neuro-go/neuro/runtime"
)

// TestQuotaFromTheCluster: a quota set on one node holds on the others,
// counted over the whole cluster.
func TestQuotaFromTheCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three NATS servers")
	}
	tc := startCluster(t)
	defer tc.close()
	a, b, c := tc.join("a"), tc.join("b"), tc.join("c")
	ctx := context.Background()
	if err := a.node.SetQuota(ctx, runtime.Quota{Networks: 2, Deployments: 1}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../compile/testdata/digits/mlp.onnx")
	if err != nil {
		t.Fatal(err)
	}
	compile := func(n *testNode) error {
		_, err := n.node.Compile(ctx, &runtime.CompileRequest{Format: "onnx", Data: data, Owner: owner})
		return err
	}
	if err := compile(b); err != nil {
		t.Fatal(err)
	}
	if err := compile(b); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "both networks known on c", func() error {
		if n := len(c.rt.Models()); n < 5 { // the three test models and the two networks
			return errors.New("not yet")
		}
		return nil
	})
	if err := compile(c); !errors.Is(err, runtime.ErrQuota) {
		t.Fatalf("a third network on c: %v", err)
	}
	if _, err := a.node.CreateDeployment(ctx, runtime.DeploymentSpec{ID: "q1", Model: "neuro-1-lite", Owner: owner}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "q1 known on b", func() error {
		_, err := b.node.DeploymentInfo("q1")
		return err
	})
	if _, err := b.node.CreateDeployment(ctx, runtime.DeploymentSpec{ID: "q2", Model: "neuro-1-lite", Owner: owner}, 10*time.Second); !errors.Is(err, runtime.ErrQuota) {
		t.Fatalf("a second deployment from b: %v", err)
	}
}
