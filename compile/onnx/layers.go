package onnx

import (
	"fmt"
	"slices"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// spatialInput returns input 0 of a Conv or pooling node, with the padding
// of a Pad folded into it, if any.
func (mp *mapper) spatialInput(n *Node) (annValue, [4]int, error) {
	if p, ok := mp.pads[n.Inputs[0]]; ok {
		return p.src, p.pads, nil
	}
	v, err := mp.value(n, 0)
	return v, [4]int{}, err
}

// padding resolves the window of a Conv or pooling node over a (C,H,W)
// input, adds extra (top, left, bottom, right), and requires the result to
// be symmetric. own reports whether the node's own pads are non-zero.
func (mp *mapper) padding(n *Node, in []int, k []int, extra [4]int) (pad [2]int, own bool, err error) {
	w, err := newWindow(n, in[1:], k)
	if err != nil {
		return pad, false, &NodeError{Op: n.Op, Node: n.Label(), Err: err}
	}
	own = w.pb[0] != 0 || w.pb[1] != 0 || w.pe[0] != 0 || w.pe[1] != 0
	top, left := w.pb[0]+extra[0], w.pb[1]+extra[1]
	bottom, right := w.pe[0]+extra[2], w.pe[1]+extra[3]
	if top != bottom || left != right {
		return pad, own, unsupportedNode(n, "asymmetric padding (top %d, left %d, bottom %d, right %d); only symmetric padding is supported", top, left, bottom, right)
	}
	return [2]int{top, left}, own, nil
}

func (mp *mapper) gemm(n *Node) error {
	if n.Int("transA", 0) != 0 {
		return unsupportedNode(n, "transA=1 (the input transposed) is not supported")
	}
	x, err := mp.value(n, 0)
	if err != nil {
		return err
	}
	b, err := mp.weight(n, 1, "weight B")
	if err != nil {
		return err
	}
	if len(b.Shape) != 2 {
		return badNode(n, "weight B has shape %v, want 2-D", b.Shape)
	}
	alpha, beta := float64(n.Float("alpha", 1)), float64(n.Float("beta", 1))
	k, o := b.Shape[0], b.Shape[1]
	transB := n.Int("transB", 0) != 0
	if transB {
		k, o = o, k
	}
	if len(x.shape) != 1 || x.shape[0] != k {
		return badNode(n, "input of %v per sample for a weight of %d inputs", x.shape, k)
	}
	w := snn.NewTensor(o, k)
	for r := 0; r < o; r++ {
		for c := 0; c < k; c++ {
			v := b.Data[c*o+r]
			if transB {
				v = b.Data[r*k+c]
			}
			w.Data[r*k+c] = float32(alpha * float64(v))
		}
	}
	var bias []float32
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		c, err := mp.weight(n, 2, "bias C")
		if err != nil {
			return err
		}
		bias, err = channelBias(n, c, 2, o)
		if err != nil {
			return err
		}
		for i := range bias {
			bias[i] = float32(beta * float64(bias[i]))
		}
	}
	return mp.dense(n, x, w, bias)
}

func (mp *mapper) matmul(n *Node) error {
	if _, isConst := mp.constant(n.Inputs[0]); isConst {
		return unsupportedNode(n, "the left operand is a constant; only input × constant weight maps to a dense layer")
	}
	x, err := mp.value(n, 0)
	if err != nil {
		return err
	}
	if len(x.shape) != 1 {
		return unsupportedNode(n, "input of rank %d; only [batch, features] inputs map to a dense layer", len(x.shape)+1)
	}
	b, err := mp.weight(n, 1, "weight")
	if err != nil {
		return err
	}
	if len(b.Shape) != 2 {
		return unsupportedNode(n, "weight of shape %v; only a 2-D weight maps to a dense layer", b.Shape)
	}
	k, o := b.Shape[0], b.Shape[1]
	if x.shape[0] != k {
		return badNode(n, "input of %d features for a weight of %d rows", x.shape[0], k)
	}
	w := snn.NewTensor(o, k)
	for r := 0; r < o; r++ {
		for c := 0; c < k; c++ {
			w.Data[r*k+c] = b.Data[c*o+r]
		}
	}
	return mp.dense(n, x, w, nil)
}

func (mp *mapper) dense(n *Node, x annValue, w *snn.Tensor, bias []float32) error {
	if i, ok := finite(w.Data); !ok {
		return badNode(n, "scaled weight is not finite at %d", i)
	}
	if i, ok := finite(bias); !ok {
		return badNode(n, "scaled bias is not finite at %d", i)
	}
	mp.add(&compile.ANNNode{Name: mp.name(n.Label()), Op: compile.OpDense, Inputs: []string{x.node}, Weight: w, Bias: bias}, []int{w.Shape[0]}, n.Outputs[0])
	return nil
}

