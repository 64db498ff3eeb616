// Command compile imports a network file, compiles it for a device and
// prints the compile report as JSON; optionally it saves the Program and
// runs it on the device.
//
//	go run ./examples/compile -format pytorch|onnx|nir -in FILE
//	    [-target cpu|loihi|xylo] [-out FILE.neuro] [-layers FILE.json]
//	    [-calib FILE.json] [-timesteps N] [-bits N] [-dt SECONDS]
//	    [-ranges FILE.json] [-input FILE.json [-steps N]]
//	    [-export FILE.nir [-export-lossy]]
//
// -layers is a JSON array of compile.LayerSpec ({"name","kind","params",
// "shape"}) for state_dicts that do not describe themselves. -calib is a
// JSON array of input vectors (or an object whose "inputs" or
// "calibration.inputs" holds them) for ANN-to-SNN threshold balancing.
// -ranges is a JSON array of sequences, each an array of per-step input
// vectors, on which compile.Calibrate measures the graded neurons' ranges
// (each sequence from rest); the Program saved with -out carries them, and
// the loihi device sizes its graded spikes by them.
// -input is a JSON array of per-step input vectors, or one vector held for
// -steps steps (default the program's timesteps). It runs on the device
// -target names, opened through its hal backend as the runtime opens a
// deployment's: the float simulator for cpu, the bit-accurate fixed-point
// emulators for loihi and xylo. The run prints {"device":"loihi",
// "output_spike_counts":[[...]],"output_final_state":[[...]]}: per Output
// node, how many steps each element was non-zero (its spikes), and its
// values after the last step. -export writes the compiled graph as NIR;
// graphs that use snn's extensions of NIR (subtractive reset, refractory
// periods, which ANN-to-SNN conversion produces) are refused unless
// -export-lossy drops them, with a warning on standard error.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"

	"github.com/neuro-go/neuro/compile/nir"
	_ "github.com/neuro-go/neuro/compile/onnx"
	_ "github.com/neuro-go/neuro/compile/pytorch"
	_ "github.com/neuro-go/neuro/models/lima" // lima language models' state_dicts (neuro-1)
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	_ "github.com/neuro-go/neuro/runtime/hal/loihi"
	_ "github.com/neuro-go/neuro/runtime/hal/xylo"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "compile:", err)
		os.Exit(1)
	}
}

// result is the compile result's network, target, estimates and warnings
// (API.md, POST /v1/compile), with the importer's account.
type result struct {
	Source    compile.Source            `json:"source"`
	Import    *compile.ImportReport     `json:"import"`
	Network   compile.NetworkReport     `json:"network"`
	Target    compile.TargetReport      `json:"target"`
	Estimates compile.Estimates         `json:"estimates"`
	Warnings  []string                  `json:"warnings"`
	Quant     *compile.QuantizationInfo `json:"quantization,omitempty"`
}

// runResult is what -input prints.
type runResult struct {
	Device      string      `json:"device"`
	SpikeCounts [][]int     `json:"output_spike_counts"`
	FinalState  [][]float32 `json:"output_final_state"`
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("compile", flag.ContinueOnError)
	format := fs.String("format", "", "file format: "+strings.Join(compile.Formats(), ", "))
	in := fs.String("in", "", "network file")
	target := fs.String("target", "cpu", "device: "+strings.Join(hal.Devices(), ", "))
	out := fs.String("out", "", "save the compiled Program here")
	layersPath := fs.String("layers", "", "JSON array of layer descriptions (compile.LayerSpec)")
	calibPath := fs.String("calib", "", "JSON calibration inputs for ANN-to-SNN conversion")
	timesteps := fs.Int("timesteps", 0, "timesteps per sample (default 64)")
	bits := fs.Int("bits", 0, "weight bits (default: the target's)")
	dt := fs.Float64("dt", 0, "time step in seconds (default 1e-3)")
	inputPath := fs.String("input", "", "JSON input to run on the -target device")
	rangesPath := fs.String("ranges", "", "JSON sequences of input vectors to calibrate the graded neurons' ranges on")
	steps := fs.Int("steps", 0, "steps to run with -input")
	export := fs.String("export", "", "write the compiled graph as NIR (HDF5) here")
	lossy := fs.Bool("export-lossy", false, "with -export, drop snn's extensions of NIR instead of refusing the graph")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *format == "" || *in == "" {
		fs.Usage()
		return errors.New("-format and -in are required")
	}
	data, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	opts := &compile.ImportOptions{Dt: *dt}
	opts.Conversion.Timesteps = *timesteps
	if *layersPath != "" {
		if err := readJSON(*layersPath, &opts.Layers); err != nil {
			return fmt.Errorf("-layers: %w", err)
		}
	}
	if *calibPath != "" {
		b, err := os.ReadFile(*calibPath)
		if err != nil {
			return fmt.Errorf("-calib: %w", err)
		}
		if opts.Conversion.Calibration, err = parseVectors(b); err != nil {
			return fmt.Errorf("-calib: %w", err)
		}
	}
	g, irep, err := compile.Import(*format, bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		return err
	}
	dev, err := hal.Open(*target, hal.Config{})
	if err != nil {
		return err
	}
	tgt := dev.Capabilities().Target
	prog, crep, err := compile.Compile(g, &compile.Options{Name: baseName(*in), Target: &tgt, Dt: opts.WithDefaults().Dt, Timesteps: *timesteps, WeightBits: *bits})
	if err != nil {
		return err
	}
	prog.Source = compile.Source{Format: irep.Format, Bytes: int64(len(data)), SHA256: sha256Hex(data)}
	if *rangesPath != "" {
		b, err := os.ReadFile(*rangesPath)
		if err != nil {
			return fmt.Errorf("-ranges: %w", err)
		}
		if err := calibrate(prog, b); err != nil {
			return fmt.Errorf("-ranges: %w", err)
		}
	}
	res := result{Source: prog.Source, Import: irep, Network: crep.Network, Target: crep.Target, Estimates: crep.Estimates, Quant: crep.Quantization}
	res.Warnings = append(append(append(append([]string{}, irep.Warnings...), irep.Approximate...), crep.Warnings...), crep.Approximated...)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return err
	}
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		if err := prog.Save(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if *export != "" {
		wo := &nir.WriteOptions{DropExtensions: *lossy, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}
		if err := nir.WriteFile(*export, prog.Graph, wo); err != nil {
			return fmt.Errorf("-export: %w", err)
		}
	}
	if *inputPath == "" {
		return nil
	}
	rr, err := runInput(dev, prog, *inputPath, *steps)
	if err != nil {
		return fmt.Errorf("-input: %w", err)
	}
	return enc.Encode(rr)
}

