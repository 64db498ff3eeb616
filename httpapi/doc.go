// Package httpapi serves Neuro's REST interface (the OpenAI-compatible
// chat and text completions, plus deployments, compile, telemetry, health
// and metrics) as one http.Handler over a Backend, which *runtime.Runtime
// satisfies.
//
// # Overview
//
// New(rt, opts) returns a *Server. Mount it on any mux, under a prefix
// with http.StripPrefix:
//
//	srv, err := httpapi.New(rt, &httpapi.Options{Keys: map[string]string{key: "alice"}})
//	mux.Handle("/neuro/", http.StripPrefix("/neuro", srv))
//
// The package links no importer and no metrics exporter. /v1/compile
// accepts the formats the program links by blank import (compile/pytorch,
// compile/onnx, compile/nir), and /metrics exists when Options.Metrics is
// set (httpapi/prom serves Prometheus' format).
//
// The package maps HTTP and JSON to the runtime's types and back, and
// imports no compiler, simulator or device package: what a model's
// network is and which devices hold it (Backend.ModelInfo), which devices
// exist (Backend.Devices), a deployment's precision
// (runtime.DeploymentSpec.Precision), a prompt's tokens and their limit
// (runtime.Request.MaxPromptTokens) and the bounds of sampling
// (runtime.MaxTemperature and the rest) are the backend's, which the
// server reports.
//
// Every /v1 route needs "Authorization: Bearer <key>"; a KeyStore maps
// keys to principals, and a principal scopes telemetry, rate limits and
// compiled networks. Errors are always {"error":{"message","type","param",
// "code"}} with the statuses of API.md, and every response carries
// x-request-id. Streams are server-sent events flushed per token; a client
// that goes away cancels its generation at once, and one that stops
// reading is cut off after Options.StreamWriteTimeout.
//
// Mock mode is a property of the backend, not of this package: a runtime
// whose deployments sit on mock devices (runtime/hal/mock, or
// models.DeployOptions.Mock) runs no network, and every answer comes
// through the real runtime: the models' own tokenizers and context
// limits, the same deployments, real telemetry. Options.Mock only adds
// the one rule API.md gives mock mode (streamed text completions get
// 400) and says "mock" in /health.
//
// docs/API.md records the decisions this package took where API.md left
// them open.
//
// # Invariants
//
//   - Nothing a client sends panics the server; a panic in a handler is
//     recovered into 500 internal_error and the server keeps serving.
//   - A request body is never read past its limit (413), and a
//     /v1/compile upload's size is checked on its base64 text before it
//     is decoded.
//   - Keys are compared in constant time and never logged; a key in the
//     query string is refused.
//   - The server holds no global state: two servers in one process share
//     nothing.
//   - A completion is one Generate call to the backend, whatever its
//     prompts, which encodes each prompt once; a refusal comes before
//     the stream's first event, so it is an HTTP error.
package httpapi
