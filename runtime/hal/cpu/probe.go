package cpu

// NodeOutput returns a node's output after the last step, for every slot
// (hal.Prober); nil for a node the program does not have.
func (in *Instance) NodeOutput(node string) []float32 { return in.sim.NodeOutput(node) }
