package httpapi

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/xylo"
)

func readFixture(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func compileBody(format string, file []byte, extra string) string {
	return `{"model_format":"` + format + `","model_file":"` + base64.StdEncoding.EncodeToString(file) + `"` + extra + `}`
}

// zipBomb is a .pt-shaped zip whose one entry inflates to n zero bytes.
func zipBomb(t testing.TB, n int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("archive/data.pkl")
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, 1<<20)
	for i := 0; i < n>>20; i++ {
		w.Write(zero)
	}
	zw.Close()
	return buf.Bytes()
}

func TestCompile(t *testing.T) {
	dir := t.TempDir()
	rt := runtime.New(&runtime.Options{DataDir: dir})
	s := newTestServer(t, rt, &Options{MaxCompileBytes: 1 << 20})
	onnx := readFixture(t, "compile/testdata/digits/mlp.onnx")
	pt := readFixture(t, "compile/testdata/digits/mlp_module.pt")
	var ids []string
	for _, tc := range []struct {
		format, name string
		file         []byte
		extra        string
	}{
		{"onnx", "mlp.onnx", onnx, `,"name":"digits","options":{"timesteps":32,"weight_bits":8,"calibration":{"samples":[[` + strings.Repeat("0.5,", 63) + `0.5]],"percentile":99}}`},
		{"pytorch", "mlp_module.pt", pt, ""},
		{"torchscript", "mlp_module.pt", pt, `,"target":"cpu"`},
	} {
		w := do(s, "POST", "/v1/compile", keyAlice, compileBody(tc.format, tc.file, tc.extra))
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", tc.name, w.Code, w.Body)
		}
		var raw map[string]json.RawMessage
		json.Unmarshal(w.Body.Bytes(), &raw)
		for _, k := range []string{"id", "object", "created", "name", "status", "source", "network", "target", "estimates", "warnings"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("%s: result lacks %q: %s", tc.name, k, w.Body)
			}
		}
		var res wire.CompiledNetwork
		json.Unmarshal(w.Body.Bytes(), &res)
		var est runtime.Estimates
		json.Unmarshal(res.Estimates, &est)
		if res.Object != "compiled_network" || res.Status != "succeeded" || res.Source.Bytes != int64(len(tc.file)) || len(res.Source.SHA256) != 64 ||
			res.Network.Inputs != 64 || res.Network.Outputs != 10 || res.Network.Neurons == 0 || res.Target.Device != "cpu" || !res.Target.Fits ||
			est.EnergyPerTimestepNJ <= 0 || res.Warnings == nil {
			t.Errorf("%s: %s", tc.name, w.Body)
		}
		if tc.format == "torchscript" && res.Source.Format != "pytorch" {
			t.Errorf("torchscript compiled as %q", res.Source.Format)
		}
		ids = append(ids, res.ID)
	}
	// Listed for the owner with no generation capability; hidden from
	// others; a completion from it is 400 saying it is not a language model.
	listed := func(s *Server, key string) map[string]*wire.Model {
		var list struct{ Data []*wire.Model }
		json.Unmarshal(do(s, "GET", "/v1/models", key, nil).Body.Bytes(), &list)
		out := map[string]*wire.Model{}
		for _, m := range list.Data {
			out[m.ID] = m
		}
		return out
	}
	m := listed(s, keyAlice)[ids[0]]
	if m == nil || m.OwnedBy != "alice" || m.Capabilities.Chat || m.Capabilities.Completions || m.Neuromorphic.Neurons == 0 {
		t.Fatalf("alice's network: %+v", m)
	}
	if len(listed(s, keyBob)) != 0 {
		t.Errorf("bob sees alice's networks")
	}
	checkError(t, do(s, "GET", "/v1/models/"+ids[0], keyBob, nil), 404, typeNotFound, "model_not_found", "")
	w := do(s, "POST", "/v1/completions", keyAlice, `{"model":"`+ids[0]+`","prompt":"x"}`)
	checkError(t, w, 400, typeInvalidRequest, "not_a_language_model", "model")
	if !strings.Contains(w.Body.String(), "not a language model") {
		t.Errorf("message does not say why: %s", w.Body)
	}

	// A restart with the same data directory keeps them.
	rt2 := runtime.New(&runtime.Options{DataDir: dir})
	s2 := newTestServer(t, rt2, nil)
	after := listed(s2, keyAlice)
	for _, id := range ids {
		if after[id] == nil || after[id].OwnedBy != "alice" {
			t.Errorf("%s lost in the restart: %v", id, after)
		}
	}
	if mm, _ := rt2.Model(ids[0]); mm == nil || mm.Program.Source.SHA256 == "" {
		t.Error("restored program lost its source")
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "networks", ".tmp-*")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}

	// Errors.
	evil := readFixture(t, "compile/pytorch/internal/torchfile/testdata/evil_os_system.pt")
	for _, tc := range []struct {
		name, body  string
		status      int
		code, param string
	}{
		{"bad base64", `{"model_format":"onnx","model_file":"@@@not base64"}`, 400, "invalid_base64", "model_file"},
		{"unknown format", compileBody("keras", onnx, ""), 400, "invalid_value", "model_format"},
		{"missing format", `{"model_file":"AAAA"}`, 400, "missing_field", "model_format"},
		{"missing file", `{"model_format":"onnx"}`, 400, "missing_field", "model_file"},
		{"unknown target", compileBody("onnx", onnx, `,"target":"tpu"`), 400, "invalid_value", "target"},
		{"bad option", compileBody("onnx", onnx, `,"options":{"timesteps":"many"}`), 400, "invalid_type", "options.timesteps"},
		{"bad calibration", compileBody("onnx", onnx, `,"options":{"calibration":{"samples":[["x"]]}}`), 400, "invalid_type", "options.calibration.samples"},
		{"garbage file", compileBody("onnx", []byte("definitely not onnx"), ""), 400, "invalid_model_file", "model_file"},
		{"hostile pickle", compileBody("pytorch", evil, ""), 400, "forbidden_content", "model_file"},
		{"zip bomb", compileBody("pytorch", zipBomb(t, 64<<20), ""), 400, "", "model_file"},
		{"unsupported operator", compileBody("onnx", readFixture(t, "compile/onnx/testdata/bad_unsupported_op.onnx"), ""), 422, "unsupported_model", ""},
		{"does not fit", compileBody("onnx", onnx, `,"target":"xylo"`), 422, "unsupported_model", ""},
		{"too large", compileBody("onnx", make([]byte, 2<<20), ""), 413, "request_too_large", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(s, "POST", "/v1/compile", keyAlice, tc.body)
			typ := typeInvalidRequest
			checkError(t, w, tc.status, typ, tc.code, tc.param)
		})
	}
	// Unpadded base64 is accepted.
	body := `{"model_format":"onnx","model_file":"` + base64.RawStdEncoding.EncodeToString(onnx) + `"}`
	if w := do(s, "POST", "/v1/compile", keyAlice, body); w.Code != 200 {
		t.Errorf("unpadded base64: %d %s", w.Code, w.Body)
	}
}

func TestDecodeModelFileChecksSizeFirst(t *testing.T) {
	huge := json.RawMessage(`"` + strings.Repeat("A", 1<<16) + `"`)
	if _, e := decodeModelFile(huge, 1<<10); e == nil || e.Status != 413 {
		t.Fatalf("%v", e)
	}
	for _, s := range []string{"AAEC", "AAE", "AAE=", "AA==", "AA"} {
		b, e := decodeModelFile(json.RawMessage(`"`+s+`"`), 1<<10)
		if e != nil || len(b) == 0 {
			t.Errorf("%q: %v", s, e)
		}
	}
}
