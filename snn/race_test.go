//go:build race

package snn_test

// raceEnabled is true under the race detector, whose instrumentation
// allocates: tests that count allocations skip then.
const raceEnabled = true
