package compile

import (
	"fmt"
	"math"

	"github.com/neuro-go/neuro/snn"
)

// ANNOp names an operation of an artificial network.
type ANNOp string

// The operations ConvertANN understands.
const (
	OpInput         ANNOp = "input"
	OpDense         ANNOp = "dense"     // y = W·x + b, W (out, in)
	OpConv2d        ANNOp = "conv2d"    // (C,H,W) in, weight (out, in/groups, kh, kw)
	OpReLU          ANNOp = "relu"      //
	OpAvgPool2d     ANNOp = "avgpool2d" // count_include_pad
	OpMaxPool2d     ANNOp = "maxpool2d" // approximated by average pooling
	OpGlobalAvgPool ANNOp = "globalavgpool"
	OpBatchNorm     ANNOp = "batchnorm" // y = Scale⊙x + Shift per channel
	OpFlatten       ANNOp = "flatten"
	OpAdd           ANNOp = "add"
	OpIdentity      ANNOp = "identity" // also Dropout at inference
)

// ANN is an artificial network as importers describe it before conversion:
// nodes in topological order, each reading the outputs of earlier nodes.
// Activations are per sample, channel-major (C,H,W) as in PyTorch.
type ANN struct {
	Nodes []*ANNNode
	// Output names the node whose value is the network's output; default
	// the last node.
	Output string
}

// ANNNode is one operation.
type ANNNode struct {
	Name   string
	Op     ANNOp
	Inputs []string
	// Shape is the per-sample output shape of OpInput.
	Shape []int
	// Weight and Bias of OpDense and OpConv2d (Bias may be nil).
	Weight *snn.Tensor
	Bias   []float32
	// Convolution and pooling geometry.
	Stride, Padding, Dilation [2]int
	Groups                    int
	Kernel                    [2]int
	// BatchNorm folded to an affine map per channel.
	Scale, Shift []float32

	outShape []int // resolved by shapes()
}

// BatchNormAffine turns inference-mode batch-norm statistics into the
// per-channel Scale and Shift of OpBatchNorm.
func BatchNormAffine(gamma, beta, mean, variance []float32, eps float64) (scale, shift []float32) {
	scale, shift = make([]float32, len(gamma)), make([]float32, len(gamma))
	for c := range gamma {
		s := float64(gamma[c]) / math.Sqrt(float64(variance[c])+eps)
		scale[c] = float32(s)
		shift[c] = float32(float64(beta[c]) - float64(mean[c])*s)
	}
	return scale, shift
}

func (a *ANN) outputName() string {
	if a.Output != "" {
		return a.Output
	}
	return a.Nodes[len(a.Nodes)-1].Name
}

// index resolves names and shapes, checking every node.
func (a *ANN) index() (map[string]*ANNNode, error) {
	if len(a.Nodes) == 0 {
		return nil, &UnsupportedError{Reason: "network has no layers"}
	}
	by := map[string]*ANNNode{}
	for _, n := range a.Nodes {
		if _, dup := by[n.Name]; dup || n.Name == "" {
			return nil, &UnsupportedError{Node: n.Name, Reason: "empty or duplicate layer name"}
		}
		var ins [][]int
		for _, in := range n.Inputs {
			src, ok := by[in]
			if !ok {
				return nil, &UnsupportedError{Node: n.Name, Reason: fmt.Sprintf("input %q is not an earlier layer", in)}
			}
			ins = append(ins, src.outShape)
		}
		out, err := annShape(n, ins)
		if err != nil {
			return nil, &UnsupportedError{Node: n.Name, Reason: err.Error()}
		}
		n.outShape = out
		by[n.Name] = n
	}
	if _, ok := by[a.outputName()]; !ok {
		return nil, &UnsupportedError{Node: a.Output, Reason: "output layer not found"}
	}
	return by, nil
}

