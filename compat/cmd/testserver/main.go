// Command testserver starts a Neuro API server on 127.0.0.1 for client
// tests in other languages (compat/js): the real handler over the small
// random-weight test models of package clienttest, or mock mode. It
// prints one JSON line when it is ready, {"url":..., "key":...,
// "endless_bias":{...}} (the logit_bias that keeps the test models from
// ending a completion: clienttest.EndlessBias), and
// compiles PyTorch files (the lima language models models/train writes);
// serves until it is interrupted, its standard input closes (its parent
// has gone), or -timeout passes.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/neuro-go/neuro/httpapi/client/clienttest"
	_ "github.com/neuro-go/neuro/models/lima" // the pytorch importer, for language models the tests compile
)

func main() {
	mock := flag.Bool("mock", false, "serve in mock mode")
	timeout := flag.Duration("timeout", 5*time.Minute, "stop after this long, whatever happens")
	flag.Parse()
	if err := run(*mock, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
}

func run(mock bool, timeout time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	srv, err := clienttest.Start(ctx, &clienttest.Options{Mock: mock, NoLoihi: true})
	if err != nil {
		return err
	}
	defer srv.Close()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	bias, err := clienttest.EndlessBias()
	if err != nil {
		return err
	}
	ready := map[string]any{"url": srv.URL, "key": srv.Key, "endless_bias": bias}
	if err := json.NewEncoder(os.Stdout).Encode(ready); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}
