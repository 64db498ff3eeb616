package pytorch

import "github.com/neuro-go/neuro/compile"

// init registers Import as the "pytorch" format (alias "torchscript"), so
// that a blank import makes compile.Import read .pt files:
//
//	import _ "github.com/neuro-go/neuro/compile/pytorch"
//
// and claims, for compile.Import with no format name, zip archives (what
// torch.save and torch.jit.save write) and bare pickles of protocol 2 to 5
// (the legacy torch.save format, which Import then explains it does not
// read).
func init() {
	compile.RegisterFormat("pytorch", Import, "torchscript")
	compile.RegisterSniffer("pytorch", compile.Magic("PK\x03\x04"))
	compile.RegisterSniffer("pytorch", isPickle)
}

// isPickle reports whether head starts with a pickle PROTO opcode of a
// protocol torch.save uses.
func isPickle(head []byte) bool {
	return len(head) >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5
}