func annShape(n *ANNNode, ins [][]int) ([]int, error) {
	want := 1
	switch n.Op {
	case OpInput:
		want = 0
	case OpAdd:
		want = 2
	}
	if len(ins) != want {
		return nil, fmt.Errorf("%s takes %d inputs, has %d", n.Op, want, len(ins))
	}
	switch n.Op {
	case OpInput:
		if len(n.Shape) == 0 || snn.Size(n.Shape) <= 0 {
			return nil, fmt.Errorf("input shape %v", n.Shape)
		}
		return n.Shape, nil
	case OpDense:
		if n.Weight == nil || len(n.Weight.Shape) != 2 {
			return nil, fmt.Errorf("dense weight must be 2-D")
		}
		if snn.Size(ins[0]) != n.Weight.Shape[1] {
			return nil, fmt.Errorf("dense takes %d inputs, gets %v", n.Weight.Shape[1], ins[0])
		}
		if n.Bias != nil && len(n.Bias) != n.Weight.Shape[0] {
			return nil, fmt.Errorf("bias has %d values for %d outputs", len(n.Bias), n.Weight.Shape[0])
		}
		return []int{n.Weight.Shape[0]}, nil
	case OpConv2d:
		if n.Weight == nil || len(n.Weight.Shape) != 4 || len(ins[0]) != 3 {
			return nil, fmt.Errorf("conv2d needs a 4-D weight and a (C,H,W) input, has %v and %v", n.Weight, ins[0])
		}
		c := &snn.Conv2d{Weight: n.Weight, Bias: n.Bias, Stride: n.Stride, Padding: n.Padding, Dilation: n.Dilation, Groups: n.Groups, InputShape: ins[0]}
		g := snn.NewGraph().Add("in", &snn.Input{Shape: ins[0]}).Add("c", c).Connect("in", "c")
		sh, err := g.Shapes()
		if err != nil {
			return nil, err
		}
		return sh["c"].Out, nil
	case OpAvgPool2d, OpMaxPool2d:
		if len(ins[0]) != 3 {
			return nil, fmt.Errorf("pooling needs a (C,H,W) input, has %v", ins[0])
		}
		g := snn.NewGraph().Add("in", &snn.Input{Shape: ins[0]}).Add("p", &snn.AvgPool2d{Kernel: n.Kernel, Stride: n.Stride, Padding: n.Padding}).Connect("in", "p")
		sh, err := g.Shapes()
		if err != nil {
			return nil, err
		}
		return sh["p"].Out, nil
	case OpGlobalAvgPool:
		if len(ins[0]) != 3 {
			return nil, fmt.Errorf("global pooling needs a (C,H,W) input, has %v", ins[0])
		}
		return []int{ins[0][0], 1, 1}, nil
	case OpBatchNorm:
		if len(n.Scale) != ins[0][0] || len(n.Shift) != ins[0][0] {
			return nil, fmt.Errorf("batch norm has %d/%d values for %d channels", len(n.Scale), len(n.Shift), ins[0][0])
		}
		return ins[0], nil
	case OpFlatten:
		return []int{snn.Size(ins[0])}, nil
	case OpAdd:
		if snn.Size(ins[0]) != snn.Size(ins[1]) {
			return nil, fmt.Errorf("add of shapes %v and %v", ins[0], ins[1])
		}
		return ins[0], nil
	case OpReLU, OpIdentity:
		return ins[0], nil
	}
	return nil, fmt.Errorf("unknown operation %q", n.Op)
}

