package snn

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernels; they need AVX2 and FMA.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func axpbyAVX2(a, b float32, y, x *float32, n int)

//go:noescape
func scalAVX2(a float32, y *float32, n int)

//go:noescape
func nextAboveAVX2(u *float32, n int, th float32) int

//go:noescape
func gemvTAVX2(y, w, x *float32, nin, ldw, cols int)
