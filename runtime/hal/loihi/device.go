package loihi

import (
	"context"
	"fmt"
	"math"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/snn"
)

// Name is the name the backend registers.
const Name = "loihi"

func init() {
	hal.Register(Name, func(cfg hal.Config) (hal.Device, error) {
		var c Config
		if err := hal.ParseOptions(Name, cfg.Options, map[string]func(string) error{
			"input_bits":      hal.IntOption(&c.InputBits),
			"input_frac_bits": hal.IntOption(&c.InputFracBits),
			"timesteps":       hal.IntOption(&c.Timesteps),
			"payload_bits":    hal.IntOption(&c.PayloadBits),
			"headroom":        hal.FloatOption(&c.Headroom),
			"range_margin":    hal.FloatOption(&c.RangeMargin),
			"ranges":          func(v string) error { c.Ranges = v; return nil },
		}); err != nil {
			return nil, err
		}
		d, err := New(&c)
		if err != nil {
			return nil, err
		}
		return d, nil
	})
}

// Chip limits and costs. Sources:
//
//   - Intel, "Taking Neuromorphic Computing to the Next Level with Loihi 2",
//     technology brief, 2021 (with Orchard et al., "Efficient Neuromorphic
//     Signal Processing with Loihi 2", IEEE SiPS 2021): 128 neuro cores per
//     chip, up to 8,192 neurons per core (1 million per chip), up to 120
//     million synapses per chip.
//   - Synapses per core and fan-in per neuron are not published as fixed
//     figures for Loihi 2: its per-core memory is shared between synapses,
//     neuron state and microcode. We take 131,072 8-bit synapses per core
//     (128 KiB, the synaptic memory of a Loihi 1 core, Davies et al. 2018),
//     a conservative choice since 120 M / 128 cores is about 937 k per core
//     in the most compact encodings; a neuron's synapses live on its core,
//     so the fan-in bound is the same figure.
//   - Energy and time per operation: Davies et al., "Loihi: A Neuromorphic
//     Manycore Processor with On-Chip Learning", IEEE Micro 38(1), 2018,
//     Table 1 (Loihi 1, 14 nm, 0.75 V; Intel has not published a Loihi 2
//     table of the same form): synaptic spike operation 23.6 pJ and 3.5 ns;
//     neuron update 52 pJ / 5.3 ns inactive, 81 pJ / 8.4 ns active (the
//     spike cost below is the difference); barrier synchronisation 113 to
//     465 ns per tile, of which we take the upper figure.
const (
	Cores             = 128
	NeuronsPerCore    = 8192
	SynapsesPerCore   = 131072
	MaxFanIn          = SynapsesPerCore
	MaxSynapsesOnChip = 120_000_000
)

// Target is the Loihi 2 resource and cost model.
func Target() compile.Target {
	return compile.Target{
		Name:            "loihi2",
		Cores:           Cores,
		NeuronsPerCore:  NeuronsPerCore,
		SynapsesPerCore: SynapsesPerCore,
		MaxFanIn:        MaxFanIn,
		WeightBits:      8,
		StateBits:       StateBits,
		Kinds: []snn.Kind{snn.KindInput, snn.KindOutput, snn.KindLinear, snn.KindAffine,
			snn.KindLIF, snn.KindCubaLIF, snn.KindIF, snn.KindLI, snn.KindCubaLI, snn.KindI, snn.KindThreshold, snn.KindDelay},
		Energy: compile.EnergyModel{
			SynapticOpPJ: 23.6, NeuronUpdatePJ: 52, SpikePJ: 81 - 52,
			Source: "Davies et al. 2018, IEEE Micro 38(1), Table 1: Loihi 1 figures (Loihi 2's are not published in this form)",
		},
		Latency: compile.LatencyModel{
			SynapticOpNS: 3.5, NeuronUpdateNS: 5.3, SpikeNS: 8.4 - 5.3, PerStepNS: 465,
			Source: "Davies et al. 2018, IEEE Micro 38(1), Table 1: Loihi 1 figures; barrier sync 113-465 ns per tile, upper figure",
		},
	}
}