// channelBias broadcasts constant c, added to a value of rank r whose
// dimension 1 has ch entries (features or channels), to one value per
// entry. Any other broadcast (over the batch, or varying over space) is
// refused.
func channelBias(n *Node, c *Tensor, r, ch int) ([]float32, error) {
	if len(c.Shape) > r {
		return nil, unsupportedNode(n, "constant of shape %v adds dimensions to a rank-%d value", c.Shape, r)
	}
	full := make([]int, r)
	for i := range full {
		full[i] = 1
	}
	copy(full[r-len(c.Shape):], c.Shape)
	for i, d := range full {
		if d != 1 && (i != 1 || d != ch) {
			return nil, unsupportedNode(n, "constant of shape %v is not one value per channel of %d (nor one value)", c.Shape, ch)
		}
	}
	out := make([]float32, ch)
	for i := range out {
		out[i] = c.Data[0]
		if full[1] == ch && ch > 1 {
			out[i] = c.Data[i]
		}
	}
	return out, nil
}

// addOp maps Add: of two computed values, an add layer; of a value and a
// constant, the bias of the dense or convolution layer just before.
func (mp *mapper) addOp(n *Node) error {
	_, c0 := mp.constant(n.Inputs[0])
	_, c1 := mp.constant(n.Inputs[1])
	switch {
	case c0 && c1:
		return unsupportedNode(n, "both operands are constants (constant subgraphs are not folded)")
	case !c0 && !c1:
		a, err := mp.value(n, 0)
		if err != nil {
			return err
		}
		b, err := mp.value(n, 1)
		if err != nil {
			return err
		}
		if !slices.Equal(a.shape, b.shape) {
			return unsupportedNode(n, "operands of shapes %v and %v per sample; only an add of equal shapes (no broadcasting) is supported", a.shape, b.shape)
		}
		mp.add(&compile.ANNNode{Name: mp.name(n.Label()), Op: compile.OpAdd, Inputs: []string{a.node, b.node}}, a.shape, n.Outputs[0])
		return nil
	}
	xi, ci := 0, 1
	if c0 {
		xi, ci = 1, 0
	}
	x, err := mp.value(n, xi)
	if err != nil {
		return err
	}
	prev := mp.by[x.node]
	if prev == nil || !x.direct || mp.uses[n.Inputs[xi]] != 1 || (prev.Op != compile.OpDense && prev.Op != compile.OpConv2d) {
		return unsupportedNode(n, "an Add of a constant is supported only as the bias of a Gemm, MatMul or Conv whose output feeds nothing else")
	}
	c, err := mp.weight(n, ci, "bias")
	if err != nil {
		return err
	}
	ch := x.shape[0]
	bias, err := channelBias(n, c, len(x.shape)+1, ch)
	if err != nil {
		return err
	}
	if prev.Bias == nil {
		prev.Bias = make([]float32, ch)
	}
	for i, v := range bias {
		prev.Bias[i] += v
	}
	if i, ok := finite(prev.Bias); !ok {
		return badNode(n, "bias is not finite at %d", i)
	}
	mp.vals[n.Outputs[0]] = annValue{node: prev.Name, shape: x.shape, direct: true}
	mp.notes.folded = append(mp.notes.folded, fmt.Sprintf("node %q (Add): folded into the bias of %q", n.Label(), prev.Name))
	return nil
}

func (mp *mapper) conv(n *Node) error {
	x, extra, err := mp.spatialInput(n)
	if err != nil {
		return err
	}
	if len(x.shape) != 3 {
		return unsupportedNode(n, "input of %d dimensions per sample; only 2-D convolution ([batch, C, H, W]) is supported", len(x.shape))
	}
	w, err := mp.weight(n, 1, "weight")
	if err != nil {
		return err
	}
	if len(w.Shape) != 4 {
		return badNode(n, "weight of shape %v, want 4-D", w.Shape)
	}
	pad, _, err := mp.padding(n, x.shape, w.Shape[2:], extra)
	if err != nil {
		return err
	}
	var bias []float32
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		b, err := mp.weight(n, 2, "bias")
		if err != nil {
			return err
		}
		if len(b.Data) != w.Shape[0] {
			return badNode(n, "bias of %d values for %d output channels", len(b.Data), w.Shape[0])
		}
		bias = slices.Clone(b.Data)
	}
	st, dil := toInts(n.Ints("strides", []int64{1, 1})), toInts(n.Ints("dilations", []int64{1, 1}))
	shape, err := mp.sample(n)
	if err != nil {
		return err
	}
	mp.add(&compile.ANNNode{
		Name: mp.name(n.Label()), Op: compile.OpConv2d, Inputs: []string{x.node},
		Weight: &snn.Tensor{Shape: slices.Clone(w.Shape), Data: slices.Clone(w.Data)}, Bias: bias,
		Stride: [2]int{st[0], st[1]}, Padding: pad, Dilation: [2]int{dil[0], dil[1]}, Groups: int(n.Int("group", 1)),
	}, shape, n.Outputs[0])
	return nil
}

