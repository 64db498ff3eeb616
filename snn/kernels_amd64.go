//go:build amd64 && !noasm

package snn

import "golang.org/x/sys/cpu"

// hostISA is the best kernel set this CPU runs. AVX-512 needs F for the
// arithmetic, BW for the 16-bit weight loads and VL/DQ for the masks.
var hostISA = func() isaLevel {
	x := cpu.X86
	switch {
	case x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512DQ && x.HasFMA:
		return isaAVX512
	case x.HasAVX2 && x.HasFMA:
		return isaAVX2
	}
	return isaGo
}()