// Device is the Loihi 2 emulator. The zero value is a device with the
// default Config.
type Device struct {
	cfg Config
}

// New returns the emulator; nil cfg means the defaults. The defaults that
// depend on the Program (Timesteps) are taken from each Program loaded.
func New(cfg *Config) (*Device, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &Device{cfg: c}, nil
}

// Config returns the configuration the device was built with.
func (d *Device) Config() Config { return d.cfg }

// Capabilities describes the emulated chip.
func (d *Device) Capabilities() hal.Capabilities {
	return hal.Capabilities{Name: Name, Kind: hal.KindEmulator, Vendor: "Intel", Model: "Loihi 2 (Lava bit-accurate CUBA LIF)", Target: Target()}
}

// Load estimates from p's sparsity patterns whether its folded form can
// fit the chip and refuses it at once if not (estimatePlacement), folds
// p's linear regions (compile.FoldLinear), checks that the result fits, converts it to integers and returns an instance
// with batch independent states. The readout neurons of an Output fed by
// synapses count as a layer of their own, named "<output>/readout", in the
// placement.
func (d *Device) Load(ctx context.Context, p *compile.Program, batch int) (hal.Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := hal.CheckBatch(d.Capabilities(), batch); err != nil {
		return nil, err
	}
	if p == nil || p.Graph == nil {
		return nil, fmt.Errorf("loihi: program has no graph")
	}
	t := Target()
	g, err := relayChains(p.Graph, p.Dt)
	if err != nil {
		return nil, fmt.Errorf("loihi: %w", err)
	}
	// Refuse what cannot fit before folding: the fold is most of the cost.
	if _, err := estimatePlacement(g, &t, p.Name); err != nil {
		return nil, fmt.Errorf("loihi: %w", err)
	}
	g, frep, err := fold(g)
	if err != nil {
		return nil, fmt.Errorf("loihi: %w", err)
	}
	place, err := compile.Partition(placementGraph(g), &t)
	if err != nil {
		return nil, fmt.Errorf("loihi: %w", err)
	}
	total := 0
	for _, c := range place.Cores {
		total += c.Synapses
	}
	if total > MaxSynapsesOnChip {
		return nil, fmt.Errorf("loihi: %w", &compile.FitError{Target: t.Name, Node: p.Name, Limit: "synapses per chip", Need: total, Have: MaxSynapsesOnChip})
	}
	net, rep, err := convert(p, g, frep, &d.cfg)
	if err != nil {
		return nil, err
	}
	return newInstance(net, rep, place, batch), nil
}

// placementGraph is g with a stand-in compute node in front of every
// Output that synapse nodes feed, so that Partition places and counts the
// GradedVec readout neurons and their synapses, and one in place of every
// Delay, whose relay neurons occupy cores as well.
func placementGraph(g *snn.Graph) *snn.Graph {
	shapes, err := g.Shapes()
	if err != nil {
		return g
	}
	pg := &snn.Graph{Nodes: make(map[string]snn.Node, len(g.Nodes)), Edges: make([]snn.Edge, 0, len(g.Edges))}
	for name, n := range g.Nodes {
		if n.Kind() == snn.KindDelay {
			n = &snn.Threshold{Threshold: []float64{0}, Shape: shapes[name].Out}
		}
		pg.Nodes[name] = n
	}
	for _, e := range g.Edges {
		if k := g.Nodes[e.From].Kind(); g.Nodes[e.To].Kind() == snn.KindOutput && (k == snn.KindLinear || k == snn.KindAffine) {
			r := e.To + "/readout"
			if _, ok := pg.Nodes[r]; !ok {
				pg.Nodes[r] = &snn.Threshold{Threshold: []float64{0}, Shape: shapes[e.To].In}
				pg.Edges = append(pg.Edges, snn.Edge{From: r, To: e.To})
			}
			e.To = r
		}
		pg.Edges = append(pg.Edges, e)
	}
	return pg
}

