package runtime

import (
	"slices"
	"sync"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
)

// ModelInfo is what a listing says of a model's network: its size, and
// the devices that hold it.
type ModelInfo struct {
	// Neurons, Synapses, Layers and Parameters size the network as the
	// compiler counts them (compile.NetworkReport), except where the
	// model's Card gives a figure (Neurons, Synapses, Parameters): the
	// card counts what the simulator does per token, the compiler what a
	// chip would have to wire.
	Neurons, Synapses, Layers, Parameters int
	// Devices are the devices that hold the network, sorted: each
	// registered device whose target runs every node of it and fits it
	// as it is (compile.Partition), and each device a ready deployment of
	// it runs on (a chip may hold it only after a compile pass:
	// neuro-1-lite folded for loihi). Never nil.
	Devices []string
}

// modelInfos caches each model's ModelInfo but for its deployments:
// compiling the network and trying every device is done once per model.
type modelInfos struct {
	mu sync.Mutex
	m  map[*Model]*modelInfoEntry
}

type modelInfoEntry struct {
	once sync.Once
	info ModelInfo
}

func (c *modelInfos) get(m *Model) ModelInfo {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[*Model]*modelInfoEntry{}
	}
	e := c.m[m]
	if e == nil {
		e = &modelInfoEntry{}
		c.m[m] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.info = describe(m) })
	return e.info
}

func (c *modelInfos) forget(m *Model) {
	c.mu.Lock()
	delete(c.m, m)
	c.mu.Unlock()
}

// ModelInfo describes a model found by id or alias; an unknown one wraps
// ErrModelNotFound. Its size and the registered devices that fit it are
// worked out the first time and kept; its deployments are read at each
// call.
func (r *Runtime) ModelInfo(id string) (ModelInfo, error) {
	m, err := r.Model(id)
	if err != nil {
		return ModelInfo{}, err
	}
	info := r.infos.get(m)
	info.Devices = slices.Clone(info.Devices)
	for _, d := range r.Deployments() {
		if d.Model == m && d.Status() == StatusReady {
			info.Devices = addDevice(info.Devices, d.Device.Name)
		}
	}
	return info, nil
}

// addDevice adds name to the sorted list devices, unless it is there.
func addDevice(devices []string, name string) []string {
	i, found := slices.BinarySearch(devices, name)
	if found {
		return devices
	}
	return slices.Insert(devices, i, name)
}

// describe works out a model's ModelInfo but for its deployments.
func describe(m *Model) ModelInfo {
	p := m.Program
	info := ModelInfo{Devices: []string{}}
	if _, rep, err := compile.Compile(p.Graph, &compile.Options{Name: p.Name, Timesteps: max(p.Timesteps, 1), Dt: p.Dt}); err == nil {
		info.Neurons, info.Synapses, info.Layers, info.Parameters = rep.Network.Neurons, rep.Network.Synapses, rep.Network.Layers, rep.Network.Parameters
	}
	if m.Card.Neurons > 0 {
		info.Neurons = m.Card.Neurons
	}
	if m.Card.Synapses > 0 {
		info.Synapses = m.Card.Synapses
	}
	if m.Card.Parameters > 0 {
		info.Parameters = m.Card.Parameters
	}
	for _, name := range hal.Devices() {
		dev, err := hal.Open(name, hal.Config{})
		if err != nil {
			continue
		}
		// Partition refuses a node of a kind the target does not run, and
		// a network that does not fit its cores.
		t := dev.Capabilities().Target
		if _, err := compile.Partition(p.Graph, &t); err == nil {
			info.Devices = append(info.Devices, name)
		}
	}
	return info
}
