package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/neuro-go/neuro/runtime/hal"
)

// Errors of resources: their owners and quotas.
var (
	// ErrQuota is wrapped when an owner has as many networks, bytes of
	// networks or deployments as Options.Quota allows.
	ErrQuota = errors.New("runtime: quota exceeded")
	// ErrPermission is wrapped when a caller may see a resource but not
	// change it (the program's own deployments).
	ErrPermission = errors.New("runtime: permission denied")
	// ErrInUse is wrapped when a network cannot be deleted because a
	// deployment uses it.
	ErrInUse = errors.New("runtime: in use")
)

// Quota bounds what one owner may keep. A zero field takes the default
// beside it; a negative one is unlimited.
type Quota struct {
	Networks     int   // compiled networks; default 100
	NetworkBytes int64 // bytes of stored programs; default 1 GiB
	Deployments  int   // deployments; default 16
	// DeploymentBytes bounds the state an owner's deployments hold:
	// their program's state per batch slot × slots × replicas, counted
	// before they load. Default 2 GiB.
	DeploymentBytes int64
	// ServerDeploymentBytes bounds the same of all owners' deployments
	// together (the program's own are not counted). Default 8 GiB.
	ServerDeploymentBytes int64
	// Responses and ResponseBytes bound an owner's stored responses
	// (StoreResponse): how many, and their bytes as stored, states
	// included. Defaults 1,000 and 128 MiB.
	Responses     int
	ResponseBytes int64
	// ResponseTTL is how long a stored response is kept. Default 30
	// days.
	ResponseTTL time.Duration
}

// Defaults of Quota.
const (
	DefaultQuotaNetworks              = 100
	DefaultQuotaNetworkBytes          = 1 << 30
	DefaultQuotaDeployments           = 16
	DefaultQuotaDeploymentBytes       = 2 << 30
	DefaultQuotaServerDeploymentBytes = 8 << 30
	DefaultQuotaResponses             = 1000
	DefaultQuotaResponseBytes         = 128 << 20
	DefaultResponseTTL                = 30 * 24 * time.Hour
)

func (q Quota) withDefaults() Quota {
	if q.Networks == 0 {
		q.Networks = DefaultQuotaNetworks
	}
	if q.NetworkBytes == 0 {
		q.NetworkBytes = DefaultQuotaNetworkBytes
	}
	if q.Deployments == 0 {
		q.Deployments = DefaultQuotaDeployments
	}
	if q.DeploymentBytes == 0 {
		q.DeploymentBytes = DefaultQuotaDeploymentBytes
	}
	if q.ServerDeploymentBytes == 0 {
		q.ServerDeploymentBytes = DefaultQuotaServerDeploymentBytes
	}
	if q.Responses == 0 {
		q.Responses = DefaultQuotaResponses
	}
	if q.ResponseBytes == 0 {
		q.ResponseBytes = DefaultQuotaResponseBytes
	}
	if q.ResponseTTL <= 0 {
		q.ResponseTTL = DefaultResponseTTL
	}
	return q
}

// SetQuota replaces what each owner may keep (zero fields take the
// defaults); it applies to what is created from now on. A cluster sets
// every node's from the cluster's configuration.
func (r *Runtime) SetQuota(q Quota) {
	r.mu.Lock()
	r.opts.Quota = q.withDefaults()
	r.mu.Unlock()
}

// Quota reports what each owner may keep.
func (r *Runtime) Quota() Quota {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.opts.Quota
}

// MaxDeploymentID bounds the length of a deployment's ID.
const MaxDeploymentID = 64

// CheckDeploymentID refuses, with a *ParamError naming "id", an ID that
// is not a safe path segment: a deployment's ID is a URL path segment
// and, with Options.DataDir, the name of its file, so it is 1 to
// MaxDeploymentID of A-Z, a-z, 0-9, '.', '_' and '-', not starting with
// '.' ("." and ".." could never be addressed, and a leading dot hides
// the file).
func CheckDeploymentID(id string) error {
	bad := id == "" || len(id) > MaxDeploymentID || id[0] == '.'
	for i := 0; i < len(id) && !bad; i++ {
		c := id[i]
		bad = !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-')
	}
	if bad {
		return &ParamError{"id", fmt.Sprintf("id %q is not 1 to %d characters of A-Z, a-z, 0-9, '.', '_' and '-' not starting with '.'", id, MaxDeploymentID)}
	}
	return nil
}

