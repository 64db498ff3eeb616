package client

import "github.com/neuro-go/neuro/httpapi/wire"

// The request and response types are package wire's, the one definition
// of the API's JSON that the server encodes with; the names here are
// aliases, so either name may be used.

// Ptr returns a pointer to v, for the optional fields of requests:
// Temperature: client.Ptr(0.0).
func Ptr[T any](v T) *T { return &v }

// Requests and their parts.
type (
	ChatMessage             = wire.ChatMessage
	StreamOptions           = wire.StreamOptions
	NeuroOptions            = wire.NeuroOptions
	Sampling                = wire.Sampling
	ChatCompletionRequest   = wire.ChatCompletionRequest
	CompletionRequest       = wire.CompletionRequest
	CreateDeploymentRequest = wire.CreateDeploymentRequest
	RunRequest              = wire.RunRequest
	EventSample             = wire.EventSample
	PackedEventSample       = wire.PackedEventSample
	CompileRequest          = wire.CompileRequest
	TelemetryQuery          = wire.TelemetryQuery
)

// Completions.
type (
	Usage               = wire.Usage
	NeuromorphicUsage   = wire.NeuromorphicUsage
	ChatCompletion      = wire.ChatCompletion
	ChatChoice          = wire.ChatChoice
	ChatLogprobs        = wire.ChatLogprobs
	TokenLogprob        = wire.TokenLogprob
	ChatCompletionChunk = wire.ChatCompletionChunk
	ChatChunkChoice     = wire.ChatChunkChoice
	ChatDelta           = wire.ChatDelta
	ChunkNeuro          = wire.ChunkNeuro
	LayerActivity       = wire.LayerActivity
	Completion          = wire.Completion
	CompletionChoice    = wire.CompletionChoice
	CompletionLogprobs  = wire.CompletionLogprobs
)

// Models, deployments, runs and compiles.
type (
	Model           = wire.Model
	Capabilities    = wire.Capabilities
	Neuromorphic    = wire.Neuromorphic
	Context         = wire.Context
	Card            = wire.Card
	Deployment      = wire.Deployment
	Device          = wire.Device
	DeploymentLoad  = wire.DeploymentLoad
	Deleted         = wire.Deleted
	Run             = wire.Run
	RunOutput       = wire.RunOutput
	RunUsage        = wire.RunUsage
	CompiledNetwork = wire.CompiledNetwork
	NetworkReport   = wire.NetworkReport
	TargetReport    = wire.TargetReport
	CompileSource   = wire.CompileSource
)

// Responses: conversations the server stores and continues.
type (
	ResponseRequest     = wire.ResponseRequest
	InputMessage        = wire.InputMessage
	InputText           = wire.InputText
	Response            = wire.Response
	OutputMessage       = wire.OutputMessage
	OutputText          = wire.OutputText
	IncompleteDetails   = wire.IncompleteDetails
	ResponseUsage       = wire.ResponseUsage
	InputTokensDetails  = wire.InputTokensDetails
	OutputTokensDetails = wire.OutputTokensDetails
	ResponseDeleted     = wire.ResponseDeleted
	ResponseEvent       = wire.ResponseEvent
)

// Telemetry and health.
type (
	Telemetry        = wire.Telemetry
	TelemetryGroup   = wire.TelemetryGroup
	RequestCounts    = wire.RequestCounts
	Percentiles      = wire.Percentiles
	TokenCounts      = wire.TokenCounts
	NeuromorphicWork = wire.NeuromorphicWork
	NodeStatus       = wire.NodeStatus
	Health           = wire.Health
	DeploymentHealth = wire.DeploymentHealth
)
