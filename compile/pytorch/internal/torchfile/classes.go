package torchfile

import "strings"

// classKind says what the unpickler does with an allowed global.
type classKind int

const (
	ckModule            classKind = iota + 1 // nn.Module subclass: NEWOBJ makes a *Module, BUILD fills Attrs
	ckObject                                 // data class (NamedTuple, ...): *Object
	ckOrderedDict                            // collections.OrderedDict
	ckDict                                   // builtins.dict
	ckList                                   // builtins.list
	ckTuple                                  // builtins.tuple
	ckSet                                    // builtins.set
	ckFrozenset                              // builtins.frozenset
	ckBytearray                              // builtins.bytearray
	ckCodecsEncode                           // _codecs.encode(str, "latin1"): how protocol 2 spells bytes
	ckObjectBase                             // builtins.object, only as copyreg._reconstructor's base
	ckReconstructor                          // copyreg._reconstructor (protocols 0 and 1)
	ckRebuildTensorV2                        // torch._utils._rebuild_tensor_v2
	ckRebuildTensor                          // torch._utils._rebuild_tensor
	ckRebuildParameter                       // torch._utils._rebuild_parameter
	ckRebuildParamState                      // torch._utils._rebuild_parameter_with_state
	ckParameter                              // torch.nn.parameter.Parameter
	ckStorageType                            // torch.FloatStorage etc., only inside persistent ids
	ckDType                                  // torch.float32 etc.
	ckSize                                   // torch.Size
	ckDevice                                 // torch.device
	ckJitList                                // torch.jit._pickle.build_*list: returns its argument
	ckJitTypeTag                             // torch.jit._pickle.restore_type_tag: returns its first argument
)

type classInfo struct {
	kind   classKind
	dtype  DType    // ckStorageType, ckDType
	fields []string // ckObject NamedTuples
}

// allowlist maps "module.name" (module normalised from Python 2 spellings) to
// what the unpickler builds. It is the whole of what a pickle may name; the
// package doc lists it and says why each entry is harmless: none is ever
// called, each only shapes a data value.
var allowlist = map[string]classInfo{}

func allow(kind classKind, names ...string) {
	for _, n := range names {
		allowlist[n] = classInfo{kind: kind}
	}
}

