package torchfile

import "fmt"

// Pickle opcodes, protocols 0 to 5.
const (
	opMark           = '('
	opStop           = '.'
	opPop            = '0'
	opPopMark        = '1'
	opDup            = '2'
	opFloat          = 'F'
	opInt            = 'I'
	opBinInt         = 'J'
	opBinInt1        = 'K'
	opLong           = 'L'
	opBinInt2        = 'M'
	opNone           = 'N'
	opPersID         = 'P'
	opBinPersID      = 'Q'
	opReduce         = 'R'
	opString         = 'S'
	opBinString      = 'T'
	opShortBinString = 'U'
	opUnicode        = 'V'
	opBinUnicode     = 'X'
	opAppend         = 'a'
	opBuild          = 'b'
	opGlobal         = 'c'
	opDict           = 'd'
	opEmptyDict      = '}'
	opAppends        = 'e'
	opGet            = 'g'
	opBinGet         = 'h'
	opInst           = 'i'
	opLongBinGet     = 'j'
	opList           = 'l'
	opEmptyList      = ']'
	opObj            = 'o'
	opPut            = 'p'
	opBinPut         = 'q'
	opLongBinPut     = 'r'
	opSetItem        = 's'
	opTuple          = 't'
	opEmptyTuple     = ')'
	opSetItems       = 'u'
	opBinFloat       = 'G'
	opProto          = 0x80
	opNewObj         = 0x81
	opExt1           = 0x82
	opExt2           = 0x83
	opExt4           = 0x84
	opTuple1         = 0x85
	opTuple2         = 0x86
	opTuple3         = 0x87
	opNewTrue        = 0x88
	opNewFalse       = 0x89
	opLong1          = 0x8a
	opLong4          = 0x8b
	opBinBytes       = 'B'
	opShortBinBytes  = 'C'
	opShortBinUni    = 0x8c
	opBinUnicode8    = 0x8d
	opBinBytes8      = 0x8e
	opEmptySet       = 0x8f
	opAddItems       = 0x90
	opFrozenSet      = 0x91
	opNewObjEx       = 0x92
	opStackGlobal    = 0x93
	opMemoize        = 0x94
	opFrame          = 0x95
	opByteArray8     = 0x96
	opNextBuffer     = 0x97
	opReadonlyBuffer = 0x98
)

var opNames = map[byte]string{
	opMark: "MARK", opStop: "STOP", opPop: "POP", opPopMark: "POP_MARK", opDup: "DUP",
	opFloat: "FLOAT", opInt: "INT", opBinInt: "BININT", opBinInt1: "BININT1", opLong: "LONG",
	opBinInt2: "BININT2", opNone: "NONE", opPersID: "PERSID", opBinPersID: "BINPERSID",
	opReduce: "REDUCE", opString: "STRING", opBinString: "BINSTRING",
	opShortBinString: "SHORT_BINSTRING", opUnicode: "UNICODE", opBinUnicode: "BINUNICODE",
	opAppend: "APPEND", opBuild: "BUILD", opGlobal: "GLOBAL", opDict: "DICT",
	opEmptyDict: "EMPTY_DICT", opAppends: "APPENDS", opGet: "GET", opBinGet: "BINGET",
	opInst: "INST", opLongBinGet: "LONG_BINGET", opList: "LIST", opEmptyList: "EMPTY_LIST",
	opObj: "OBJ", opPut: "PUT", opBinPut: "BINPUT", opLongBinPut: "LONG_BINPUT",
	opSetItem: "SETITEM", opTuple: "TUPLE", opEmptyTuple: "EMPTY_TUPLE", opSetItems: "SETITEMS",
	opBinFloat: "BINFLOAT", opProto: "PROTO", opNewObj: "NEWOBJ", opExt1: "EXT1", opExt2: "EXT2",
	opExt4: "EXT4", opTuple1: "TUPLE1", opTuple2: "TUPLE2", opTuple3: "TUPLE3",
	opNewTrue: "NEWTRUE", opNewFalse: "NEWFALSE", opLong1: "LONG1", opLong4: "LONG4",
	opBinBytes: "BINBYTES", opShortBinBytes: "SHORT_BINBYTES", opShortBinUni: "SHORT_BINUNICODE",
	opBinUnicode8: "BINUNICODE8", opBinBytes8: "BINBYTES8", opEmptySet: "EMPTY_SET",
	opAddItems: "ADDITEMS", opFrozenSet: "FROZENSET", opNewObjEx: "NEWOBJ_EX",
	opStackGlobal: "STACK_GLOBAL", opMemoize: "MEMOIZE", opFrame: "FRAME",
	opByteArray8: "BYTEARRAY8", opNextBuffer: "NEXT_BUFFER", opReadonlyBuffer: "READONLY_BUFFER",
}