// Forward runs the network on one sample in float64 and returns every
// node's output by name: the reference the conversion calibrates against.
func (a *ANN) Forward(x []float32) (map[string][]float64, error) {
	by, err := a.index()
	if err != nil {
		return nil, err
	}
	vals := map[string][]float64{}
	for _, n := range a.Nodes {
		var in []float64
		var inShape []int
		if len(n.Inputs) > 0 {
			in = vals[n.Inputs[0]]
			inShape = by[n.Inputs[0]].outShape
		}
		out := make([]float64, snn.Size(n.outShape))
		switch n.Op {
		case OpInput:
			if len(x) != len(out) {
				return nil, fmt.Errorf("compile: input has %d values, the network takes %d", len(x), len(out))
			}
			for i, v := range x {
				out[i] = float64(v)
			}
		case OpDense:
			nin := n.Weight.Shape[1]
			for r := range out {
				s := 0.0
				if n.Bias != nil {
					s = float64(n.Bias[r])
				}
				for j, w := range n.Weight.Data[r*nin : (r+1)*nin] {
					s += float64(w) * in[j]
				}
				out[r] = s
			}
		case OpConv2d:
			conv2dForward(in, inShape, n, n.outShape, out)
		case OpAvgPool2d, OpMaxPool2d:
			pool2dForward(in, inShape, n, n.outShape, out, n.Op == OpMaxPool2d)
		case OpGlobalAvgPool:
			sp := inShape[1] * inShape[2]
			for c := range out {
				s := 0.0
				for _, v := range in[c*sp : (c+1)*sp] {
					s += v
				}
				out[c] = s / float64(sp)
			}
		case OpBatchNorm:
			sp := len(in) / inShape[0]
			for i, v := range in {
				c := i / sp
				out[i] = float64(n.Scale[c])*v + float64(n.Shift[c])
			}
		case OpReLU:
			for i, v := range in {
				out[i] = math.Max(0, v)
			}
		case OpAdd:
			b := vals[n.Inputs[1]]
			for i := range out {
				out[i] = in[i] + b[i]
			}
		case OpFlatten, OpIdentity:
			copy(out, in)
		}
		vals[n.Name] = out
	}
	return vals, nil
}

func conv2dForward(in []float64, inShape []int, n *ANNNode, outShape []int, out []float64) {
	oc, icPer, kh, kw := n.Weight.Shape[0], n.Weight.Shape[1], n.Weight.Shape[2], n.Weight.Shape[3]
	ih, iw, oh, ow := inShape[1], inShape[2], outShape[1], outShape[2]
	ocPer := oc / n.Groups
	for o := 0; o < oc; o++ {
		g := o / ocPer
		for y := 0; y < oh; y++ {
			for x := 0; x < ow; x++ {
				s := 0.0
				if n.Bias != nil {
					s = float64(n.Bias[o])
				}
				for ci := 0; ci < icPer; ci++ {
					c := g*icPer + ci
					for ky := 0; ky < kh; ky++ {
						iy := y*n.Stride[0] - n.Padding[0] + ky*n.Dilation[0]
						if iy < 0 || iy >= ih {
							continue
						}
						for kx := 0; kx < kw; kx++ {
							ix := x*n.Stride[1] - n.Padding[1] + kx*n.Dilation[1]
							if ix < 0 || ix >= iw {
								continue
							}
							s += float64(n.Weight.Data[((o*icPer+ci)*kh+ky)*kw+kx]) * in[(c*ih+iy)*iw+ix]
						}
					}
				}
				out[(o*oh+y)*ow+x] = s
			}
		}
	}
}

func pool2dForward(in []float64, inShape []int, n *ANNNode, outShape []int, out []float64, isMax bool) {
	c, ih, iw, oh, ow := inShape[0], inShape[1], inShape[2], outShape[1], outShape[2]
	area := float64(n.Kernel[0] * n.Kernel[1])
	for ch := 0; ch < c; ch++ {
		for y := 0; y < oh; y++ {
			for x := 0; x < ow; x++ {
				s, m := 0.0, math.Inf(-1)
				for ky := 0; ky < n.Kernel[0]; ky++ {
					iy := y*n.Stride[0] - n.Padding[0] + ky
					for kx := 0; kx < n.Kernel[1]; kx++ {
						ix := x*n.Stride[1] - n.Padding[1] + kx
						if iy < 0 || ix < 0 || iy >= ih || ix >= iw {
							continue
						}
						v := in[(ch*ih+iy)*iw+ix]
						s += v
						m = math.Max(m, v)
					}
				}
				if isMax {
					out[(ch*oh+y)*ow+x] = m
				} else {
					out[(ch*oh+y)*ow+x] = s / area
				}
			}
		}
	}
}
