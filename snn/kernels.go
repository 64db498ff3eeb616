package snn

// The vector kernels of the simulator's hot loops. Each has a portable
// version here; kernels_amd64.go may replace them with assembly.

// vecMin is the length from which the assembly kernels pay for their call.
const vecMin = 16

// axpby sets y = a·y + b·x.
func axpby(a float32, y []float32, b float32, x []float32) {
	x = x[:len(y)]
	if useAVX2 && len(y) >= vecMin {
		axpbyAVX2(a, b, &y[0], &x[0], len(y))
		return
	}
	axpbyGo(a, y, b, x)
}

func axpbyGo(a float32, y []float32, b float32, x []float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y0 := a*y[i] + b*x[i]
		y1 := a*y[i+1] + b*x[i+1]
		y2 := a*y[i+2] + b*x[i+2]
		y3 := a*y[i+3] + b*x[i+3]
		y[i], y[i+1], y[i+2], y[i+3] = y0, y1, y2, y3
	}
	for ; i < len(y); i++ {
		y[i] = a*y[i] + b*x[i]
	}
}

// axpy sets y = y + a·x.
func axpy(a float32, x, y []float32) {
	x = x[:len(y)]
	if useAVX2 && len(y) >= vecMin {
		axpbyAVX2(1, a, &y[0], &x[0], len(y))
		return
	}
	for i := range y {
		y[i] += a * x[i]
	}
}

// scal sets x = a·x.
func scal(a float32, x []float32) {
	if useAVX2 && len(x) >= vecMin {
		scalAVX2(a, &x[0], len(x))
		return
	}
	for i := range x {
		x[i] *= a
	}
}

// addTo sets y = y + x.
func addTo(y, x []float32) {
	x = x[:len(y)]
	if useAVX2 && len(y) >= vecMin {
		axpbyAVX2(1, 1, &y[0], &x[0], len(y))
		return
	}
	for i := range y {
		y[i] += x[i]
	}
}

// nextAbove returns the first index i >= from with u[i] > th, or len(u).
func nextAbove(u []float32, th float32, from int) int {
	if useAVX2 && len(u)-from >= vecMin {
		return from + nextAboveAVX2(&u[from], len(u)-from, th)
	}
	for i := from; i < len(u); i++ {
		if u[i] > th {
			return i
		}
	}
	return len(u)
}

// gemvT adds Σ_j x[j]·w[j·ldw : j·ldw+len(y)] to y: the product of a
// transposed (in × out, row stride ldw) weight matrix with a dense input.
func gemvT(y, w, x []float32, ldw int) {
	if len(x) == 0 || len(y) == 0 {
		return
	}
	_ = w[(len(x)-1)*ldw+len(y)-1]
	cols := 0
	if useAVX2 && len(y) >= 8 {
		cols = len(y) &^ 7
		gemvTAVX2(&y[0], &w[0], &x[0], len(x), ldw, cols)
	}
	if cols == len(y) {
		return
	}
	for j, xj := range x {
		if xj == 0 {
			continue
		}
		row := w[j*ldw+cols : j*ldw+len(y)]
		for i, v := range row {
			y[cols+i] += xj * v
		}
	}
}