var (
	_ hal.Instance   = (*Instance)(nil)
	_ hal.Prober     = (*Instance)(nil)
	_ hal.SlotMasker = (*Instance)(nil)
)

// Instance runs a converted network with Lava's integer arithmetic.
type Instance struct {
	net    *Network
	rep    *ConversionReport
	place  *compile.Placement
	batch  int
	closed bool

	in      [][]int32 // per input: batch × size graded values
	dense   []denseRun
	layers  []layerRun
	outs    [][]float32
	inPorts []snn.Port
	outPort []snn.Port

	// on chooses the slots Step advances (SetActive); nil is all of
	// them, and nOn counts those it does.
	on  []bool
	nOn int

	total       snn.Counters
	saturations int64
}

type denseRun struct {
	rows, cols int
	// wt is column-major: column j is wt[j*rows:(j+1)*rows]. Lava's
	// weights fit 16 bits ([−256, 255]); half the memory of int32.
	wt  []int16
	nnz []int64 // non-zero weights per column (the synaptic ops of one input event)
	exp int
	out []int64 // batch × rows
}

type layerRun struct {
	n    int
	u, v []int32 // batch × n
	ain  []int64 // n: summed input of the slot being stepped
	bias []int64
	// reset is each neuron's resetAmount: the value v is reset to, or
	// with Layer.Subtract the amount subtracted.
	reset []int64
	spk   []float32 // batch × n: 1 where the neuron spiked this step
	// active lists, per slot, the neurons that sent a spike at their last
	// step: binary spikes, or graded ones with a non-zero payload.
	active [][]int32
	pay    []int32 // graded layers: batch × n payloads of the last step
	// probe holds a non-spiking layer's v·Scale for NodeOutput, made on
	// the first call.
	probe []float32
}

func newInstance(net *Network, rep *ConversionReport, place *compile.Placement, batch int) *Instance {
	in := &Instance{net: net, rep: rep, place: place, batch: batch, nOn: batch}
	for _, p := range net.Inputs {
		in.in = append(in.in, make([]int32, batch*p.Size))
		in.inPorts = append(in.inPorts, snn.Port{Name: p.Name, Shape: p.Shape, Size: p.Size})
	}
	for _, d := range net.Denses {
		r := denseRun{rows: d.Rows, cols: d.Cols, exp: d.WeightExp, wt: make([]int16, d.Rows*d.Cols), nnz: make([]int64, d.Cols), out: make([]int64, batch*d.Rows)}
		for i := 0; i < d.Rows; i++ {
			for j := 0; j < d.Cols; j++ {
				w := d.Weights[i*d.Cols+j]
				r.wt[j*d.Rows+i] = int16(w)
				if w != 0 {
					r.nnz[j]++
				}
			}
		}
		in.dense = append(in.dense, r)
	}
	for _, l := range net.Layers {
		r := layerRun{n: l.N, u: make([]int32, batch*l.N), v: make([]int32, batch*l.N), ain: make([]int64, l.N), bias: make([]int64, l.N), spk: make([]float32, batch*l.N), active: make([][]int32, batch)}
		if l.Spiking {
			r.reset = make([]int64, l.N)
		}
		for i := range r.bias {
			r.bias[i] = effectiveBias(l.BiasMant[i], l.BiasExp[i])
			if r.reset != nil {
				vr := int32(0)
				if l.VReset != nil {
					vr = l.VReset[i]
				}
				r.reset[i] = resetAmount(l.Vth[i], vr, l.Subtract)
			}
		}
		if l.Graded {
			r.pay = make([]int32, batch*l.N)
		}
		for s := range r.active {
			r.active[s] = make([]int32, 0, l.N)
			copy(r.v[s*l.N:(s+1)*l.N], l.V0)
		}
		in.layers = append(in.layers, r)
	}
	for _, o := range net.Outputs {
		l := net.Layers[o.Layer]
		in.outs = append(in.outs, make([]float32, batch*l.N))
		in.outPort = append(in.outPort, snn.Port{Name: o.Name, Shape: o.Shape, Size: l.N})
	}
	return in
}

