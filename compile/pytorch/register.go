package pytorch

import "github.com/neuro-go/neuro/compile"

// init registers Import as the "pytorch" format (alias "torchscript"), so
// that a blank import makes compile.Import read .pt files:
//
//	import _ "github.com/neuro-go/neuro/compile/pytorch"
func init() {
	compile.RegisterFormat("pytorch", Import, "torchscript")
}
