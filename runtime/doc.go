// Package runtime serves spiking language models: it registers models
// (a compiled Program plus its tokenizer, chat template and card), places
// them on devices as deployments, and generates text for many callers at
// once.
//
// # Overview
//
// A request is a sequence whose spiking state is its whole context: its
// memory does not grow with the context, unlike a transformer's key-value
// cache. Each token is presented to the network for the program's
// timesteps (one-hot on its Input), the logits are read from its Output,
// and the next token is sampled on the host (temperature, top_p, seed,
// stop sequences, presence and frequency penalties, logit_bias, n choices,
// logprobs with alternatives). Results stream through a callback that stops
// generation when it returns an error (Generate), or an iterator (Stream).
//
// Concurrent requests on one deployment share its Instances: a worker per
// replica steps up to MaxBatch sequences together and, between tokens, lets
// finished or cancelled sequences leave and queued ones join (continuous
// batching). The queue is bounded: work it cannot take is refused with
// ErrOverloaded instead of waiting without limit. A cancelled context frees
// its slot before the next token; a device that fails ends the sequences on
// it with ErrDeviceUnavailable. A request of several prompts (Prompts) is
// one batch of sequences, N per prompt; the prompts that do not fit the
// queue at once join it as the request's own sequences finish.
//
// A request is checked and its prompts encoded once, before any of it is
// queued: the bounds of its fields (MaxTemperature and the rest), the
// model's context and the caller's MaxPromptTokens. What a listing says of
// a model (its size, the devices that hold it) is ModelInfo.
//
// Telemetry records every request per caller (an opaque principal), model
// and deployment: latency and time-to-first-token percentiles, tokens,
// timesteps, spikes, synaptic operations and energy from the device's cost
// model. A batch step's cost is shared equally by the sequences in it.
//
// # Placing a model
//
// Deploy is the way to place a model: it loads the model onto the device
// its DeploymentSpec names (a registered device and its Config, or a
// device value in Dev), waits until the deployment serves, and returns it;
// a load that fails returns its error and leaves nothing listed. Programs,
// tests and servers placing their models at start-up use it.
//
// Two other calls place a model, for callers that must not wait for the
// whole load:
//
//   - Start lists the deployment (status loading) and returns at once,
//     loading in the background for as long as its ctx lives;
//     Deployment.Wait waits for the outcome, and a failed load stays
//     listed with its Failure. Use it to load several deployments at once
//     or to show a load in progress.
//   - CreateDeployment answers a request to create a deployment (POST
//     /v1/deployments, a cluster node): it waits at most a given time and
//     returns a DeploymentInfo. A load that fails in that time is removed
//     and its error returned; one that takes longer is reported as loading
//     and goes on after the request's ctx ends.
//
// # Invariants
//
//   - The same request with the same seed on the same deployment gives the
//     same text, whatever else runs beside it: batch slots never interact
//     and each sequence draws from its own random stream.
//   - Nothing a caller sends panics the runtime; invalid values are
//     *ParamError (wrapping ErrInvalidRequest) naming the field.
//   - Generate returns as soon as its context ends; a sequence of it still
//     in a slot leaves before the next token, one still queued is dropped
//     when a worker takes it. No goroutine is started per request.
package runtime
