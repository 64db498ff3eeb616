package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
)

// failingDevice is listed like a device and fails every load, slowly.
type failingDevice struct{}

func (failingDevice) Capabilities() hal.Capabilities {
	return hal.Capabilities{Name: "failing", Kind: hal.KindHardware, Target: compile.CPUTarget()}
}

func (failingDevice) Load(context.Context, *compile.Program, int) (hal.Instance, error) {
	time.Sleep(time.Millisecond)
	return nil, errors.New("failing: the chip did not answer")
}

// TestDeploymentsReadWhileOthersDeploy lists and reads deployments while
// others are being deployed and removed by failure: under -race, a field
// written after a deployment is published would be reported.
func TestDeploymentsReadWhileOthersDeploy(t *testing.T) {
	rt := newTestRuntime(t, 2, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, d := range rt.Deployments() {
					_ = d.Device.Name + string(d.Status()) + d.Model.ID
					d.Load()
					d.Failure()
					if got, err := rt.Deployment(d.ID); err == nil && got.Device.Kind == "" {
						t.Errorf("%s listed without its device", d.ID)
					}
				}
			}
		}()
	}
	var deployers sync.WaitGroup
	for i := 0; i < 8; i++ {
		deployers.Add(1)
		go func() {
			defer deployers.Done()
			if _, err := rt.Deploy(ctx, DeploymentSpec{ID: fmt.Sprintf("d%d", i), Model: "test-lm", MaxBatch: 1}); err != nil {
				t.Error(err)
			}
			// A device whose load fails: listed as loading, then removed.
			if _, err := rt.Deploy(ctx, DeploymentSpec{ID: fmt.Sprintf("bad%d", i), Model: "test-lm", Dev: failingDevice{}}); err == nil {
				t.Errorf("bad%d deployed", i)
			}
		}()
	}
	deployers.Wait()
	close(stop)
	wg.Wait()
	if n := len(rt.Deployments()); n != 9 {
		t.Errorf("%d deployments, want the 8 new and the test one", n)
	}
}
