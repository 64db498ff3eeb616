package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// check is one request of a consistency run and the status it must get.
type check struct {
	what, method, path, body string
	want                     int
}

// consistency runs the run-networks checks through the nodes, each
// request on the next node, as a client behind a load balancer sends
// them: compile, deploy, run (a good input, then one of the wrong
// width), delete while deployed, undeploy, delete, and reads between
// each write. Every answer must already see what the previous node
// answered. It returns how many of the runs passed every check, and the
// failures.
func (b *bench) consistency(runs int) (passed int, failures []string, err error) {
	onnx, err := os.ReadFile("compile/testdata/digits/mlp.onnx")
	if err != nil {
		return 0, nil, err
	}
	compileBody := `{"model_format":"onnx","model_file":"` + base64.StdEncoding.EncodeToString(onnx) + `","name":"consistency","options":{"timesteps":16}}`
	wrongWidth := `{"inputs":[[0.5,0.5,0.5]]}`
	next := 0
	node := func() *proc {
		for {
			p := b.procs[next%len(b.procs)]
			next++
			if p.cmd != nil {
				return p
			}
		}
	}
	for r := range runs {
		p := node()
		code, body := b.call(p, "POST", "/v1/compile", compileBody)
		if code != 200 {
			failures = append(failures, fmt.Sprintf("run %d: compile on %s: %d %s", r+1, p.name, code, body))
			continue
		}
		var nw struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(body, &nw); err != nil {
			return passed, failures, err
		}
		dep := fmt.Sprintf("cons-%d", r)
		checks := []check{
			{"the network, listed", "GET", "/v1/models/" + nw.ID, "", 200},
			{"deploy", "POST", "/v1/deployments", `{"model":"` + nw.ID + `","id":"` + dep + `","max_batch_size":2}`, 201},
			{"the deployment, read", "GET", "/v1/deployments/" + dep, "", 200},
			{"a run", "POST", "/v1/deployments/" + dep + "/run", runBody, 200},
			{"a run of the wrong width", "POST", "/v1/deployments/" + dep + "/run", wrongWidth, 400},
			{"deleting the deployed network", "DELETE", "/v1/models/" + nw.ID, "", 409},
			{"undeploy", "DELETE", "/v1/deployments/" + dep, "", 200},
			{"the deployment, gone", "GET", "/v1/deployments/" + dep, "", 404},
			{"a run of the deleted deployment", "POST", "/v1/deployments/" + dep + "/run", runBody, 404},
			{"delete the network", "DELETE", "/v1/models/" + nw.ID, "", 200},
			{"the network, gone", "GET", "/v1/models/" + nw.ID, "", 404},
		}
		ok := true
		for _, c := range checks {
			p := node()
			code, body := b.call(p, c.method, c.path, c.body)
			if c.what == "the deployment, read" && code == 200 && !strings.Contains(string(body), `"status":"ready"`) {
				code = -1 // deploy answered ready: every node must say so
			}
			if code != c.want {
				ok = false
				failures = append(failures, fmt.Sprintf("run %d: %s on %s: %d, want %d: %.200s", r+1, c.what, p.name, code, c.want, body))
				break
			}
		}
		if ok {
			passed++
		} else {
			// Leave nothing behind for the next run.
			b.call(b.procs[0], "DELETE", "/v1/deployments/"+dep, "")
			b.call(b.procs[0], "DELETE", "/v1/models/"+nw.ID, "")
		}
	}
	return passed, failures, nil
}