// Network is the integer network the instance runs.
func (in *Instance) Network() *Network { return in.net }

// Report is the conversion report: per node, the error of every float
// parameter converted to the chip's integers.
func (in *Instance) Report() *ConversionReport { return in.rep }

// Placement is where the network's neurons sit on the cores.
func (in *Instance) Placement() *compile.Placement { return in.place }

// Saturations counts the values that hit a range limit so far: inputs
// clipped to InputBits, voltages clipped to 24 bits, currents wrapped.
// Zero means the integer run had no range effects at all.
func (in *Instance) Saturations() int64 { return in.saturations }

func (in *Instance) Batch() int             { return in.batch }
func (in *Instance) Inputs() []snn.Port     { return append([]snn.Port(nil), in.inPorts...) }
func (in *Instance) Outputs() []snn.Port    { return append([]snn.Port(nil), in.outPort...) }
func (in *Instance) Output(i int) []float32 { return in.outs[i] }
func (in *Instance) Counters() snn.Counters { return in.total }

// State returns the current u and voltage v of one neuron of a layer, in
// the chip's integers.
func (in *Instance) State(layer string, slot, idx int) (u, v int32, err error) {
	for li, l := range in.net.Layers {
		if l.Name == layer {
			if slot < 0 || slot >= in.batch || idx < 0 || idx >= l.N {
				return 0, 0, fmt.Errorf("loihi: State(%q, %d, %d) out of range", layer, slot, idx)
			}
			k := slot*l.N + idx
			return in.layers[li].u[k], in.layers[li].v[k], nil
		}
	}
	return 0, 0, fmt.Errorf("loihi: no layer %q", layer)
}

// NodeOutput returns a neuron node's output after the last step, for
// every slot (hal.Prober): a spiking layer's spikes (0 or 1), a
// non-spiking one's v times its scale (plus the host's offset for a
// readout), as Output gives them. It is nil for a node that is not a
// neuron node on the chip (synapse nodes have no output of their own).
func (in *Instance) NodeOutput(node string) []float32 {
	for li, l := range in.net.Layers {
		if l.Name != node {
			continue
		}
		r := &in.layers[li]
		if l.Spiking {
			return r.spk
		}
		if r.probe == nil {
			r.probe = make([]float32, in.batch*l.N)
		}
		in.scaled(l, r, r.probe)
		return r.probe
	}
	return nil
}

// scaled writes a non-spiking layer's float output, v·Scale + Offset, to
// dst (batch × n); a relay's output is the value it holds, u.
func (in *Instance) scaled(l *Layer, r *layerRun, dst []float32) {
	held := r.v
	if l.Model == ModelDelay {
		held = r.u
	}
	for s := 0; s < in.batch; s++ {
		v := held[s*l.N : (s+1)*l.N]
		d := dst[s*l.N : (s+1)*l.N]
		for i, x := range v {
			y := float64(x) * l.Scale[i]
			if l.Offset != nil {
				y += l.Offset[i]
			}
			d[i] = float32(y)
		}
	}
}

// SetActive chooses the slots Step advances (hal.SlotMasker): the others
// keep their state, outputs and pending synaptic input, their inputs are
// not read, and they cost nothing in Counters. nil activates every slot.
func (in *Instance) SetActive(active []bool) error {
	if in.closed {
		return hal.ErrClosed
	}
	if active == nil {
		in.on, in.nOn = nil, in.batch
		return nil
	}
	if len(active) != in.batch {
		return fmt.Errorf("%w: loihi: SetActive got %d flags for a batch of %d", snn.ErrInputSize, len(active), in.batch)
	}
	if in.on == nil {
		in.on = make([]bool, in.batch)
	}
	copy(in.on, active)
	in.nOn = 0
	for _, b := range active {
		if b {
			in.nOn++
		}
	}
	return nil
}

