package cpu_test

import (
	"testing"

	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/runtime/hal/haltest"
)

func TestConformance(t *testing.T) {
	haltest.Run(t, haltest.Backend{Open: func() (hal.Device, error) { return hal.Open(cpu.Name, hal.Config{}) }})
}

func TestConformanceOneWorker(t *testing.T) {
	haltest.Run(t, haltest.Backend{Open: func() (hal.Device, error) {
		return hal.Open(cpu.Name, hal.Config{Options: map[string]string{"workers": "1"}})
	}})
}

func TestWorkersOption(t *testing.T) {
	for _, bad := range []string{"0", "-2", "x", "1000"} {
		if _, err := hal.Open(cpu.Name, hal.Config{Options: map[string]string{"workers": bad}}); err == nil {
			t.Errorf("workers %q accepted", bad)
		}
	}
}
