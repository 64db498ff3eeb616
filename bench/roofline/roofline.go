// Package roofline measures this machine's limits for the benchmarks:
// memory bandwidth by a STREAM-like triad in Go, and the floating-point
// rate of the simulator's dense kernel with its operands in L1
// (snn.PeakFLOPS). bench/neuro1 and bench/cuba report what they reach as
// fractions of these.
package roofline

import (
	"os"
	"strings"
	"sync"
	"time"

	"github.com/neuro-go/neuro/snn"
)

// Limits are one machine's measured roofs.
type Limits struct {
	CPU            string  `json:"cpu"`
	Kernels        string  `json:"kernels"`
	Threads        int     `json:"threads"`
	TriadBytesPerS float64 `json:"triad_bytes_per_second"`
	PeakFLOPS      float64 `json:"peak_flops"`
}

// Measure takes the roofs on threads goroutines.
func Measure(threads int) Limits {
	return Limits{CPU: CPUName(), Kernels: snn.KernelISA(), Threads: threads,
		TriadBytesPerS: Triad(threads, 1<<23), PeakFLOPS: snn.PeakFLOPS(threads, 300*time.Millisecond)}
}

// Triad is the best of five STREAM triads a = b + s·c over float64 arrays
// of n elements each (Measure: n = 1<<23, 192 MiB a pass, beyond any cache),
// split among threads goroutines: bytes moved per second, counting a read
// of b and c and a write of a.
func Triad(threads, n int) float64 {
	a, b, c := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range b {
		b[i], c[i] = 1, 2
	}
	best := 0.0
	for range 5 {
		start := time.Now()
		var wg sync.WaitGroup
		per := (n + threads - 1) / threads
		for t := range threads {
			lo, hi := t*per, min((t+1)*per, n)
			wg.Add(1)
			go func() {
				defer wg.Done()
				aa, bb, cc := a[lo:hi], b[lo:hi], c[lo:hi]
				for i := range aa {
					aa[i] = bb[i] + 3*cc[i]
				}
			}()
		}
		wg.Wait()
		best = max(best, float64(24*n)/time.Since(start).Seconds())
	}
	return best
}

// CPUName is the model name of the first processor in /proc/cpuinfo, or
// "unknown CPU".
func CPUName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
