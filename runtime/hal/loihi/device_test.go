package loihi_test

import (
	"testing"

	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/haltest"
	"github.com/neuro-go/neuro/runtime/hal/loihi"
)

func TestConformance(t *testing.T) {
	haltest.Run(t, haltest.Backend{Open: func() (hal.Device, error) { return hal.Open(loihi.Name, hal.Config{}) }})
}