// idle reports whether Step leaves slot s as it is.
func (in *Instance) idle(s int) bool { return in.on != nil && !in.on[s] }

// Step advances the active slots (every slot unless SetActive chose some)
// by one timestep.
func (in *Instance) Step(ctx context.Context, inputs ...[]float32) error {
	if in.closed {
		return hal.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(inputs) != len(in.in) {
		return fmt.Errorf("%w: got %d inputs, the network has %d", snn.ErrInputSize, len(inputs), len(in.in))
	}
	for i, x := range inputs {
		if len(x) != len(in.in[i]) {
			return fmt.Errorf("%w: input %q: got %d values, want %d (batch %d × %d)", snn.ErrInputSize, in.net.Inputs[i].Name, len(x), len(in.in[i]), in.batch, in.net.Inputs[i].Size)
		}
	}
	for i, x := range inputs {
		p := in.net.Inputs[i]
		scale := math.Ldexp(1, p.FracBits)
		hi := float64(int64(1)<<(p.Bits-1) - 1)
		lo := -hi - 1
		q := in.in[i]
		for k, v := range x {
			if in.idle(k / p.Size) {
				continue
			}
			r := math.Round(float64(v) * scale)
			if r > hi || r < lo || r != r {
				in.saturations++
				r = math.Min(math.Max(r, lo), hi)
				if r != r {
					r = 0
				}
			}
			q[k] = int32(r)
		}
	}
	c := snn.Counters{Steps: 1}
	for _, op := range in.net.Order {
		if op.Dense {
			in.stepDense(op.Index, &c)
		} else {
			in.stepLayer(op.Index, &c)
		}
	}
	for oi, o := range in.net.Outputs {
		l, r := in.net.Layers[o.Layer], &in.layers[o.Layer]
		dst := in.outs[oi]
		if l.Spiking {
			copy(dst, r.spk)
			continue
		}
		in.scaled(l, r, dst)
	}
	in.total = in.total.Add(c)
	return nil
}

func (in *Instance) stepDense(k int, c *snn.Counters) {
	d, r := in.net.Denses[k], &in.dense[k]
	rows := r.rows
	for s := 0; s < in.batch; s++ {
		if in.idle(s) {
			continue
		}
		acc := r.out[s*rows : (s+1)*rows]
		clear(acc)
		if d.FromInput {
			x := in.in[d.From][s*r.cols : (s+1)*r.cols]
			for j, xj := range x {
				if xj == 0 {
					continue
				}
				col := r.wt[j*rows : (j+1)*rows]
				for i, w := range col {
					acc[i] += int64(w) * int64(xj)
				}
				c.SynapticOps += r.nnz[j]
			}
		} else if src := &in.layers[d.From]; src.pay != nil {
			pay := src.pay[s*r.cols : (s+1)*r.cols]
			for _, j := range src.active[s] {
				col := r.wt[int(j)*rows : (int(j)+1)*rows]
				x := int64(pay[j])
				for i, w := range col {
					acc[i] += int64(w) * x
				}
				c.SynapticOps += r.nnz[j]
			}
		} else {
			for _, j := range src.active[s] {
				col := r.wt[int(j)*rows : (int(j)+1)*rows]
				for i, w := range col {
					acc[i] += int64(w)
				}
				c.SynapticOps += r.nnz[j]
			}
		}
		if r.exp != 0 {
			for i := range acc {
				acc[i] = shiftExp(acc[i], r.exp)
			}
		}
	}
}

func (in *Instance) stepLayer(k int, c *snn.Counters) {
	l, r := in.net.Layers[k], &in.layers[k]
	n := r.n
	for s := 0; s < in.batch; s++ {
		if in.idle(s) {
			continue
		}
		ain := r.ain
		if len(l.Sources) == 1 {
			ain = in.dense[l.Sources[0]].out[s*n : (s+1)*n]
		} else {
			clear(ain)
			for _, di := range l.Sources {
				for i, a := range in.dense[di].out[s*n : (s+1)*n] {
					ain[i] += a
				}
			}
		}
		u, v := r.u[s*n:(s+1)*n], r.v[s*n:(s+1)*n]
		spk := r.spk[s*n : (s+1)*n]
		for _, j := range r.active[s] {
			spk[j] = 0
		}
		act := r.active[s][:0]
		switch l.Model {
		case ModelGradedVec:
			for i := range v {
				nv, clipped := clipV(ain[i])
				if clipped {
					in.saturations++
				}
				v[i] = int32(nv)
			}
		case ModelDelay:
			// u holds last step's v, which the payload below sends.
			for i := range v {
				u[i] = v[i]
				nv, clipped := clipV(ain[i] + r.bias[i])
				if clipped {
					in.saturations++
				}
				v[i] = int32(nv)
			}
		case ModelHeaviside:
			for i := range u {
				nu, wrapped := wrapU(ain[i] << ActShift)
				nv, clipped := clipV(nu + r.bias[i])
				if wrapped || clipped {
					in.saturations++
				}
				if nv > int64(l.Vth[i])<<VthShift {
					act = append(act, int32(i))
					spk[i] = 1
				}
				u[i], v[i] = int32(nu), int32(nv)
			}
			c.Spikes += int64(len(act))
		default:
			sh := uint(ActShift)
			if l.Graded {
				sh = 0
			}
			for i := range u {
				nu, wrapped := wrapU(decay(int64(u[i]), int64(l.Du[i])+1) + ain[i]<<sh)
				nv, clipped := clipV(decay(int64(v[i]), int64(l.Dv[i])) + nu + r.bias[i])
				if wrapped || clipped {
					in.saturations++
				}
				if l.Spiking && nv > int64(l.Vth[i])<<VthShift {
					if nv, clipped = resetV(nv, r.reset[i], l.Subtract); clipped {
						in.saturations++
					}
					act = append(act, int32(i))
					spk[i] = 1
				}
				u[i], v[i] = int32(nu), int32(nv)
			}
			c.Spikes += int64(len(act))
		}
		if l.Graded {
			sent := v
			if l.Model == ModelDelay {
				sent = u
			}
			pay := r.pay[s*n : (s+1)*n]
			for i, x := range sent {
				p, sat := Payload(int64(x), l.PayloadShift[i], l.PayloadBits)
				if sat {
					in.saturations++
				}
				pay[i] = int32(p)
				if p != 0 {
					act = append(act, int32(i))
				}
			}
		}
		r.active[s] = act
	}
	c.NeuronUpdates += int64(n * in.nOn)
	if l.Spiking {
		c.SpikingUpdates += int64(n * in.nOn)
	}
}

// Reset returns one slot to its initial state (u = 0, v at rest, no
// pending synaptic input), leaving the others.
func (in *Instance) Reset(slot int) error {
	if in.closed {
		return hal.ErrClosed
	}
	if slot < 0 || slot >= in.batch {
		return fmt.Errorf("loihi: Reset(%d): slot out of range [0, %d)", slot, in.batch)
	}
	for k := range in.dense {
		r := &in.dense[k]
		clear(r.out[slot*r.rows : (slot+1)*r.rows])
	}
	for k := range in.layers {
		r := &in.layers[k]
		lo, hi := slot*r.n, (slot+1)*r.n
		clear(r.u[lo:hi])
		copy(r.v[lo:hi], in.net.Layers[k].V0)
		clear(r.spk[lo:hi])
		if r.pay != nil {
			clear(r.pay[lo:hi])
		}
		r.active[slot] = r.active[slot][:0]
	}
	for i, o := range in.net.Outputs {
		n := in.net.Layers[o.Layer].N
		clear(in.outs[i][slot*n : (slot+1)*n])
	}
	return nil
}

// Close releases the instance; later calls return hal.ErrClosed.
func (in *Instance) Close() error {
	if in.closed {
		return hal.ErrClosed
	}
	in.closed = true
	return nil
}
