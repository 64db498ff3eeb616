package runtime

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/mock"
)

func TestDeviceConfig(t *testing.T) {
	var pe *ParamError
	for _, tc := range []struct {
		spec  DeploymentSpec
		param string
		cause error
		msg   string
	}{
		{DeploymentSpec{Device: "tpu"}, "device", hal.ErrUnknownDevice, ""},
		{DeploymentSpec{Precision: "int4"}, "precision", nil, ""},
		{DeploymentSpec{Device: "loihi", Precision: "int8"}, "precision", hal.ErrUnknownOption, "runtime: precision: precision is an option of the cpu device, not of loihi"},
	} {
		_, err := tc.spec.DeviceConfig()
		if !errors.As(err, &pe) || pe.Param != tc.param || !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%+v: %v, want a ParamError naming %s", tc.spec, err, tc.param)
		}
		if tc.cause != nil && !errors.Is(err, tc.cause) {
			t.Errorf("%+v: %v does not wrap %v", tc.spec, err, tc.cause)
		}
		if tc.msg != "" && err.Error() != tc.msg {
			t.Errorf("%+v: %q, want %q", tc.spec, err, tc.msg)
		}
	}
	opts := map[string]string{"workers": "2"}
	cfg, err := DeploymentSpec{Config: hal.Config{Options: opts}, Precision: "int8"}.DeviceConfig()
	if err != nil || cfg.Options["precision"] != "int8" || cfg.Options["workers"] != "2" || len(opts) != 1 {
		t.Fatalf("%+v, %v; the spec's options %v", cfg, err, opts)
	}

	rt := newTestRuntime(t, 2, nil)
	d, err := rt.Deploy(context.Background(), DeploymentSpec{ID: "int8", Model: "test-lm", Precision: "int8"})
	if err != nil || d.Device.Model != "int8 simulator" {
		t.Fatalf("a deployment at int8: %+v, %v", d, err)
	}
	if !slices.Equal(rt.Devices(), hal.Devices()) {
		t.Errorf("Devices %v, hal.Devices %v", rt.Devices(), hal.Devices())
	}
}

func TestModelInfo(t *testing.T) {
	rt := newTestRuntime(t, 2, nil)
	info, err := rt.ModelInfo("test") // an alias
	if err != nil {
		t.Fatal(err)
	}
	if info.Neurons == 0 || info.Synapses == 0 || info.Layers == 0 || !slices.IsSorted(info.Devices) || !slices.Contains(info.Devices, "cpu") {
		t.Fatalf("%+v", info)
	}
	// The test network's 1,024 inputs are more than xylo's input
	// channels; a ready deployment there (a mock's) lists it all the same.
	if slices.Contains(info.Devices, "xylo") {
		t.Errorf("xylo listed: %v", info.Devices)
	}
	xylo, err := hal.Open("xylo", hal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Deploy(context.Background(), DeploymentSpec{ID: "on-xylo", Model: "test-lm", Dev: mock.New(xylo, nil)}); err != nil {
		t.Fatal(err)
	}
	if withXylo, _ := rt.ModelInfo("test-lm"); !slices.Equal(withXylo.Devices, addDevice(slices.Clone(info.Devices), "xylo")) || !slices.IsSorted(withXylo.Devices) {
		t.Errorf("with a deployment on xylo: %v", withXylo.Devices)
	}
	m, _ := rt.Model("test-lm")
	m.Card.Neurons = 7 // the card's figure wins; the cached description is not worked out again
	if again, _ := rt.ModelInfo("test-lm"); again.Neurons != info.Neurons {
		t.Errorf("worked out again: %+v", again)
	}
	info.Devices[0] = "changed" // the caller's copy
	if again, _ := rt.ModelInfo("test-lm"); again.Devices[0] == "changed" {
		t.Error("the cached devices are shared with callers")
	}
	if _, err := rt.ModelInfo("nope"); !errors.Is(err, ErrModelNotFound) {
		t.Errorf("unknown model: %v", err)
	}
}
