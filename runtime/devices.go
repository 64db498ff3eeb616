package runtime

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/neuro-go/neuro/runtime/hal"
)

// Devices lists the devices a DeploymentSpec may name: the hal backends
// the program linked (hal.Devices), sorted.
func (r *Runtime) Devices() []string { return hal.Devices() }

// deviceName is the device the spec names; "cpu" when it names none.
func (s *DeploymentSpec) deviceName() string {
	if s.Device == "" {
		return "cpu"
	}
	return s.Device
}

// DeviceConfig is the configuration the spec asks of the device it names:
// Config, with Precision as the device's "precision" option. It opens the
// device to check it, and refuses with a *ParamError naming "device" a
// device that is not registered, and naming "precision" a precision the
// device does not take (the error also wraps the device's, for
// errors.Is). Start calls it; a program that places deployments elsewhere
// (a cluster) calls it to refuse a bad spec before recording it.
func (s DeploymentSpec) DeviceConfig() (hal.Config, error) {
	_, cfg, err := s.open()
	return cfg, err
}

// open opens the device the spec names with its configuration.
func (s *DeploymentSpec) open() (hal.Device, hal.Config, error) {
	name, cfg := s.deviceName(), s.Config
	if s.Precision != "" {
		cfg.Options = maps.Clone(cfg.Options)
		if cfg.Options == nil {
			cfg.Options = map[string]string{}
		}
		cfg.Options["precision"] = s.Precision
	}
	dev, err := hal.Open(name, cfg)
	var oe *hal.OptionError
	switch {
	case err == nil:
		return dev, cfg, nil
	case errors.Is(err, hal.ErrUnknownDevice):
		return nil, cfg, paramCause{&ParamError{"device", strings.TrimPrefix(err.Error(), "hal: ")}, err}
	case s.Precision != "" && !(errors.As(err, &oe) && oe.Option != "precision"):
		// The device refuses the precision, or a configuration with it.
		msg := err.Error()
		if errors.Is(err, hal.ErrUnknownOption) {
			msg = fmt.Sprintf("precision is an option of the cpu device, not of %s", name)
		}
		return nil, cfg, paramCause{&ParamError{"precision", msg}, err}
	}
	return nil, cfg, fmt.Errorf("runtime: Deploy %q: %w", s.ID, err)
}

// paramCause is a *ParamError that also wraps the error behind it, so
// that errors.As finds the field at fault and errors.Is the cause.
type paramCause struct {
	*ParamError
	cause error
}

func (e paramCause) Unwrap() []error { return []error{e.ParamError, e.cause} }
