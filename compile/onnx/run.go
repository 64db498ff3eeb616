package onnx

import (
	"fmt"
	"math"
)

// Run computes the model's outputs for inputs (by graph input name) with a
// plain float32 reference implementation of the supported operators. It is
// slow and simple on purpose: it is the yardstick that an importer or the
// ANN-to-SNN conversion checks itself against, not an inference engine.
// Input shapes must match the declared ones where those are numbers; symbolic
// dimensions (a batch axis) take any size. Run does not modify m or inputs.
func (m *Model) Run(inputs map[string]*Tensor) (map[string]*Tensor, error) {
	vals := make(map[string]*Tensor, len(m.Nodes)+len(m.Initializers)+len(inputs))
	for name, t := range m.Initializers {
		vals[name] = t
	}
	for _, v := range m.Inputs {
		t, ok := inputs[v.Name]
		if !ok || t == nil {
			return nil, fmt.Errorf("onnx: Run: input %q is missing", v.Name)
		}
		if t.DType != Float32 {
			return nil, fmt.Errorf("onnx: Run: input %q is %v, want FLOAT", v.Name, t.DType)
		}
		if v.Shape != nil && !compatible(t.Shape, v.Shape) {
			return nil, fmt.Errorf("onnx: Run: input %q has shape %v, model declares %v", v.Name, t.Shape, v.Shape)
		}
		for _, d := range t.Shape {
			if d <= 0 {
				return nil, fmt.Errorf("onnx: Run: input %q has shape %v", v.Name, t.Shape)
			}
		}
		if _, err := elements(fmt.Sprintf("input %q", v.Name), knownDims(t.Shape), m.limits().maxTensor); err != nil {
			return nil, err
		}
		if len(t.Data) != t.Len() {
			return nil, fmt.Errorf("onnx: Run: input %q has %d values for shape %v", v.Name, len(t.Data), t.Shape)
		}
		vals[v.Name] = t
	}
	for i := range m.Nodes {
		n := &m.Nodes[i]
		in := make([]*Tensor, len(n.Inputs))
		shapes := make([][]int, len(n.Inputs))
		for j, name := range n.Inputs {
			if name == "" {
				continue
			}
			in[j] = vals[name]
			if in[j] == nil {
				return nil, &NodeError{Op: n.Op, Node: n.Label(), Err: fmt.Errorf("input %q has no value", name)}
			}
			shapes[j] = in[j].Shape
		}
		shape, err := m.inferNode(n, shapes)
		if err == nil {
			_, err = elements(fmt.Sprintf("output %q", n.Outputs[0]), knownDims(shape), m.limits().maxTensor)
		}
		if err == nil {
			var out *Tensor
			out, err = eval(n, in, shape)
			vals[n.Outputs[0]] = out
		}
		if err != nil {
			return nil, &NodeError{Op: n.Op, Node: n.Label(), Err: err}
		}
	}
	out := make(map[string]*Tensor, len(m.Outputs))
	for _, v := range m.Outputs {
		out[v.Name] = vals[v.Name]
	}
	return out, nil
}

func (m *Model) limits() limits {
	if m.lim.maxTensor == 0 {
		return (*Options)(nil).limits()
	}
	return m.lim
}

// floats returns the float32 data of an input that must be FLOAT.
func floats(t *Tensor, what string) ([]float32, error) {
	if t.DType != Float32 {
		return nil, unsupported("%s is %v; Run computes FLOAT tensors only", what, t.DType)
	}
	return t.Data, nil
}

func eval(n *Node, in []*Tensor, shape []int) (*Tensor, error) {
	if n.Op == "Constant" {
		return n.Attrs["value"].Tensor, nil
	}
	x, err := floats(in[0], "input 0")
	if err != nil {
		if n.Op == "Identity" || n.Op == "Reshape" || n.Op == "Flatten" {
			return &Tensor{DType: in[0].DType, Shape: shape, Int64s: in[0].Int64s}, nil
		}
		return nil, err
	}
	out := &Tensor{DType: Float32, Shape: shape}
	switch n.Op {
	case "Identity", "Dropout", "Flatten", "Reshape":
		out.Data = x // shared: no operator modifies its inputs
		return out, nil
	}
	out.Data = make([]float32, dimProduct(shape))
	y := out.Data
	switch n.Op {
	case "Relu":
		for i, v := range x {
			y[i] = max(v, 0)
		}
	case "Add":
		b, err := floats(in[1], "input 1")
		if err != nil {
			return nil, err
		}
		broadcastAdd(x, in[0].Shape, b, in[1].Shape, y, shape)
	case "Gemm":
		if err := evalGemm(n, in, y, shape); err != nil {
			return nil, err
		}
	case "MatMul":
		b, err := floats(in[1], "input 1")
		if err != nil {
			return nil, err
		}
		evalMatMul(x, in[0].Shape, b, in[1].Shape, y, shape)
	case "Conv":
		if err := evalConv(n, in, y, shape); err != nil {
			return nil, err
		}
	case "AveragePool", "MaxPool":
		s := in[0].Shape
		w, err := newWindow(n, s[2:], toInts(n.Ints("kernel_shape", nil)))
		if err != nil {
			return nil, err
		}
		evalPool(n, x, s, w, y)
	case "GlobalAveragePool":
		nc := shape[0] * shape[1]
		size := len(x) / nc
		for i := 0; i < nc; i++ {
			var s float64
			for _, v := range x[i*size : (i+1)*size] {
				s += float64(v)
			}
			y[i] = float32(s / float64(size))
		}
	case "BatchNormalization":
		var p [4][]float32
		for j := range p {
			if p[j], err = floats(in[j+1], "parameter"); err != nil {
				return nil, err
			}
		}
		eps := float64(n.Float("epsilon", 1e-5))
		s := in[0].Shape
		c, inner := s[1], dimProduct(s[2:])
		for i := range x {
			ch := (i / inner) % c
			scale := float64(p[0][ch]) / math.Sqrt(float64(p[3][ch])+eps)
			y[i] = float32((float64(x[i])-float64(p[2][ch]))*scale + float64(p[1][ch]))
		}
	case "Transpose":
		perm, _ := transposePerm(n, len(in[0].Shape))
		evalTranspose(x, in[0].Shape, perm, y, shape)
	case "Pad":
		evalPad(x, in[0].Shape, n.Ints("pads", nil), n.Float("value", 0), y, shape)
	default:
		return nil, unsupported("Run has no kernel for %s", n.Op)
	}
	return out, nil
}

