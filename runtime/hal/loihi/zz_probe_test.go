package loihi_test

import (
	"context"
	"testing"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/models"
	"github.com/neuro-go/neuro/runtime/hal/loihi"
)

func TestZZProbe(t *testing.T) {
	for _, id := range []string{models.Lite, models.Standard, models.Heavy} {
		m, err := models.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		g, rep, err := compile.FoldLinear(m.Program.Graph)
		t.Logf("%s: fold %v: %v; weights %d → %d; %d nodes", id, time.Since(t0), err, rep.WeightsBefore, rep.WeightsAfter, len(g.Nodes))
		dev, _ := loihi.New(nil)
		t0 = time.Now()
		_, err = dev.Load(context.Background(), m.Program, 1)
		t.Logf("%s: load %v: %v", id, time.Since(t0), err)
	}
}
