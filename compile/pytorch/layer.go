package pytorch

import (
	"fmt"

	"github.com/neuro-go/neuro/compile"
)

// layer is one layer of the network as the importer sees it: a key prefix,
// a kind, its tensors and its hyperparameters.
type layer struct {
	name string
	kind layerKind
	// params are the hyperparameters by name, as LayerSpec.Params and
	// module trees give them; the builders read them through the typed
	// form of each kind (params.go).
	params  map[string]float64
	shape   []int
	tensors map[string]*Tensor // by local name: "weight", "recurrent.weight"
	keys    []string           // local names in file order
	full    map[string]string  // local name → full state_dict key, for errors
	module  bool               // read from a module tree (hyperparameters known)
	script  bool               // from a TorchScript archive
}

func (l *layer) has(k string) bool { _, ok := l.tensors[k]; return ok }

func (l *layer) key(local string) string {
	if k, ok := l.full[local]; ok {
		return k
	}
	if l.name == "" {
		return local
	}
	return l.name + "." + local
}

func (l *layer) add(local, full string, t *Tensor) {
	if l.tensors == nil {
		l.tensors, l.full = map[string]*Tensor{}, map[string]string{}
	}
	l.tensors[local] = t
	l.full[local] = full
	l.keys = append(l.keys, local)
}

func (l *layer) unsupported(format string, args ...any) error {
	return &compile.UnsupportedError{Node: l.name, Reason: fmt.Sprintf(format, args...)}
}