// calibrate records the graded neurons' ranges in p from b, a JSON array
// of sequences of input vectors.
func calibrate(p *compile.Program, b []byte) error {
	var seqs [][][]float32
	if err := json.Unmarshal(b, &seqs); err != nil {
		return fmt.Errorf("want an array of sequences of input vectors: %w", err)
	}
	return compile.Calibrate(p, seqs)
}

// runInput runs the program on dev as one sample in a batch of one, as
// the runtime runs a deployment's samples.
func runInput(dev hal.Device, p *compile.Program, path string, steps int) (*runResult, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rows, steps, err := parseSteps(b, steps, p.Timesteps)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	name := dev.Capabilities().Name
	in, err := dev.Load(ctx, p, 1)
	if err != nil {
		return nil, fmt.Errorf("loading on %s: %w", name, err)
	}
	defer in.Close()
	if n := len(in.Inputs()); n != 1 {
		return nil, fmt.Errorf("the network has %d inputs; this example feeds one", n)
	}
	outs := in.Outputs()
	res := &runResult{Device: name, SpikeCounts: make([][]int, len(outs)), FinalState: make([][]float32, len(outs))}
	for i, o := range outs {
		res.SpikeCounts[i] = make([]int, o.Size)
	}
	for s := 0; s < steps; s++ {
		if err := in.Step(ctx, rows[min(s, len(rows)-1)]); err != nil {
			return nil, fmt.Errorf("step %d on %s: %w", s, name, err)
		}
		for i := range outs {
			for j, v := range in.Output(i) {
				if v != 0 {
					res.SpikeCounts[i][j]++
				}
			}
		}
	}
	for i := range outs {
		res.FinalState[i] = append([]float32(nil), in.Output(i)...)
	}
	return res, nil
}

// parseSteps reads -input: an array of per-step vectors, run for steps
// (0: all of them), or one vector, held for steps (0: timesteps).
func parseSteps(b []byte, steps, timesteps int) ([][]float32, int, error) {
	var rows [][]float32
	if err := json.Unmarshal(b, &rows); err != nil {
		var one []float32
		if err2 := json.Unmarshal(b, &one); err2 != nil {
			return nil, 0, fmt.Errorf("want an array of per-step vectors or one vector: %v", err)
		}
		if steps == 0 {
			steps = timesteps
		}
		rows = [][]float32{one}
	} else if steps == 0 {
		steps = len(rows)
	} else if steps > len(rows) {
		return nil, 0, fmt.Errorf("-steps %d but the input has %d steps", steps, len(rows))
	}
	if len(rows) == 0 || steps < 1 {
		return nil, 0, errors.New("no input steps")
	}
	return rows, steps, nil
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		p = p[i+1:]
	}
	if i := strings.LastIndex(p, "."); i > 0 {
		p = p[:i]
	}
	return p
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// parseVectors reads calibration inputs: an array of vectors, or an object
// holding them under "inputs" or "calibration.inputs" (the digits files).
func parseVectors(raw []byte) ([][]float32, error) {
	var xs [][]float32
	if err := json.Unmarshal(raw, &xs); err == nil {
		return xs, nil
	}
	var obj struct {
		Inputs      [][]float32 `json:"inputs"`
		Calibration struct {
			Inputs [][]float32 `json:"inputs"`
		} `json:"calibration"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if obj.Inputs != nil {
		return obj.Inputs, nil
	}
	if obj.Calibration.Inputs != nil {
		return obj.Calibration.Inputs, nil
	}
	return nil, errors.New("no input vectors (an array, or an object with inputs or calibration.inputs)")
}
