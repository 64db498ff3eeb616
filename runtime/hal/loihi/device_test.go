package loihi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/haltest"
	"github.com/neuro-go/neuro/runtime/hal/loihi"
)

func TestConformance(t *testing.T) {
	haltest.Run(t, haltest.Backend{Open: func() (hal.Device, error) { return hal.Open(loihi.Name, hal.Config{}) }})
}

// The registry parses each option with its own type into the typed
// Config: a fractional headroom is a headroom.
func TestConfigFromOptions(t *testing.T) {
	want := loihi.Config{InputBits: 6, InputFracBits: 4, Timesteps: 100, PayloadBits: 16, Headroom: 2.5}
	d, err := hal.Open(loihi.Name, hal.Config{Options: map[string]string{
		"input_bits": "6", "input_frac_bits": "4", "timesteps": "100", "payload_bits": "16", "headroom": "2.5",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.(*loihi.Device).Config(); got != want {
		t.Errorf("Config() = %+v, want %+v", got, want)
	}
	typed, err := loihi.New(&want)
	if err != nil {
		t.Fatal(err)
	}
	if got := typed.Config(); got != want {
		t.Errorf("New: Config() = %+v, want %+v", got, want)
	}
	for name, dev := range map[string]hal.Device{"opened": d, "typed": typed, "zero": &loihi.Device{}} {
		if _, err := dev.Load(context.Background(), haltest.Program(2, 2), 1); err != nil {
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
		{map[string]string{"headroom": "lots"}, `hal: loihi: option headroom="lots": want a number: invalid syntax`, nil},
		{map[string]string{"input_bits": "8.5"}, `hal: loihi: option input_bits="8.5": want an integer`, nil},
		{map[string]string{"timesteps": "99999999999999999999"}, `option timesteps="99999999999999999999": want an integer: value out of range`, nil},
		{map[string]string{"head_room": "2"}, `option head_room="2": hal: unknown option (loihi takes [headroom input_bits input_frac_bits payload_bits range_margin ranges timesteps])`, hal.ErrUnknownOption},
		{map[string]string{"ranges": "tight"}, `loihi: Config.Ranges "tight": want "calibrated" or "worst-case"`, nil},
		{map[string]string{"range_margin": "0.5"}, "loihi: Config.RangeMargin 0.5 must be a finite factor of at least 1", nil},
		{map[string]string{"range_margin": "NaN"}, "loihi: Config.RangeMargin NaN must be a finite factor of at least 1", nil},
		{map[string]string{"payload_bits": "40"}, "loihi: Config.PayloadBits 40 out of [2, 24]", nil},
		{map[string]string{"headroom": "-1"}, "loihi: Config.Headroom -1 must be positive", nil},
		{map[string]string{"headroom": "+Inf"}, "loihi: Config.Headroom +Inf must be positive", nil},
		{map[string]string{"timesteps": "-5"}, "loihi: Config.Timesteps -5 is negative", nil},
	} {
		t.Run(fmt.Sprint(tc.opts), func(t *testing.T) {
			d, err := hal.Open(loihi.Name, hal.Config{Options: tc.opts})
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
	if _, err := loihi.New(&loihi.Config{InputBits: 1}); err == nil {
		t.Error("New accepted InputBits 1")
	}
	if err := (&loihi.Config{}).Validate(); err != nil {
		t.Errorf("zero Config: %v", err)
	}
}
