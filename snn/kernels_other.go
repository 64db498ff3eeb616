//go:build !amd64

package snn

const useAVX2 = false

func axpbyAVX2(a, b float32, y, x *float32, n int)    { panic("unreachable") }
func scalAVX2(a float32, y *float32, n int)           { panic("unreachable") }
func nextAboveAVX2(u *float32, n int, th float32) int { panic("unreachable") }
func gemvTAVX2(y, w, x *float32, nin, ldw, cols int)  { panic("unreachable") }
