// Asmgen writes the snn package's amd64 kernels, kernels_amd64.s, and their
// Go declarations, kernels_stubs_amd64.go, with avo.
//
// # Overview
//
// Each kernel is written once, for any vector width and weight type, and
// instantiated for the instruction sets snn runs:
//
//   - isa.go: what differs between AVX2 and AVX-512 (register width, tails,
//     predicates), and the loop and load/store helpers every kernel uses;
//   - weight.go: float32, bfloat16 and int8 weights, widened to float32;
//   - stream.go: the elementwise kernels (axpby, scal, nextAbove, axpy on
//     narrow weights);
//   - dense.go: the transposed products, one slot (gemvT) or four (gemm4T);
//   - lif.go: the fused leaky-neuron updates (lifUpdate, lifChain);
//   - gather.go: the event-driven product of one slot's active inputs
//     (gatherT).
//
// # Invariants
//
// A kernel does each element's arithmetic in the order and with the
// roundings of the portable Go code in snn (kernels.go, precision.go), so
// that every kernel set is bit-identical to it; snn's tests and fuzz
// targets check that. Changing the blocking, the unrolling or the
// registers is free; changing which operations round, or their order
// within an element, is not.
//
// Run it with go generate in snn. TestGenerated checks that the committed
// files are exactly what it writes.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
)

func main() {
	dir := flag.String("dir", "../..", "the snn package's `directory`")
	flag.Parse()
	files, err := generate()
	if err != nil {
		build.LogError(log.New(os.Stderr, "asmgen: ", 0), err, 0)
		os.Exit(1)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(*dir, f.name), f.src, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "asmgen:", err)
			os.Exit(1)
		}
	}
}

// A file is one generated file of the snn package.
type file struct {
	name string
	src  []byte
}

// generate returns the assembly and the stubs declaring it.
func generate() ([]file, error) {
	g := gen{build.NewContext()}
	g.ConstraintExpr("amd64,!noasm")
	g.kernels()
	f, err := g.Result()
	if err != nil {
		return nil, err
	}
	if err := pass.Compile.Execute(f); err != nil {
		return nil, err
	}
	cfg := printer.Config{Name: "internal/asmgen", Pkg: "snn"}
	asm, err := printer.NewGoAsm(cfg).Print(f)
	if err != nil {
		return nil, err
	}
	stubs, err := printer.NewStubs(cfg).Print(f)
	if err != nil {
		return nil, err
	}
	return []file{{"kernels_amd64.s", asm}, {"kernels_stubs_amd64.go", stubs}}, nil
}

// kernels emits every kernel, each for AVX2 and AVX-512.
func (g gen) kernels() {
	for _, v := range []isa{avx2, avx512} {
		g.axpby(v)
		g.scal(v)
		g.nextAbove(v)
	}
	for _, w := range []weight{float32W, bfloat16W, int8W} {
		g.dense(avx2, w, 1, []int{8, 1})
		g.dense(avx512, w, 1, []int{8, 4, 1})
	}
	for _, w := range []weight{bfloat16W, int8W} {
		g.axpyW(avx2, w)
		g.axpyW(avx512, w)
	}
	for _, w := range []weight{float32W, bfloat16W, int8W} {
		g.dense(avx2, w, 4, []int{2, 1})
		g.dense(avx512, w, 4, []int{4, 1})
	}
	shifts := g.laneShifts()
	for _, v := range []isa{avx2, avx512} {
		g.lifUpdate(v, shifts)
		g.lifChain(v, shifts)
	}
	g.gather(avx2, []int{8, 4, 1})
	g.gather(avx512, []int{16, 8, 4, 1})
}