// Deployment IDs are scoped by owner: two owners may each have a
// deployment "x", and neither can learn of the other's. The program's
// own deployments are seen by every owner, so an owner cannot take the
// ID of one. r.deps is keyed by depKey.
func depKey(owner, id string) string {
	if owner == "" {
		return id
	}
	return owner + "\x00" + id // an ID holds no NUL
}

// findDeployment is called with r.mu held. It finds principal's own
// deployment id, else the program's, else any owner's (the first by
// owner when several use the ID): a request's Principal is for
// telemetry, and the runtime serves whoever asks; a server checks who
// may see what first (DeploymentAs).
func (r *Runtime) findDeployment(id, principal string) (*Deployment, bool) {
	if principal != "" {
		if d, ok := r.deps[depKey(principal, id)]; ok {
			return d, true
		}
	}
	if d, ok := r.deps[id]; ok {
		return d, true
	}
	var found *Deployment
	for _, d := range r.deps {
		if d.ID == id && (found == nil || d.Owner < found.Owner) {
			found = d
		}
	}
	return found, found != nil
}

// DeploymentAs looks a deployment up as principal sees them: its own,
// else the program's. Another owner's is not found, whether or not it
// exists. With no principal it is Deployment: any owner's.
func (r *Runtime) DeploymentAs(id, principal string) (*Deployment, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.findDeployment(id, principal)
	if !ok || principal != "" && d.Owner != "" && d.Owner != principal {
		return nil, fmt.Errorf("%w: %q", ErrDeploymentNotFound, id)
	}
	return d, nil
}

// admitDeployment checks a new deployment's ID (free among its owner's
// and the program's deployments), and its owner's quota of deployments
// and of their memory. It is called with r.mu held.
func (r *Runtime) admitDeployment(d *Deployment) error {
	if err := CheckDeploymentID(d.ID); err != nil {
		return err
	}
	if _, dup := r.deps[depKey(d.Owner, d.ID)]; dup {
		return fmt.Errorf("%w: deployment %q", ErrDuplicate, d.ID)
	}
	if _, dup := r.deps[d.ID]; dup {
		return fmt.Errorf("%w: deployment %q", ErrDuplicate, d.ID)
	}
	if err := r.checkDeploymentQuota(d.Owner); err != nil {
		return err
	}
	return r.checkDeploymentMemory(d)
}

// checkDeploymentQuota is called with r.mu held.
func (r *Runtime) checkDeploymentQuota(owner string) error {
	limit := r.opts.Quota.Deployments
	if owner == "" || limit < 0 {
		return nil
	}
	n := 0
	for _, d := range r.deps {
		if d.Owner == owner {
			n++
		}
	}
	if n >= limit {
		return fmt.Errorf("%w: %s has %d deployments, the limit is %d", ErrQuota, owner, n, limit)
	}
	return nil
}

// reservation is what an owner's compiles in flight will store.
type reservation struct {
	networks int
	bytes    int64
}

// reserve is called with r.mu held.
func (r *Runtime) reserve(owner string, networks int, bytes int64) {
	res := r.reserved[owner]
	res.networks += networks
	res.bytes += bytes
	if res.networks == 0 {
		delete(r.reserved, owner)
		return
	}
	r.reserved[owner] = res
}

// checkNetworkQuota is called with r.mu held. Compiles in flight count
// as stored, so that concurrent ones cannot overrun the quota together.
func (r *Runtime) checkNetworkQuota(owner string, bytes int64) error {
	q := r.opts.Quota
	n, total := r.reserved[owner].networks, r.reserved[owner].bytes
	for _, m := range r.models {
		if m.Network != nil && m.Network.Owner == owner {
			n++
			total += m.Network.StoredBytes
		}
	}
	if q.Networks >= 0 && n >= q.Networks {
		return fmt.Errorf("%w: %s has %d compiled networks, the limit is %d", ErrQuota, owner, n, q.Networks)
	}
	if q.NetworkBytes >= 0 && total+bytes > q.NetworkBytes {
		return fmt.Errorf("%w: %s's compiled networks would take %d bytes, the limit is %d", ErrQuota, owner, total+bytes, q.NetworkBytes)
	}
	return nil
}

// remove unlists a deployment and stops it at once.
func (r *Runtime) remove(d *Deployment) {
	r.mu.Lock()
	if key := depKey(d.Owner, d.ID); r.deps[key] == d {
		delete(r.deps, key)
	}
	r.mu.Unlock()
	r.forget(d)
	d.stop()
}

