package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	_ "github.com/neuro-go/neuro/compile/pytorch" // the format the test sends
	"github.com/neuro-go/neuro/httpapi/client/clienttest"
)

// The program against a real server: an snnTorch network compiled,
// deployed, run and deleted.
func TestRunNet(t *testing.T) {
	srv, err := clienttest.Start(context.Background(), &clienttest.Options{NoLoihi: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env := func(k string) string {
		if k == "NEURO_API_KEY" {
			return srv.Key
		}
		return ""
	}
	var out bytes.Buffer
	err = run(context.Background(), []string{"-server", srv.URL, "-in", "../../compile/pytorch/testdata/snn/snntorch_leaky.pt", "-samples", "2", "-timesteps", "20"}, env, &out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"compiled snntorch_leaky.pt", "deployed as dep-", "on cpu", "sample 1: prediction", "2 samples, 40 timesteps"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if models, _ := srv.Runtime.Models(), 0; len(models) != 3 {
		t.Errorf("the network was not deleted: %d models", len(models))
	}
	if err := run(context.Background(), []string{"-in", "x.bin"}, env, &out); err == nil || !strings.Contains(err.Error(), "-format") {
		t.Errorf("unknown extension: %v", err)
	}
}
