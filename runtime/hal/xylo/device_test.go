package xylo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
		Program:    haltestProgram,
		Unreadable: -1, // the chip takes no negative input
	})
}

// The registry parses each option with its own type into the typed
// Config, which New and the zero Device take too.
func TestConfigFromOptions(t *testing.T) {
	want := xylo.Config{InputQuantum: 0.25, ThresholdTarget: 4096}
	d, err := hal.Open(xylo.Name, hal.Config{Options: map[string]string{"input_quantum": "0.25", "threshold_target": "4096"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.(*xylo.Device).Config(); got != want {
		t.Errorf("Config() = %+v, want %+v", got, want)
	}
	typed, err := xylo.New(&want)
	if err != nil {
		t.Fatal(err)
	}
	for name, dev := range map[string]hal.Device{"opened": d, "typed": typed, "zero": &xylo.Device{}} {
		if _, err := dev.Load(context.Background(), haltestProgram(2, 2), 1); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want string
		is   error
	}{
		{map[string]string{"input_quantum": "a quarter"}, `hal: xylo: option input_quantum="a quarter": want a number: invalid syntax`, nil},
		{map[string]string{"threshold_target": "8e3"}, `hal: xylo: option threshold_target="8e3": want an integer`, nil},
		{map[string]string{"quantum": "1"}, `option quantum="1": hal: unknown option (xylo takes [input_quantum threshold_target])`, hal.ErrUnknownOption},
		{map[string]string{"input_quantum": "-1"}, "xylo: Config.InputQuantum -1, must be positive", nil},
		{map[string]string{"input_quantum": "NaN"}, "xylo: Config.InputQuantum NaN, must be positive", nil},
		{map[string]string{"threshold_target": "40000"}, "xylo: Config.ThresholdTarget 40000 out of [1, 32767]", nil},
	} {
		t.Run(fmt.Sprint(tc.opts), func(t *testing.T) {
			d, err := hal.Open(xylo.Name, hal.Config{Options: tc.opts})
			if err == nil || d != nil {
				t.Fatalf("accepted: %v, %v", d, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %q, want it to contain %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err %v does not wrap %v", err, tc.is)
			}
		})
	}
	if err := (&xylo.Config{}).Validate(); err != nil {
		t.Errorf("zero Config: %v", err)
	}
}