// Undeploy deletes a deployment on behalf of owner: it is unlisted at
// once (new requests find no such deployment), the requests it has taken
// finish, and then its device is released. A deployment of another owner
// is not found; the program's own (no owner) are ErrPermission.
func (r *Runtime) Undeploy(id, owner string) error {
	r.mu.Lock()
	d, ok := r.findDeployment(id, owner)
	switch {
	case !ok || (d.Owner != "" && d.Owner != owner):
		r.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrDeploymentNotFound, id)
	case d.Owner == "":
		r.mu.Unlock()
		return fmt.Errorf("%w: deployment %q belongs to the server", ErrPermission, id)
	}
	delete(r.deps, depKey(d.Owner, d.ID))
	r.mu.Unlock()
	d.mu.Lock()
	d.draining = true
	d.mu.Unlock()
	r.forget(d)
	r.draining.Add(1)
	go func() {
		defer r.draining.Done()
		d.drain()
	}()
	return nil
}

// DeleteNetwork deletes a compiled network of owner's, from memory and
// the data directory. A network another owner compiled is not found; one
// that a deployment uses is ErrInUse.
func (r *Runtime) DeleteNetwork(id, owner string) error {
	r.mu.Lock()
	m, ok := r.models[id]
	if !ok || m.Network == nil || m.Network.Owner != owner {
		r.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrModelNotFound, id)
	}
	for _, d := range r.deps {
		if d.Model == m {
			r.mu.Unlock()
			return fmt.Errorf("%w: network %q is deployed as %q", ErrInUse, id, d.ID)
		}
	}
	delete(r.models, id)
	r.mu.Unlock()
	r.infos.forget(m)
	if dir := r.networkDir(); dir != "" {
		// The description first: without it the program is never loaded.
		for _, f := range []string{id + ".json", id + ".program"} {
			if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				r.log.Error("deleting a stored network", "file", f, "err", err)
			}
		}
	}
	return nil
}

// storedDeployment is an owned deployment as its file in
// <DataDir>/deployments holds it.
type storedDeployment struct {
	ID       string `json:"id"`
	Model    string `json:"model"`
	Device   string `json:"device"`
	MaxBatch int    `json:"max_batch_size"`
	Replicas int    `json:"replicas"`
	Owner    string `json:"owned_by"`
	// Options are the device's (spec.Config.Options): the cpu device's
	// weight precision, say.
	Options map[string]string `json:"device_options,omitempty"`
}

func (r *Runtime) deploymentDir() string {
	if r.opts.DataDir == "" {
		return ""
	}
	return filepath.Join(r.opts.DataDir, "deployments")
}

// persist writes an owned deployment's spec, so that RestoreDeployments
// brings it back after a restart. A deployment on a device value (not a
// registered name) cannot be written down, and is not kept.
func (r *Runtime) persist(spec DeploymentSpec) error {
	dir := r.deploymentDir()
	if dir == "" || spec.Owner == "" || spec.Dev != nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("runtime: data directory: %w", err)
	}
	b, err := json.Marshal(storedDeployment{spec.ID, spec.Model, spec.Device, spec.MaxBatch, spec.Replicas, spec.Owner, spec.Config.Options})
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, storedName(spec.Owner, spec.ID)), b)
}

// storedName is the file of an owner's deployment: IDs are scoped by
// owner, so the name holds both, the owner as a digest (a principal may
// hold any character). '~' is never part of an ID, so no name is also
// that of an entry stored as <id>.json.
func storedName(owner, id string) string {
	sum := sha256.Sum256([]byte(owner))
	return id + "~" + hex.EncodeToString(sum[:8]) + ".json"
}

func (r *Runtime) forget(d *Deployment) {
	if dir := r.deploymentDir(); dir != "" && d.Owner != "" {
		if err := os.Remove(filepath.Join(dir, storedName(d.Owner, d.ID))); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.log.Error("deleting a stored deployment", "deployment", d.ID, "err", err)
		}
	}
}

