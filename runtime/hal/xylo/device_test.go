package xylo_test

import (
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/haltest"
	"github.com/neuro-go/neuro/runtime/hal/xylo"
	"github.com/neuro-go/neuro/snn"
)

// haltestProgram is haltest's default program with the one change Xylo
// needs: its LIF neurons reset by subtraction (the chip has no reset to a
// value). The suite drives inputs in steps of 1/4, so the device is opened
// with an input quantum of 0.25: one event per quarter.
func haltestProgram(inputs, outputs int) *compile.Program {
	p := haltest.Program(inputs, outputs)
	for _, name := range p.Graph.NamesOfKind(snn.KindLIF) {
		p.Graph.Nodes[name].(*snn.LIF).Reset = snn.ResetSubtract
	}
	return p
}

func TestConformance(t *testing.T) {
	haltest.Run(t, haltest.Backend{
		Open: func() (hal.Device, error) {
			return hal.Open(xylo.Name, hal.Config{Options: map[string]string{"input_quantum": "0.25"}})
		},
		Program: haltestProgram,
	})
}
