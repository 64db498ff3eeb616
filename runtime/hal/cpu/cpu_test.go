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
