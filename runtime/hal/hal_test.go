package hal_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/neuro-go/neuro/runtime/hal"
)

func TestParseOptions(t *testing.T) {
	var c struct {
		n int
		x float64
	}
	parsers := map[string]func(string) error{"n": hal.IntOption(&c.n), "x": hal.FloatOption(&c.x)}
	if err := hal.ParseOptions("dev", map[string]string{"n": "-3", "x": "2.5e-1"}, parsers); err != nil {
		t.Fatal(err)
	}
	if c.n != -3 || c.x != 0.25 {
		t.Errorf("n %d, x %g", c.n, c.x)
	}
	if err := hal.ParseOptions("dev", nil, parsers); err != nil {
		t.Errorf("no options: %v", err)
	}
	for _, tc := range []struct {
		opts       map[string]string
		option, is string
	}{
		{map[string]string{"n": "1", "x": "one"}, "x", "want a number: invalid syntax"},
		{map[string]string{"n": "1e3"}, "n", "want an integer: invalid syntax"},
		{map[string]string{"n": "99999999999999999999"}, "n", "want an integer: value out of range"},
		// Applied in name order: the first bad one is reported.
		{map[string]string{"z": "1", "n": "x"}, "n", "want an integer: invalid syntax"},
		{map[string]string{"z": "1"}, "z", "hal: unknown option (dev takes [n x])"},
	} {
		err := hal.ParseOptions("dev", tc.opts, parsers)
		var oe *hal.OptionError
		if !errors.As(err, &oe) {
			t.Errorf("%v: err %v, want an *OptionError", tc.opts, err)
			continue
		}
		if oe.Device != "dev" || oe.Option != tc.option || oe.Value != tc.opts[tc.option] || oe.Err.Error() != tc.is {
			t.Errorf("%v: %+v, want option %s, %q", tc.opts, oe, tc.option, tc.is)
		}
		if (tc.option == "z") != errors.Is(err, hal.ErrUnknownOption) {
			t.Errorf("%v: errors.Is(err, ErrUnknownOption) is %v", tc.opts, errors.Is(err, hal.ErrUnknownOption))
		}
	}
}

// A backend's Factory parses the registry's strings into its typed Config
// with the parse function each field needs, then calls its constructor.
func ExampleParseOptions() {
	type Config struct {
		Bits     int
		Headroom float64
	}
	parse := func(options map[string]string) (Config, error) {
		var c Config
		err := hal.ParseOptions("chip", options, map[string]func(string) error{
			"bits":     hal.IntOption(&c.Bits),
			"headroom": hal.FloatOption(&c.Headroom),
		})
		return c, err
	}
	fmt.Println(parse(map[string]string{"bits": "8", "headroom": "2.5"}))
	fmt.Println(parse(map[string]string{"headroom": "lots"}))
	fmt.Println(parse(map[string]string{"bitz": "8"}))
	// Output:
	// {8 2.5} <nil>
	// {0 0} hal: chip: option headroom="lots": want a number: invalid syntax
	// {0 0} hal: chip: option bitz="8": hal: unknown option (chip takes [bits headroom])
}

// TestOpenUnknownSaysWhatToImport: a device that is not linked is an
// error wrapping ErrUnknownDevice that names the package to import, or
// lists this module's devices for a name that is none of them.
func TestOpenUnknownSaysWhatToImport(t *testing.T) {
	const pkg = "github.com/neuro-go/neuro/runtime/hal/"
	check := func(name, want string) {
		t.Helper()
		d, err := hal.Open(name, hal.Config{})
		if d != nil || !errors.Is(err, hal.ErrUnknownDevice) {
			t.Fatalf("Open(%q) = %v, %v; want an error wrapping ErrUnknownDevice", name, d, err)
		}
		if err.Error() != want {
			t.Errorf("Open(%q):\n got %s\nwant %s", name, err, want)
		}
	}
	// This test binary links no backend.
	check("cpu", `hal: unknown device "cpu": no device is registered; import _ "`+pkg+`cpu"`)
	check("loihi", `hal: unknown device "loihi": no device is registered; import _ "`+pkg+`loihi"`)
	hal.Register("test-dev", func(hal.Config) (hal.Device, error) { return nil, errors.New("test-dev opens nothing") })
	check("xylo", `hal: unknown device "xylo" (registered: test-dev); import _ "`+pkg+`xylo"`)
	check("mock", `hal: unknown device "mock" (registered: test-dev); a mock is not opened by name: wrap a device with mock.New from "`+pkg+`mock"`)
	check("tpu", `hal: unknown device "tpu" (registered: test-dev); this module's devices are cpu, loihi and xylo, each linked by import _ "`+pkg+`<name>", and mock.New from "`+pkg+`mock", which stands in for any of them`)
}