func strides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// bstrides returns strides of shape aligned to an output of rank r, with 0
// for broadcast dimensions.
func bstrides(shape []int, r int, out []int) []int {
	st := strides(shape)
	b := make([]int, r)
	for i := range shape {
		j := i + r - len(shape)
		if shape[i] != 1 || out[j] == 1 {
			b[j] = st[i]
		}
	}
	return b
}

func broadcastAdd(a []float32, as []int, b []float32, bs []int, y []float32, ys []int) {
	r := len(ys)
	sa, sb := bstrides(as, r, ys), bstrides(bs, r, ys)
	idx := make([]int, r)
	for i := range y {
		ia, ib := 0, 0
		for d := 0; d < r; d++ {
			ia += idx[d] * sa[d]
			ib += idx[d] * sb[d]
		}
		y[i] = a[ia] + b[ib]
		for d := r - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < ys[d] {
				break
			}
			idx[d] = 0
		}
	}
}

func evalGemm(n *Node, in []*Tensor, y []float32, ys []int) error {
	a, err := floats(in[0], "A")
	if err != nil {
		return err
	}
	b, err := floats(in[1], "B")
	if err != nil {
		return err
	}
	ta, tb := n.Int("transA", 0) != 0, n.Int("transB", 0) != 0
	alpha, beta := float64(n.Float("alpha", 1)), n.Float("beta", 1)
	M, N := ys[0], ys[1]
	K := in[0].Shape[1]
	if ta {
		K = in[0].Shape[0]
	}
	for i := 0; i < M; i++ {
		for j := 0; j < N; j++ {
			var s float64
			for k := 0; k < K; k++ {
				av, bv := a[i*K+k], b[k*N+j]
				if ta {
					av = a[k*M+i]
				}
				if tb {
					bv = b[j*K+k]
				}
				s += float64(av) * float64(bv)
			}
			y[i*N+j] = float32(alpha * s)
		}
	}
	if len(in) > 2 && in[2] != nil && beta != 0 {
		c, err := floats(in[2], "C")
		if err != nil {
			return err
		}
		sc := bstrides(in[2].Shape, 2, ys)
		for i := 0; i < M; i++ {
			for j := 0; j < N; j++ {
				y[i*N+j] += beta * c[i*sc[0]+j*sc[1]]
			}
		}
	}
	return nil
}

