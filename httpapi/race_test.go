//go:build race

package httpapi

// raceEnabled is true under the race detector, whose instrumentation
// allocates: tests that count allocations skip then.
const raceEnabled = true
