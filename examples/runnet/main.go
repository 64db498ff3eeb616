// Command runnet compiles a spiking network, deploys it and runs it, all
// over a Neuro server's REST API (httpapi/client):
//
//	NEURO_API_KEYS=sk-me go run ./examples/server &
//	NEURO_API_KEY=sk-me go run ./examples/runnet -in compile/pytorch/testdata/snn/snntorch_leaky.pt -device cpu
//
// It sends the file to POST /v1/compile, places the network with POST
// /v1/deployments, runs -samples random inputs (T × n matrices of values
// in [0, 1)) with POST /v1/deployments/{id}/run, prints each prediction
// and spike count, and deletes the deployment and the network unless
// -keep.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/neuro-go/neuro/httpapi/client"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "runnet:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("runnet", flag.ContinueOnError)
	server := fs.String("server", "http://127.0.0.1:8080", "the Neuro server")
	in := fs.String("in", "", "the network file (.pt, .onnx or .nir)")
	format := fs.String("format", "", "pytorch, onnx or nir; default from the file's extension")
	device := fs.String("device", "cpu", "the device to deploy on (cpu, loihi, xylo)")
	samples := fs.Int("samples", 4, "random samples to run")
	steps := fs.Int("timesteps", 50, "timesteps per sample")
	keep := fs.Bool("keep", false, "keep the deployment and the network")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return fmt.Errorf("-in is required")
	}
	if *format == "" {
		switch strings.ToLower(filepath.Ext(*in)) {
		case ".pt", ".pth":
			*format = "pytorch"
		case ".onnx":
			*format = "onnx"
		case ".nir":
			*format = "nir"
		default:
			return fmt.Errorf("cannot tell the format of %s: give -format", *in)
		}
	}
	file, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	c, err := client.New(*server, &client.Options{APIKey: getenv("NEURO_API_KEY")})
	if err != nil {
		return err
	}
	net, err := c.Compile(ctx, &client.CompileRequest{Format: *format, File: file, Name: filepath.Base(*in)})
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	fmt.Fprintf(out, "compiled %s: %s, %d inputs, %d outputs, %d neurons, %d synapses\n",
		filepath.Base(*in), net.ID, net.Network.Inputs, net.Network.Outputs, net.Network.Neurons, net.Network.Synapses)
	d, err := c.CreateDeployment(ctx, &client.CreateDeploymentRequest{Model: net.ID, Device: *device})
	if err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	for d.Status == "loading" {
		if d, err = c.GetDeployment(ctx, d.ID); err != nil {
			return err
		}
	}
	if d.Status != "ready" {
		return fmt.Errorf("deployment %s is %s: %s", d.ID, d.Status, d.Failure)
	}
	fmt.Fprintf(out, "deployed as %s on %s (%s)\n", d.ID, d.Device.Name, d.Device.Kind)
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := make([]any, *samples)
	for k := range inputs {
		rows := make([][]float32, *steps)
		for t := range rows {
			rows[t] = make([]float32, net.Network.Inputs)
			for i := range rows[t] {
				rows[t][i] = rng.Float32()
			}
		}
		inputs[k] = rows
	}
	res, err := c.Run(ctx, d.ID, &client.RunRequest{Inputs: inputs})
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	for _, o := range res.Outputs {
		fmt.Fprintf(out, "sample %d: prediction %d, output %v\n", o.Index, o.Prediction, o.SpikeCounts)
	}
	u := res.Usage
	fmt.Fprintf(out, "%d samples, %d timesteps, %.0f spikes, %.0f synaptic ops, %.3g µJ, %.3g ms on the device\n",
		u.Samples, u.Timesteps, u.Spikes, u.SynapticOps, u.EnergyUJ, u.DeviceMS)
	for _, w := range res.Warnings {
		fmt.Fprintln(out, "warning:", w)
	}
	if *keep {
		return nil
	}
	if _, err := c.DeleteDeployment(ctx, d.ID); err != nil {
		return err
	}
	_, err = c.DeleteModel(ctx, net.ID)
	return err
}
