// Package wire holds the request and response types of Neuro's REST API
// (docs/API.md): the JSON contract, written once. The server
// (package httpapi) encodes its answers with them, the Go client
// (package httpapi/client) decodes them (its exported types are aliases
// of these), and a test checks that the request bodies the server
// parses name the same fields.
//
// # Overview
//
// A type per object of the API: ChatCompletionRequest and
// ChatCompletion, CompletionRequest and Completion, their stream chunks,
// Model, Deployment, Run, CompiledNetwork, Telemetry, Health, and the
// ErrorResponse every failure carries. Fields follow the JSON names;
// optional request fields are pointers, so that nil leaves them out and
// the server's default applies.
//
// The package also has the JSON appenders (AppendString, AppendFloat,
// AppendBytes) that the server's stream chunks and errors are built
// with: a streamed token is one chunk, and encoding/json would allocate
// for each. They live here, beside the types whose encoding they
// reproduce.
//
// # Invariants
//
//   - The hand-written encoders write exactly what encoding/json writes
//     for the same value of the wire type (checked by httpapi's tests).
//   - Numbers JSON cannot hold never reach the wire: a log-probability of
//     minus infinity is sent as -9999 (Finite), as OpenAI's API does.
//   - The package imports nothing of Neuro's, so the client stays small.
package wire