// RestoreDeployments starts again the owned deployments that were
// listed when the runtime last stopped (Options.DataDir). Call it once
// the models they use are registered. A deployment that cannot start is
// logged and skipped; the others load in the background.
func (r *Runtime) RestoreDeployments(ctx context.Context) error {
	dir := r.deploymentDir()
	if dir == "" {
		return nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return fmt.Errorf("runtime: data directory: %w", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		var sd storedDeployment
		if err == nil {
			err = json.Unmarshal(b, &sd)
		}
		// An entry stored as <id>.json is moved to its owner's name.
		base := filepath.Base(f)
		renamed := base == sd.ID+".json"
		if err == nil && !renamed && base != storedName(sd.Owner, sd.ID) {
			err = fmt.Errorf("entry id %q of %q does not match its file", sd.ID, sd.Owner)
		}
		if err == nil && CheckDeploymentID(sd.ID) != nil {
			// An ID that is not a safe path segment ("..") could never be
			// addressed: the deployment comes back under a fixed ID its
			// owner can see and delete.
			old := sd.ID
			sd.ID, renamed = restoredID(old), true
			r.log.Warn("restoring a stored deployment under a new id: its own is not a safe path segment", "file", f, "id", old, "new_id", sd.ID)
		}
		if err == nil {
			_, err = r.Start(ctx, DeploymentSpec{ID: sd.ID, Model: sd.Model, Device: sd.Device, Config: hal.Config{Options: sd.Options},
				MaxBatch: sd.MaxBatch, Replicas: sd.Replicas, Owner: sd.Owner})
		}
		if err != nil {
			r.log.Error("skipping a stored deployment", "file", f, "err", err)
		} else if renamed {
			// Start has written the entry under its new name.
			if err := os.Remove(f); err != nil {
				r.log.Error("deleting a renamed stored deployment", "file", f, "err", err)
			}
		}
	}
	return nil
}

// restoredID is the ID a stored deployment whose own ID is unsafe comes
// back under: the same for the same ID at every start.
func restoredID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "dep-restored-" + hex.EncodeToString(sum[:12])
}

// DeploymentInfo is a deployment as a report sees it at one moment: what
// a server lists, and what a cluster node learns of another's.
type DeploymentInfo struct {
	ID       string
	Model    *Model
	Device   hal.Capabilities
	Status   Status
	Failure  error // why it failed, when it has
	Created  time.Time
	Replicas int
	MaxBatch int
	// Owner is the principal that created it; empty for the program's own.
	Owner string
	// Node is the node that runs it, in a cluster; empty alone.
	Node string
	// Waiting says, in a cluster, what a deployment that runs nowhere
	// waits for: a node it is pinned to that is not answering, say.
	Waiting string
	// Active and Queued are the sequences (or samples) in slots and
	// waiting.
	Active, Queued int
}

// Info reports the deployment now.
func (d *Deployment) Info() DeploymentInfo {
	active, queued := d.Load()
	return DeploymentInfo{ID: d.ID, Model: d.Model, Device: d.Device, Status: d.Status(), Failure: d.Failure(), Created: d.Created,
		Replicas: d.Replicas, MaxBatch: d.MaxBatch, Owner: d.Owner, Active: active, Queued: queued}
}

// DeploymentInfo reports one deployment.
func (r *Runtime) DeploymentInfo(id string) (DeploymentInfo, error) {
	return r.DeploymentInfoAs(id, "")
}

// DeploymentInfoAs reports one deployment as principal sees them
// (DeploymentAs).
func (r *Runtime) DeploymentInfoAs(id, principal string) (DeploymentInfo, error) {
	d, err := r.DeploymentAs(id, principal)
	if err != nil {
		return DeploymentInfo{}, err
	}
	return d.Info(), nil
}

// DeploymentInfos reports every deployment, sorted by ID.
func (r *Runtime) DeploymentInfos() []DeploymentInfo {
	deps := r.Deployments()
	out := make([]DeploymentInfo, len(deps))
	for i, d := range deps {
		out[i] = d.Info()
	}
	return out
}

// CreateDeployment places a model on a device on behalf of a request
// (POST /v1/deployments, a cluster node), waiting at most wait for the
// load; Deploy, which waits for the whole load, is the call for a program
// placing its own models. A load that fails in that time is removed and
// its error returned; one still loading is reported as loading and goes
// on in the background even after ctx ends.
func (r *Runtime) CreateDeployment(ctx context.Context, spec DeploymentSpec, wait time.Duration) (DeploymentInfo, error) {
	d, err := r.Start(context.WithoutCancel(ctx), spec)
	if err != nil {
		return DeploymentInfo{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := d.Wait(wctx); err != nil && wctx.Err() == nil {
		r.remove(d)
		return DeploymentInfo{}, err
	}
	return d.Info(), nil
}