func opName(op byte) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return fmt.Sprintf("0x%02x", op)
}

// An opHandler runs one opcode: u.op is the opcode and u.pos the byte
// after it.
type opHandler func(u *unpickler) error

// ops is the dispatch table: each opcode's handler (load.go), nil for a
// byte that is no opcode. STOP has none; run ends on it.
var ops = [256]opHandler{
	opProto:   (*unpickler).loadProto,
	opFrame:   (*unpickler).loadFrame,
	opMark:    (*unpickler).loadMark,
	opPop:     (*unpickler).loadPop,
	opPopMark: (*unpickler).loadPopMark,
	opDup:     (*unpickler).loadDup,

	opNone:     (*unpickler).loadNone,
	opNewTrue:  (*unpickler).loadTrue,
	opNewFalse: (*unpickler).loadFalse,
	opBinInt:   (*unpickler).loadBinInt,
	opBinInt1:  (*unpickler).loadBinInt1,
	opBinInt2:  (*unpickler).loadBinInt2,
	opLong1:    withN(1, (*unpickler).loadBinLong),
	opLong4:    withN(4, (*unpickler).loadBinLong),
	opInt:      (*unpickler).loadInt,
	opLong:     (*unpickler).loadLong,
	opFloat:    (*unpickler).loadFloat,
	opBinFloat: (*unpickler).loadBinFloat,

	opShortBinString: withN(1, (*unpickler).loadBinString),
	opBinString:      withN(4, (*unpickler).loadBinString),
	opShortBinUni:    withN(1, (*unpickler).loadBinUnicode),
	opBinUnicode:     withN(4, (*unpickler).loadBinUnicode),
	opBinUnicode8:    withN(8, (*unpickler).loadBinUnicode),
	opShortBinBytes:  withN(1, (*unpickler).loadBinBytes),
	opBinBytes:       withN(4, (*unpickler).loadBinBytes),
	opBinBytes8:      withN(8, (*unpickler).loadBinBytes),
	opByteArray8:     withN(8, (*unpickler).loadBinBytes),
	opString:         (*unpickler).loadString,
	opUnicode:        (*unpickler).loadUnicode,

	opEmptyTuple: (*unpickler).loadEmptyTuple,
	opTuple1:     withN(1, (*unpickler).loadTupleN),
	opTuple2:     withN(2, (*unpickler).loadTupleN),
	opTuple3:     withN(3, (*unpickler).loadTupleN),
	opTuple:      (*unpickler).loadTuple,
	opEmptyList:  (*unpickler).loadEmptyList,
	opList:       (*unpickler).loadList,
	opAppend:     (*unpickler).loadAppend,
	opAppends:    (*unpickler).loadAppends,
	opEmptyDict:  (*unpickler).loadEmptyDict,
	opDict:       (*unpickler).loadDict,
	opSetItem:    (*unpickler).loadSetItem,
	opSetItems:   (*unpickler).loadSetItems,
	opEmptySet:   (*unpickler).loadEmptySet,
	opAddItems:   (*unpickler).loadAddItems,
	opFrozenSet:  (*unpickler).loadFrozenSet,

	opPut:        (*unpickler).loadPut,
	opBinPut:     withN(1, (*unpickler).loadBinPut),
	opLongBinPut: withN(4, (*unpickler).loadBinPut),
	opMemoize:    (*unpickler).loadMemoize,
	opGet:        (*unpickler).loadGet,
	opBinGet:     (*unpickler).loadBinGet,
	opLongBinGet: (*unpickler).loadLongBinGet,

	opGlobal:      (*unpickler).loadGlobal,
	opStackGlobal: (*unpickler).loadStackGlobal,
	opInst:        (*unpickler).loadInst,
	opObj:         (*unpickler).loadObj,
	opReduce:      (*unpickler).loadReduce,
	opNewObj:      (*unpickler).loadNewObj,
	opNewObjEx:    (*unpickler).loadNewObj,
	opBuild:       (*unpickler).loadBuild,
	opBinPersID:   (*unpickler).loadBinPersID,

	opPersID:         (*unpickler).loadPersID,
	opExt1:           (*unpickler).loadExt,
	opExt2:           (*unpickler).loadExt,
	opExt4:           (*unpickler).loadExt,
	opNextBuffer:     (*unpickler).loadBuffer,
	opReadonlyBuffer: (*unpickler).loadBuffer,
}

// withN binds the operand width (or count) that sets a family of opcodes
// apart, such as LONG1 and LONG4, to the handler they share.
func withN(n int, h func(*unpickler, int) error) opHandler {
	return func(u *unpickler) error { return h(u, n) }
}
