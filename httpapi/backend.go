package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/neuro-go/neuro/runtime"
)

// Backend is what the REST surface needs of a runtime: its models and
// deployments, generation, compiling and storing networks, and the
// callers' telemetry. *runtime.Runtime satisfies it; a program may wrap
// one (to add a cache, or route to other nodes). Mock mode is not a
// Backend of its own: it is a runtime whose deployments sit on mock
// devices (package runtime/hal/mock), so that every check is the real
// one.
type Backend interface {
	// Model finds a model by id or alias; an unknown one wraps
	// runtime.ErrModelNotFound.
	Model(id string) (*runtime.Model, error)
	Models() []*runtime.Model
	// ModelInfo describes a model's network: its size and the devices
	// that hold it. An unknown model wraps runtime.ErrModelNotFound.
	ModelInfo(id string) (runtime.ModelInfo, error)
	// DeploymentInfo reports a deployment; an unknown one wraps
	// runtime.ErrDeploymentNotFound. Reports are values, so that a
	// backend can describe deployments that run elsewhere.
	DeploymentInfo(id string) (runtime.DeploymentInfo, error)
	DeploymentInfos() []runtime.DeploymentInfo
	// Generate runs a request, calling fn with each event; it records
	// the request in Telemetry. A request it refuses (a bad field, a
	// prompt over Request.MaxPromptTokens, a full queue) is refused
	// before the first event, so that the refusal can still be an HTTP
	// error.
	Generate(ctx context.Context, req *runtime.Request, fn func(runtime.Event) error) (*runtime.Result, error)
	// Compile imports, compiles and stores a network for its owner;
	// DeleteNetwork deletes one.
	Compile(ctx context.Context, req *runtime.CompileRequest) (*runtime.Network, error)
	DeleteNetwork(id, owner string) error
	// Devices lists the devices a deployment may name.
	Devices() []string
	// CreateDeployment places a model on a device and waits up to wait
	// for the load (a failure then is its error; a longer load is
	// reported loading); Undeploy deletes an owner's deployment once its
	// work is done. A spec the device refuses (its precision) is a
	// *runtime.ParamError naming the field.
	CreateDeployment(ctx context.Context, spec runtime.DeploymentSpec, wait time.Duration) (runtime.DeploymentInfo, error)
	Undeploy(id, owner string) error
	// Run runs samples on a network's deployment; it records the run in
	// Telemetry.
	Run(ctx context.Context, req *runtime.RunRequest) (*runtime.RunResult, error)
	Telemetry() *runtime.Telemetry
	// CheckResponseQuota reports, wrapping runtime.ErrQuota, whether an
	// owner may store no more responses; StoreResponse keeps one (within
	// the quota), Response and DeleteResponse find and delete an
	// owner's. One that is not there for the owner (never stored,
	// another's, expired, deleted) wraps runtime.ErrResponseNotFound.
	CheckResponseQuota(owner string) error
	StoreResponse(ctx context.Context, rec *runtime.StoredResponse) error
	Response(ctx context.Context, id, owner string) (*runtime.StoredResponse, error)
	DeleteResponse(ctx context.Context, id, owner string) error
}

var _ Backend = (*runtime.Runtime)(nil)

// Metrics receives what the server observes, for an exporter of the
// program's choice: httpapi/prom serves them in Prometheus' format. A
// server without one has no /metrics and links no exporter.
type Metrics interface {
	// Request counts a finished request by endpoint and status.
	Request(endpoint string, status int, d time.Duration)
	// Generation counts a finished generation: tokens, spikes, energy.
	Generation(res *runtime.Result)
	// Run counts a finished run of a network: samples, spikes, energy.
	Run(res *runtime.RunResult)
	// Handler serves GET /metrics.
	Handler() http.Handler
}

// RateShare spreads each key's rate limit over several servers: Admitted
// is called for every request this server admits under the rate limit,
// and the sharer calls Server.SpentElsewhere with what other servers
// admitted.
type RateShare interface {
	Admitted(principal string)
}
