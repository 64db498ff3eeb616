package cpu_test

import (
	"context"
	"fmt"

	"github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/runtime/hal/haltest"
)

// A program that links the backend builds the device from a typed Config;
// hal.Open("cpu", ...) with the option "workers" builds the same one.
func ExampleNew() {
	dev, err := cpu.New(&cpu.Config{Workers: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	inst, err := dev.Load(context.Background(), haltest.Program(2, 1), 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer inst.Close()
	fmt.Println(dev.Config().Workers, inst.Batch())
	// Output:
	// 1 4
}