func evalMatMul(a []float32, as []int, b []float32, bs []int, y []float32, ys []int) {
	r := len(ys)
	M, N, K := ys[r-2], ys[r-1], as[len(as)-1]
	batch := ys[:r-2]
	sa := bstrides(as[:len(as)-2], len(batch), batch)
	sb := bstrides(bs[:len(bs)-2], len(batch), batch)
	nb := dimProduct(batch)
	idx := make([]int, len(batch))
	for bi := 0; bi < nb; bi++ {
		oa, ob := 0, 0
		for d := range batch {
			oa += idx[d] * sa[d]
			ob += idx[d] * sb[d]
		}
		oa, ob = oa*M*K, ob*K*N
		for i := 0; i < M; i++ {
			for j := 0; j < N; j++ {
				var s float64
				for k := 0; k < K; k++ {
					s += float64(a[oa+i*K+k]) * float64(b[ob+k*N+j])
				}
				y[bi*M*N+i*N+j] = float32(s)
			}
		}
		for d := len(batch) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < batch[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// as2D views a 1-D spatial layout [N,C,W] as [N,C,1,W].
func as2D(s []int) (h, w int) {
	if len(s) == 3 {
		return 1, s[2]
	}
	return s[2], s[3]
}

func win2D(w *window) (kh, kw, sh, sw, dh, dw, ph, pw int) {
	if len(w.k) == 1 {
		return 1, w.k[0], 1, w.s[0], 1, w.d[0], 0, w.pb[0]
	}
	return w.k[0], w.k[1], w.s[0], w.s[1], w.d[0], w.d[1], w.pb[0], w.pb[1]
}

func evalConv(n *Node, in []*Tensor, y []float32, ys []int) error {
	x, err := floats(in[0], "X")
	if err != nil {
		return err
	}
	wt, err := floats(in[1], "W")
	if err != nil {
		return err
	}
	var bias []float32
	if len(in) > 2 && in[2] != nil {
		if bias, err = floats(in[2], "B"); err != nil {
			return err
		}
	}
	xs, ws := in[0].Shape, in[1].Shape
	w, err := newWindow(n, xs[2:], ws[2:])
	if err != nil {
		return err
	}
	g := int(n.Int("group", 1))
	N, C, M := xs[0], xs[1], ws[0]
	H, W := as2D(xs)
	OH, OW := as2D(ys)
	kh, kw, sh, sw, dh, dw, ph, pw := win2D(w)
	cg, mg := C/g, M/g
	for b := 0; b < N; b++ {
		for m := 0; m < M; m++ {
			gi := m / mg
			for oh := 0; oh < OH; oh++ {
				for ow := 0; ow < OW; ow++ {
					var s float64
					if bias != nil {
						s = float64(bias[m])
					}
					for c := 0; c < cg; c++ {
						xc := (b*C + gi*cg + c) * H * W
						wc := (m*cg + c) * kh * kw
						for i := 0; i < kh; i++ {
							ih := oh*sh - ph + i*dh
							if ih < 0 || ih >= H {
								continue
							}
							for j := 0; j < kw; j++ {
								iw := ow*sw - pw + j*dw
								if iw < 0 || iw >= W {
									continue
								}
								s += float64(x[xc+ih*W+iw]) * float64(wt[wc+i*kw+j])
							}
						}
					}
					y[((b*M+m)*OH+oh)*OW+ow] = float32(s)
				}
			}
		}
	}
	return nil
}

func evalPool(n *Node, x []float32, xs []int, w *window, y []float32) {
	isMax := n.Op == "MaxPool"
	includePad := n.Int("count_include_pad", 0) != 0
	NC := xs[0] * xs[1]
	H, W := as2D(xs)
	OH, OW := 1, w.out[0]
	if len(w.out) == 2 {
		OH, OW = w.out[0], w.out[1]
	}
	kh, kw, sh, sw, dh, dw, ph, pw := win2D(w)
	peh, pew := 0, w.pe[0]
	if len(w.pe) == 2 {
		peh, pew = w.pe[0], w.pe[1]
	}
	for c := 0; c < NC; c++ {
		xc := x[c*H*W : (c+1)*H*W]
		for oh := 0; oh < OH; oh++ {
			for ow := 0; ow < OW; ow++ {
				best := float32(math.Inf(-1))
				var s float64
				count, padded := 0, 0
				for i := 0; i < kh; i++ {
					ih := oh*sh - ph + i*dh
					for j := 0; j < kw; j++ {
						iw := ow*sw - pw + j*dw
						if ih >= -ph && ih < H+peh && iw >= -pw && iw < W+pew {
							padded++
						}
						if ih < 0 || ih >= H || iw < 0 || iw >= W {
							continue
						}
						v := xc[ih*W+iw]
						best = max(best, v)
						s += float64(v)
						count++
					}
				}
				o := (c*OH+oh)*OW + ow
				switch {
				case isMax:
					y[o] = best
				case includePad:
					y[o] = float32(s / float64(max(padded, 1)))
				default:
					y[o] = float32(s / float64(max(count, 1)))
				}
			}
		}
	}
}

func evalTranspose(x []float32, xs []int, perm []int, y []float32, ys []int) {
	st := strides(xs)
	ps := make([]int, len(perm))
	for i, p := range perm {
		ps[i] = st[p]
	}
	idx := make([]int, len(ys))
	for i := range y {
		o := 0
		for d := range idx {
			o += idx[d] * ps[d]
		}
		y[i] = x[o]
		for d := len(ys) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < ys[d] {
				break
			}
			idx[d] = 0
		}
	}
}

func evalPad(x []float32, xs []int, pads []int64, value float32, y []float32, ys []int) {
	r := len(xs)
	st := strides(xs)
	idx := make([]int, r)
	for i := range y {
		o, inside := 0, true
		for d := 0; d < r; d++ {
			src := idx[d] - int(pads[d])
			if src < 0 || src >= xs[d] {
				inside = false
				break
			}
			o += src * st[d]
		}
		if inside {
			y[i] = x[o]
		} else {
			y[i] = value
		}
		for d := r - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < ys[d] {
				break
			}
			idx[d] = 0
		}
	}
}
