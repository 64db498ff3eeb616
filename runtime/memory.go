package runtime

import (
	"fmt"
	"math"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// stateBytes estimates the memory one replica of a program holds: per
// batch slot (every node's output, summed input and states, and delay
// lines) and once (convolution and pooling tables). It is the estimate
// the simulator checks against snn.Options.MaxStateBytes before it
// allocates, so a deployment is charged, before it loads, what its
// replicas will allocate at most.
func stateBytes(p *compile.Program) (perSlot, perReplica float64) {
	if p == nil || p.Graph == nil {
		return 0, 0
	}
	shapes, err := p.Graph.Shapes()
	if err != nil {
		return 0, 0 // validated when the model was registered
	}
	for name, node := range p.Graph.Nodes {
		sh := shapes[name]
		in, out := float64(snn.Size(sh.In)), float64(snn.Size(sh.Out))
		perSlot += 4 * (2*in + 3*out)
		switch x := node.(type) {
		case *snn.Delay:
			maxd := 0.0
			for _, d := range x.Delay {
				if p.Dt > 0 {
					maxd = math.Max(maxd, math.Round(d/p.Dt))
				}
			}
			perSlot += 4 * out * (maxd + 1)
		case *snn.Conv2d:
			perReplica += 8 * in * float64(snn.Size(x.Weight.Shape[2:]))
		case *snn.Conv1d:
			perReplica += 8 * in * float64(x.Weight.Shape[2])
		case *snn.SumPool2d:
			perReplica += 4 * in * float64(x.Kernel[0]*x.Kernel[1])
		case *snn.AvgPool2d:
			perReplica += 4 * in * float64(x.Kernel[0]*x.Kernel[1])
		}
	}
	return perSlot, perReplica
}

// deploymentBytes is what a deployment of p with batch slots and
// replicas holds, saturated at MaxInt64.
func deploymentBytes(p *compile.Program, batch, replicas int) int64 {
	perSlot, perReplica := stateBytes(p)
	total := (perSlot*float64(batch) + perReplica) * float64(replicas)
	if total >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(total)
}

// checkDeploymentMemory charges d against its owner's and all owners'
// budgets of deployment memory; the program's own deployments are not
// charged. It is called with r.mu held.
func (r *Runtime) checkDeploymentMemory(d *Deployment) error {
	q := r.opts.Quota
	if d.Owner == "" {
		return nil
	}
	var owner, all int64
	for _, o := range r.deps {
		if o.Owner != "" {
			all += o.bytes
			if o.Owner == d.Owner {
				owner += o.bytes
			}
		}
	}
	perSlot, _ := stateBytes(d.Model.Program)
	this := fmt.Sprintf("this one %d bytes: about %.0f per slot × %d slots × %d replicas", d.bytes, perSlot, d.MaxBatch, d.Replicas)
	if q.DeploymentBytes >= 0 && owner+d.bytes > q.DeploymentBytes {
		return fmt.Errorf("%w: %s's deployments would hold %d bytes of state (%s), the limit is %d (Quota.DeploymentBytes)", ErrQuota, d.Owner, owner+d.bytes, this, q.DeploymentBytes)
	}
	if q.ServerDeploymentBytes >= 0 && all+d.bytes > q.ServerDeploymentBytes {
		return fmt.Errorf("%w: the server's deployments would hold %d bytes of state (%s), the limit is %d (Quota.ServerDeploymentBytes)", ErrQuota, all+d.bytes, this, q.ServerDeploymentBytes)
	}
	return nil
}
