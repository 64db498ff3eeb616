package pytorch

import (
	"sort"
	"strings"
)

// layerKind is a canonical layer kind: LayerSpec.Kind once its spelling is
// resolved (kindAliases), a module class's kind (moduleKinds), or the kind
// a state_dict's tensors imply (inferKind).
type layerKind string

// The layers of plain PyTorch ANNs.
const (
	kindLinear    layerKind = "linear"
	kindConv2d    layerKind = "conv2d"
	kindReLU      layerKind = "relu"
	kindFlatten   layerKind = "flatten"
	kindAvgPool2d layerKind = "avgpool2d"
	kindMaxPool2d layerKind = "maxpool2d"
	kindBatchNorm layerKind = "batchnorm"
	kindDropout   layerKind = "dropout"
	kindIdentity  layerKind = "identity"
	// kindEmbedding is nn.Embedding: the first layer of a language model,
	// a Linear from the one-hot token (its weight [V, E] transposed).
	kindEmbedding layerKind = "embedding"
)

// The neurons, named <family>.<neuron>.
const (
	kindSnnTorchLeaky     layerKind = "snntorch.leaky"
	kindSnnTorchSynaptic  layerKind = "snntorch.synaptic"
	kindSnnTorchRLeaky    layerKind = "snntorch.rleaky"
	kindSnnTorchRSynaptic layerKind = "snntorch.rsynaptic"
	kindNorseLIF          layerKind = "norse.lif"
	kindNorseLIFRecurrent layerKind = "norse.lifrecurrent"
	kindNorseLI           layerKind = "norse.li"
	kindSpikingJellyLIF   layerKind = "spikingjelly.lif"
	kindSpikingJellyIF    layerKind = "spikingjelly.if"
)

// kindAliases maps the spellings accepted in LayerSpec.Kind (lower-cased)
// to canonical kinds.
var kindAliases = map[string]layerKind{
	"linear": kindLinear, "dense": kindLinear, "affine": kindLinear,
	"conv2d":    kindConv2d,
	"relu":      kindReLU,
	"flatten":   kindFlatten,
	"avgpool2d": kindAvgPool2d, "maxpool2d": kindMaxPool2d,
	"batchnorm": kindBatchNorm, "batchnorm1d": kindBatchNorm, "batchnorm2d": kindBatchNorm,
	"dropout": kindDropout, "identity": kindIdentity, "embedding": kindEmbedding,
	"snntorch.leaky": kindSnnTorchLeaky, "snntorch.synaptic": kindSnnTorchSynaptic,
	"snntorch.rleaky": kindSnnTorchRLeaky, "snntorch.rsynaptic": kindSnnTorchRSynaptic,
	"norse.lif": kindNorseLIF, "norse.lifcell": kindNorseLIF,
	"norse.lifrecurrent": kindNorseLIFRecurrent, "norse.lifrecurrentcell": kindNorseLIFRecurrent,
	"norse.li": kindNorseLI, "norse.licell": kindNorseLI,
	"spikingjelly.lif": kindSpikingJellyLIF, "spikingjelly.lifnode": kindSpikingJellyLIF,
	"spikingjelly.if": kindSpikingJellyIF, "spikingjelly.ifnode": kindSpikingJellyIF,
}

// family is the framework of a neuron kind ("snntorch", "norse",
// "spikingjelly"), or "" for an ANN layer.
func (k layerKind) family() string {
	fam, _, _ := strings.Cut(string(k), ".")
	switch fam {
	case "snntorch", "norse", "spikingjelly":
		return fam
	}
	return ""
}

// spiking reports whether k is a neuron.
func (k layerKind) spiking() bool { return k.family() != "" }

// annOnly reports whether k exists only in artificial networks: a
// spiking network with it is refused.
func (k layerKind) annOnly() bool {
	return k == kindReLU || k == kindBatchNorm || k == kindMaxPool2d
}

// knownKinds lists the canonical kinds, sorted.
func knownKinds() []string {
	var ks []string
	for k, v := range kindAliases {
		if k == string(v) {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}
