package torchfile

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// writeBigStateDict writes a torch-format state_dict of an MLP with about
// 5M float32 parameters and returns its path and size.
func writeBigStateDict(tb testing.TB) (string, int64, int64) {
	tb.Helper()
	dims := []int64{784, 1536, 1536, 1024, 512, 10}
	p := newPK().global("collections", "OrderedDict").op(opEmptyTuple, opReduce, opMark)
	var entries []zentry
	rng := rand.New(rand.NewPCG(1, 2))
	key, params := 0, int64(0)
	add := func(name string, shape ...int64) {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		strides := make([]int64, len(shape))
		s := int64(1)
		for i := len(shape) - 1; i >= 0; i-- {
			strides[i] = s
			s *= shape[i]
		}
		k := strconv.Itoa(key)
		key++
		p.str(name).tensor(k, n, 0, shape, strides)
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = rng.Float32() - 0.5
		}
		entries = append(entries, zentry{"archive/data/" + k, f32bytes(vals...)})
		params += n
	}
	for i := 0; i+1 < len(dims); i++ {
		add(strconv.Itoa(2*i)+".weight", dims[i+1], dims[i])
		add(strconv.Itoa(2*i)+".bias", dims[i+1])
	}
	pkl := p.op(opSetItems).stop()
	data := buildZip(tb, append([]zentry{{"archive/data.pkl", pkl}}, append(entries, zentry{"archive/version", []byte("3\n")})...)...)
	path := filepath.Join(tb.TempDir(), "big.pt")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path, int64(len(data)), params
}

// BenchmarkOpenMaterialise opens a ~5M-parameter state_dict from disk and
// reads every tensor into []float32.
func BenchmarkOpenMaterialise(b *testing.B) {
	path, size, params := writeBigStateDict(b)
	b.SetBytes(size)
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for b.Loop() {
		fh, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		f, err := Open(fh, size, nil)
		if err != nil {
			b.Fatal(err)
		}
		sd, err := f.StateDict()
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for _, nt := range sd {
			v, err := nt.Tensor.Float32s()
			if err != nil {
				b.Fatal(err)
			}
			n += int64(len(v))
		}
		fh.Close()
		if n != params {
			b.Fatalf("%d elements, want %d", n, params)
		}
	}
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(params), "params")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N)/float64(size), "alloc/filesize")
}