func (mp *mapper) pool(n *Node) error {
	x, extra, err := mp.spatialInput(n)
	if err != nil {
		return err
	}
	if len(x.shape) != 3 {
		return unsupportedNode(n, "input of %d dimensions per sample; only 2-D pooling ([batch, C, H, W]) is supported", len(x.shape))
	}
	k := toInts(n.Ints("kernel_shape", nil))
	if len(k) != 2 {
		return badNode(n, "kernel_shape %v, want 2 values", k)
	}
	for _, d := range n.Ints("dilations", nil) {
		if d != 1 {
			return unsupportedNode(n, "dilations %v; pooling with dilation is not supported", n.Ints("dilations", nil))
		}
	}
	pad, own, err := mp.padding(n, x.shape, k, extra)
	if err != nil {
		return err
	}
	op := compile.OpMaxPool2d
	if n.Op == "AveragePool" {
		op = compile.OpAvgPool2d
		if own && n.Int("count_include_pad", 0) == 0 {
			return unsupportedNode(n, "count_include_pad=0 with padding averages border windows over fewer values; the converted network divides by the whole kernel (export with count_include_pad=True, or pad with a Pad node)")
		}
	}
	st := toInts(n.Ints("strides", []int64{1, 1}))
	shape, err := mp.sample(n)
	if err != nil {
		return err
	}
	// The ANN pools in floor mode; ceil_mode is refused where it adds a
	// partial window.
	for i := 0; i < 2; i++ {
		if floor := (x.shape[i+1]+2*pad[i]-k[i])/st[i] + 1; floor != shape[i+1] {
			return unsupportedNode(n, "ceil_mode=1 adds a partial window (%d outputs, %d in floor mode); only floor mode is supported", shape[i+1], floor)
		}
	}
	name := mp.name(n.Label())
	mp.add(&compile.ANNNode{Name: name, Op: op, Inputs: []string{x.node}, Kernel: [2]int{k[0], k[1]}, Stride: [2]int{st[0], st[1]}, Padding: pad}, shape, n.Outputs[0])
	if op == compile.OpMaxPool2d {
		mp.notes.approximated = append(mp.notes.approximated, fmt.Sprintf("node %q (MaxPool): max pooling approximated by average pooling in the spiking network", n.Label()))
	}
	return nil
}

func (mp *mapper) batchNorm(n *Node) error {
	x, err := mp.value(n, 0)
	if err != nil {
		return err
	}
	ch := x.shape[0]
	var p [4][]float32
	for j, what := range []string{"scale", "B", "mean", "var"} {
		t, err := mp.weight(n, j+1, what)
		if err != nil {
			return err
		}
		if len(t.Data) != ch {
			return badNode(n, "%s has %d values for %d channels", what, len(t.Data), ch)
		}
		p[j] = t.Data
	}
	eps := float64(n.Float("epsilon", 1e-5))
	for c, v := range p[3] {
		if !(float64(v)+eps > 0) {
			return badNode(n, "variance %v plus epsilon %v of channel %d is not positive", v, eps, c)
		}
	}
	scale, shift := compile.BatchNormAffine(p[0], p[1], p[2], p[3], eps)
	if i, ok := finite(scale); !ok {
		return badNode(n, "scale is not finite in channel %d", i)
	}
	if i, ok := finite(shift); !ok {
		return badNode(n, "shift is not finite in channel %d", i)
	}
	mp.add(&compile.ANNNode{Name: mp.name(n.Label()), Op: compile.OpBatchNorm, Inputs: []string{x.node}, Scale: scale, Shift: shift}, x.shape, n.Outputs[0])
	return nil
}

// transpose folds a Transpose of a constant.
func transpose(n *Node, t *Tensor) (*Tensor, error) {
	r := len(t.Shape)
	perm, err := transposePerm(n, r)
	if err != nil {
		return nil, &NodeError{Op: n.Op, Node: n.Label(), Err: err}
	}
	shape := make([]int, r)
	for i, p := range perm {
		shape[i] = t.Shape[p]
	}
	out := &Tensor{DType: t.DType, Shape: shape}
	if t.DType == Float32 {
		out.Data = make([]float32, len(t.Data))
	} else {
		out.Int64s = make([]int64, len(t.Int64s))
	}
	// Strides of the source, read in the order of the output's axes.
	src := make([]int, r)
	s := 1
	for i := r - 1; i >= 0; i-- {
		src[i] = s
		s *= t.Shape[i]
	}
	idx := make([]int, r)
	for o := 0; o < t.Len(); o++ {
		off := 0
		for i, p := range perm {
			off += idx[i] * src[p]
		}
		if t.DType == Float32 {
			out.Data[o] = t.Data[off]
		} else {
			out.Int64s[o] = t.Int64s[off]
		}
		for i := r - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out, nil
}
