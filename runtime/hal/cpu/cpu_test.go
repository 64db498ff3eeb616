package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/runtime/hal/haltest"
	"github.com/neuro-go/neuro/snn"
)

func TestConformance(t *testing.T) {
	haltest.Run(t, haltest.Backend{Open: func() (hal.Device, error) { return hal.Open(cpu.Name, hal.Config{}) }})
}

func TestConformanceOneWorker(t *testing.T) {
	haltest.Run(t, haltest.Backend{Open: func() (hal.Device, error) {
		return hal.Open(cpu.Name, hal.Config{Options: map[string]string{"workers": "1"}})
	}})
}

// int8 weights pass the same conformance suite.
func TestConformanceInt8(t *testing.T) {
	haltest.Run(t, haltest.Backend{Open: func() (hal.Device, error) {
		return hal.Open(cpu.Name, hal.Config{Options: map[string]string{"precision": "int8"}})
	}})
}

// bfloat16 weights pass the same conformance suite.
func TestConformanceBFloat16(t *testing.T) {
	haltest.Run(t, haltest.Backend{Open: func() (hal.Device, error) {
		return hal.Open(cpu.Name, hal.Config{Options: map[string]string{"precision": "bfloat16"}})
	}})
	d, err := hal.Open(cpu.Name, hal.Config{Options: map[string]string{"precision": "bf16"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.(*cpu.Device).Config().Precision; got != snn.BFloat16 {
		t.Fatalf("precision=bf16 gives %v", got)
	}
	if _, err := cpu.New(&cpu.Config{Precision: 9}); err == nil {
		t.Fatal("Precision 9 accepted")
	}
}

// The typed constructor and the zero Device are the same device as the
// registry's.
func TestConformanceTyped(t *testing.T) {
	haltest.Run(t, haltest.Backend{Open: func() (hal.Device, error) { return cpu.New(&cpu.Config{Workers: 2}) }})
	haltest.Run(t, haltest.Backend{Open: func() (hal.Device, error) { return &cpu.Device{}, nil }})
}

func TestConfig(t *testing.T) {
	for _, w := range []int{0, 1, 256} {
		d, err := cpu.New(&cpu.Config{Workers: w})
		if err != nil {
			t.Errorf("Workers %d: %v", w, err)
			continue
		}
		if got := d.Config().Workers; got != w {
			t.Errorf("Workers %d: Config().Workers = %d", w, got)
		}
	}
	for _, w := range []int{-1, 257} {
		if _, err := cpu.New(&cpu.Config{Workers: w}); err == nil || !strings.HasPrefix(err.Error(), "cpu: Config.Workers") {
			t.Errorf("Workers %d: err %v, want one naming Config.Workers", w, err)
		}
	}
	d, err := hal.Open(cpu.Name, hal.Config{Options: map[string]string{"workers": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.(*cpu.Device).Config().Workers; got != 3 {
		t.Errorf("workers=3 gives Config().Workers %d", got)
	}
	if _, err := d.Load(context.Background(), haltest.Program(2, 2), 1); err != nil {
		t.Error(err)
	}
}

func TestWorkersOption(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		want string // in the error
		is   error  // wrapped, if any
	}{
		{map[string]string{"workers": "x"}, `hal: cpu: option workers="x": want an integer: invalid syntax`, nil},
		{map[string]string{"workers": "1.5"}, `option workers="1.5": want an integer`, nil},
		{map[string]string{"workers": "0x10"}, `option workers="0x10": want an integer`, nil},
		{map[string]string{"threads": "2"}, `hal: cpu: option threads="2": hal: unknown option (cpu takes [precision workers])`, hal.ErrUnknownOption},
		{map[string]string{"workers": "-2"}, "cpu: Config.Workers is -2", nil},
		{map[string]string{"workers": "1000"}, "cpu: Config.Workers is 1000", nil},
		{map[string]string{"precision": "int4"}, `hal: cpu: option precision="int4": snn: unknown precision "int4"`, nil},
	} {
		t.Run(fmt.Sprint(tc.opts), func(t *testing.T) {
			d, err := hal.Open(cpu.Name, hal.Config{Options: tc.opts})
			if err == nil || d != nil {
				t.Fatalf("accepted: %v, %v", d, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %q, want it to contain %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err %v does not wrap %v", err, tc.is)
			}
			var oe *hal.OptionError
			if strings.Contains(tc.want, "option") && (!errors.As(err, &oe) || oe.Device != cpu.Name) {
				t.Errorf("err %v is not an *hal.OptionError for %s", err, cpu.Name)
			}
		})
	}
}

// TestTooLargeIsUnsupported: a program whose state at the batch asked
// for is over the simulator's bound is refused as not fitting
// (compile.ErrUnsupported), the caller's to change, before anything of
// its size is allocated.
func TestTooLargeIsUnsupported(t *testing.T) {
	g := snn.NewGraph().Add("in", &snn.Input{Shape: []int{1 << 20}}).Add("out", &snn.Output{}).Connect("in", "out")
	d, err := cpu.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Load(context.Background(), &compile.Program{Graph: g, Timesteps: 1}, 4096)
	if !errors.Is(err, compile.ErrUnsupported) || !errors.Is(err, snn.ErrTooLarge) {
		t.Fatalf("a 16 GB batch: %v, want compile.ErrUnsupported wrapping snn.ErrTooLarge", err)
	}
}
