package xylo_test

import (
	"fmt"

	"github.com/neuro-go/neuro/runtime/hal/xylo"
)

func ExampleConvert() {
	// Input(1) → 0.5 → LIF(τ 16 ms) → 1 → LIF(τ 16 ms) → Output, dt 1 ms.
	net, rep, err := xylo.Convert(chain(1, 1, lif(16e-3), lif(16e-3)), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	h := rep.Neurons[0]
	fmt.Printf("input weight %d << %d, threshold %d\n", net.WIn[0][0], net.ShiftIn, net.Threshold[0])
	fmt.Printf("dash_mem %d: τ %.1f ms asked, %.2f ms on the chip\n", h.DashMem[0], h.TauMem[0]*1e3, h.TauMemEff[0]*1e3)
	// Output:
	// input weight 64 << 2, threshold 8192
	// dash_mem 4: τ 16.0 ms asked, 15.49 ms on the chip
}

func ExampleCore() {
	n := xylo.NewNetwork(1, 1, 1)
	n.WIn[0][0], n.ShiftIn = 100, 2 // 400 per input event
	n.DashSyn[0], n.DashMem[0], n.Threshold[0] = 1, 2, 500
	c, _ := xylo.NewCore(n, 1)
	for _, events := range []uint8{1, 0, 3} {
		c.Step([]uint8{events})
		fmt.Println(c.HiddenISyn(0)[0], c.HiddenV(0)[0], c.HiddenSpikes(0)[0])
	}
	// Output:
	// 200 200 0
	// 100 250 0
	// 650 338 1
}

// A program that links the backend configures it with types; the
// registry's string options arrive at the same Config.
func ExampleNew() {
	dev, err := xylo.New(&xylo.Config{InputQuantum: 0.25})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(dev.Capabilities().Name, dev.Config().InputQuantum)
	_, err = xylo.New(&xylo.Config{ThresholdTarget: 1 << 16})
	fmt.Println(err)
	// Output:
	// xylo 0.25
	// xylo: Config.ThresholdTarget 65536 out of [1, 32767]
}