func init() {
	allow(ckOrderedDict, "collections.OrderedDict")
	allow(ckDict, "builtins.dict")
	allow(ckList, "builtins.list")
	allow(ckTuple, "builtins.tuple")
	allow(ckSet, "builtins.set")
	allow(ckFrozenset, "builtins.frozenset")
	allow(ckBytearray, "builtins.bytearray")
	allow(ckObjectBase, "builtins.object")
	allow(ckCodecsEncode, "_codecs.encode")
	allow(ckReconstructor, "copyreg._reconstructor")

	allow(ckRebuildTensorV2, "torch._utils._rebuild_tensor_v2")
	allow(ckRebuildTensor, "torch._utils._rebuild_tensor")
	allow(ckRebuildParameter, "torch._utils._rebuild_parameter")
	allow(ckRebuildParamState, "torch._utils._rebuild_parameter_with_state")
	allow(ckParameter, "torch.nn.parameter.Parameter")
	allow(ckSize, "torch.Size")
	allow(ckDevice, "torch.device")
	allow(ckJitList, "torch.jit._pickle.build_intlist", "torch.jit._pickle.build_doublelist",
		"torch.jit._pickle.build_boollist", "torch.jit._pickle.build_tensorlist",
		"torch.jit._pickle.build_genericlist")
	allow(ckJitTypeTag, "torch.jit._pickle.restore_type_tag")

	for name, dt := range map[string]DType{
		"FloatStorage": Float32, "DoubleStorage": Float64, "HalfStorage": Float16,
		"BFloat16Storage": BFloat16, "CharStorage": Int8, "ByteStorage": Uint8,
		"ShortStorage": Int16, "IntStorage": Int32, "LongStorage": Int64, "BoolStorage": Bool,
	} {
		allowlist["torch."+name] = classInfo{kind: ckStorageType, dtype: dt}
	}
	for name, dt := range map[string]DType{
		"float32": Float32, "float": Float32, "float64": Float64, "double": Float64,
		"float16": Float16, "half": Float16, "bfloat16": BFloat16, "int8": Int8,
		"uint8": Uint8, "int16": Int16, "short": Int16, "int32": Int32, "int": Int32,
		"int64": Int64, "long": Int64, "bool": Bool,
	} {
		allowlist["torch."+name] = classInfo{kind: ckDType, dtype: dt}
	}

	for mod, names := range map[string][]string{
		"torch.nn.modules.linear":    {"Linear", "Identity"},
		"torch.nn.modules.conv":      {"Conv1d", "Conv2d"},
		"torch.nn.modules.batchnorm": {"BatchNorm1d", "BatchNorm2d"},
		"torch.nn.modules.activation": {"ReLU", "Sigmoid", "Tanh", "LeakyReLU",
			"Hardtanh", "ReLU6"},
		"torch.nn.modules.flatten":   {"Flatten", "Unflatten"},
		"torch.nn.modules.container": {"Sequential", "ModuleList", "ModuleDict"},
		"torch.nn.modules.dropout":   {"Dropout", "Dropout1d", "Dropout2d"},
		"torch.nn.modules.pooling": {"AvgPool1d", "AvgPool2d", "MaxPool1d", "MaxPool2d",
			"AdaptiveAvgPool1d", "AdaptiveAvgPool2d"},
		// snnTorch neurons.
		"snntorch._neurons.leaky":     {"Leaky"},
		"snntorch._neurons.synaptic":  {"Synaptic"},
		"snntorch._neurons.rleaky":    {"RLeaky"},
		"snntorch._neurons.rsynaptic": {"RSynaptic"},
		"snntorch._neurons.alpha":     {"Alpha"},
		"snntorch._neurons.lapicque":  {"Lapicque"},
		// Norse cells.
		"norse.torch.module.lif":              {"LIFCell", "LIFRecurrentCell", "LIF", "LIFRecurrent"},
		"norse.torch.module.lif_box":          {"LIFBoxCell", "LIFBox"},
		"norse.torch.module.leaky_integrator": {"LICell", "LI"},
		"norse.torch.module.iaf":              {"IAFCell", "IAF"},
		"norse.torch.module.sequential":       {"SequentialState"},
		// SpikingJelly neurons and the surrogate-gradient modules they hold.
		"spikingjelly.activation_based.neuron":    {"IFNode", "LIFNode", "ParametricLIFNode"},
		"spikingjelly.clock_driven.neuron":        {"IFNode", "LIFNode", "ParametricLIFNode"},
		"spikingjelly.activation_based.surrogate": spikingJellySurrogates,
		"spikingjelly.clock_driven.surrogate":     spikingJellySurrogates,
	} {
		for _, n := range names {
			allowlist[mod+"."+n] = classInfo{kind: ckModule}
		}
	}

	// Norse parameter NamedTuples, with their field names.
	for name, fields := range map[string][]string{
		"norse.torch.functional.lif.LIFParameters": {"tau_syn_inv", "tau_mem_inv", "v_leak",
			"v_th", "v_reset", "method", "alpha"},
		"norse.torch.functional.lif_box.LIFBoxParameters": {"tau_mem_inv", "v_leak", "v_th",
			"v_reset", "method", "alpha"},
		"norse.torch.functional.leaky_integrator.LIParameters": {"tau_syn_inv", "tau_mem_inv", "v_leak"},
		"norse.torch.functional.iaf.IAFParameters":             {"v_th", "v_reset", "method", "alpha"},
	} {
		allowlist[name] = classInfo{kind: ckObject, fields: fields}
	}
}

var spikingJellySurrogates = []string{"Sigmoid", "ATan", "PiecewiseQuadratic", "PiecewiseExp",
	"PiecewiseLeakyReLU", "SoftSign", "Erf"}

// normaliseModule maps the Python 2 module names that protocol 2 pickles
// written by Python 3 use (fix_imports) to their Python 3 names.
func normaliseModule(m string) string {
	switch m {
	case "__builtin__":
		return "builtins"
	case "copy_reg":
		return "copyreg"
	}
	return m
}

// lookupClass returns what module.name is allowed to build, or false.
func lookupClass(module, name string, extra map[string]bool) (classInfo, bool) {
	q := normaliseModule(module) + "." + name
	if ci, ok := allowlist[q]; ok {
		return ci, true
	}
	// TorchScript pickles name the classes of its own compiled modules
	// (__torch__.torch.nn.modules.linear.Linear, __torch__.___torch_mangle_3.Net):
	// they hold attributes only; their code lives in code/ and is never run.
	if strings.HasPrefix(q, "__torch__.") {
		return classInfo{kind: ckModule}, true
	}
	if extra[q] {
		return classInfo{kind: ckModule}, true
	}
	return classInfo{}, false
}
