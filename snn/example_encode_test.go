package snn_test

import (
	"fmt"

	"github.com/neuro-go/neuro/snn"
)

func ExampleBernoulli() {
	// Four inputs firing at 0, 100, 500 and 1000 Hz, stepped at 1 ms.
	enc, err := snn.NewBernoulli(&snn.BernoulliOptions{Seed: 42, Dt: 1e-3})
	if err != nil {
		panic(err)
	}
	rates := []float32{0, 100, 500, 1000}
	spikes := make([]float32, len(rates))
	count := make([]int, len(rates))
	for range 1000 {
		if err := enc.Encode(spikes, rates); err != nil {
			panic(err)
		}
		for i, s := range spikes {
			count[i] += int(s)
		}
	}
	fmt.Println("spikes in one second:", count[0], count[3])
	fmt.Println("near their rates:", count[1] > 70 && count[1] < 130, count[2] > 450 && count[2] < 550)
	// Output:
	// spikes in one second: 0 1000
	// near their rates: true true
}

func ExampleOneHot() {
	// Two batch slots over a vocabulary of 5 tokens: token 3 and token 0.
	dst := make([]float32, 2*5)
	if err := (snn.OneHot{}).Encode(dst, 3, 0); err != nil {
		panic(err)
	}
	fmt.Println(dst)
	fmt.Println((snn.OneHot{}).Encode(dst, 5, 0))
	// Output:
	// [0 0 0 1 0 1 0 0 0 0]
	// snn: OneHot.Encode: id 5 (slot 0) out of range [0, 5)
}

func ExampleDirect() {
	// One sample of three values, copied into both slots of a batch of 2.
	dst := make([]float32, 2*3)
	if err := (snn.Direct{Gain: 10}).Encode(dst, []float32{0.1, 0.2, 0.3}); err != nil {
		panic(err)
	}
	fmt.Println(dst)
	// Output:
	// [1 2 3 1 2 3]
}
