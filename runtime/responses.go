package runtime

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/neuro-go/neuro/tokenizer"
)

// ErrResponseNotFound is wrapped when a stored response does not exist
// for the caller: never made, made with store false, deleted, expired,
// or another owner's.
var ErrResponseNotFound = errors.New("runtime: response not found")

// StoredResponse is one turn of a conversation kept for its owner, so
// that a later turn continues it and the turn can be read back.
type StoredResponse struct {
	ID      string    `json:"id"`
	Owner   string    `json:"owner"`
	Created time.Time `json:"created"`
	// Expires is when it is gone; zero takes Quota.ResponseTTL from now
	// when stored.
	Expires    time.Time `json:"expires"`
	Model      string    `json:"model"`
	Deployment string    `json:"deployment"`
	// Messages is the conversation through this turn's answer. A turn's
	// instructions are not among them: they apply to their turn only.
	Messages []tokenizer.Message `json:"messages"`
	// Object is the response as the API answered it, returned again as
	// it was.
	Object json.RawMessage `json:"object"`
	// State is the model's state after the turn, its instructions
	// included; nil when the device could not save it, and a later turn
	// then reads the conversation whole.
	State *State `json:"state,omitempty"`
}

// NewResponseID returns a fresh id with the given prefix ("resp_",
// "msg_"): 24 random bytes in hex.
func NewResponseID(prefix string) string {
	var b [24]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// storedMagic opens an encoded StoredResponse; the last byte is the
// format's version.
const storedMagic = "NRS\x01"

// MaxStoredResponseBytes bounds an encoded StoredResponse that
// UnmarshalStoredResponse reads.
const MaxStoredResponseBytes = 64 << 20

// storedHeader is what an encoding holds before the state's data.
type storedHeader struct {
	*StoredResponse
	StateData int `json:"state_data"` // bytes of State.Data after the header
}

// MarshalBinary encodes the response: a header, its JSON without the
// state's data, then the data as they are, so that a stored state costs
// its own size and no more.
func (s *StoredResponse) MarshalBinary() ([]byte, error) {
	c := *s
	var data []byte
	if s.State != nil {
		st := *s.State
		data, st.Data = st.Data, nil
		c.State = &st
	}
	head, err := json.Marshal(storedHeader{&c, len(data)})
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(storedMagic)+4+len(head)+len(data))
	b = append(b, storedMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(head)))
	b = append(b, head...)
	return append(b, data...), nil
}

// UnmarshalStoredResponse decodes what MarshalBinary encoded; anything
// else is an error that says what is wrong.
func UnmarshalStoredResponse(b []byte) (*StoredResponse, error) {
	if len(b) > MaxStoredResponseBytes {
		return nil, fmt.Errorf("runtime: a stored response of %d bytes is over the limit of %d", len(b), MaxStoredResponseBytes)
	}
	if len(b) < len(storedMagic)+4 || string(b[:len(storedMagic)]) != storedMagic {
		return nil, errors.New("runtime: not a stored response (no header)")
	}
	n := binary.LittleEndian.Uint32(b[len(storedMagic):])
	rest := b[len(storedMagic)+4:]
	if uint64(n) > uint64(len(rest)) {
		return nil, fmt.Errorf("runtime: stored response cut short: a %d-byte header in %d bytes", n, len(rest))
	}
	h := storedHeader{StoredResponse: &StoredResponse{}}
	if err := json.Unmarshal(rest[:n], &h); err != nil {
		return nil, fmt.Errorf("runtime: stored response header: %w", err)
	}
	data := rest[n:]
	s := h.StoredResponse
	switch {
	case h.StateData != len(data):
		return nil, fmt.Errorf("runtime: stored response: %d bytes of state data, the header says %d", len(data), h.StateData)
	case s.State == nil && len(data) > 0:
		return nil, errors.New("runtime: stored response: state data without a state")
	case s.ID == "" || s.Owner == "":
		return nil, errors.New("runtime: stored response without an id or owner")
	}
	if s.State != nil {
		s.State.Data = data
	}
	return s, nil
}

// responseStore keeps stored responses: in memory, or with a data
// directory in files, of which only an index is held in memory.
type responseStore struct {
	mu     sync.Mutex
	dir    string
	byID   map[string]*storedEntry
	owners map[string]*ownerUse
	swept  time.Time
}

type storedEntry struct {
	owner   string
	bytes   int64
	expires time.Time
	rec     *StoredResponse // nil when it lives in a file
}

type ownerUse struct {
	count int
	bytes int64
}

func (r *Runtime) responseDir() string {
	if r.opts.DataDir == "" {
		return ""
	}
	return filepath.Join(r.opts.DataDir, "responses")
}

// responseFile is where a response lives: one folder per owner, named by
// a digest of the owner, so that no principal's name reaches a path.
func (st *responseStore) file(owner, id string) string {
	sum := sha256.Sum256([]byte(owner))
	return filepath.Join(st.dir, hex.EncodeToString(sum[:8]), id)
}

// validResponseID accepts the ids NewResponseID makes.
func validResponseID(id string) bool {
	if !strings.HasPrefix(id, "resp_") || len(id) != len("resp_")+48 {
		return false
	}
	_, err := hex.DecodeString(id[len("resp_"):])
	return err == nil
}

// loadResponses indexes the responses stored in the data directory;
// expired ones are deleted, unreadable ones logged and left alone.
func (r *Runtime) loadResponses() {
	st := &responseStore{dir: r.responseDir(), byID: map[string]*storedEntry{}, owners: map[string]*ownerUse{}}
	r.responses = st
	if st.dir == "" {
		return
	}
	paths, _ := filepath.Glob(filepath.Join(st.dir, "*", "resp_*"))
	now := r.opts.Now()
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err == nil {
			var rec *StoredResponse
			if rec, err = UnmarshalStoredResponse(b); err == nil {
				switch {
				case rec.ID != filepath.Base(path) || st.file(rec.Owner, rec.ID) != path:
					err = errors.New("its id or owner does not match its file")
				case !rec.Expires.After(now):
					os.Remove(path)
				default:
					st.add(rec.ID, &storedEntry{owner: rec.Owner, bytes: int64(len(b)), expires: rec.Expires})
				}
			}
		}
		if err != nil {
			r.log.Error("a stored response cannot be read; it is left where it is", "file", path, "err", err)
		}
	}
}

// add indexes an entry; st.mu is held or not yet shared.
func (st *responseStore) add(id string, e *storedEntry) {
	st.byID[id] = e
	u := st.owners[e.owner]
	if u == nil {
		u = &ownerUse{}
		st.owners[e.owner] = u
	}
	u.count++
	u.bytes += e.bytes
}

// remove drops an entry and its file; st.mu is held.
func (st *responseStore) remove(id string) {
	e := st.byID[id]
	if e == nil {
		return
	}
	delete(st.byID, id)
	if u := st.owners[e.owner]; u != nil {
		u.count--
		u.bytes -= e.bytes
		if u.count == 0 {
			delete(st.owners, e.owner)
		}
	}
	if st.dir != "" {
		os.Remove(st.file(e.owner, id))
	}
}

// sweep deletes the expired responses, at most once a minute; st.mu is
// held.
func (st *responseStore) sweep(now time.Time) {
	if now.Sub(st.swept) < time.Minute {
		return
	}
	st.swept = now
	for id, e := range st.byID {
		if !e.expires.After(now) {
			st.remove(id)
		}
	}
}

// CheckResponseQuota reports, wrapping ErrQuota, whether owner has as
// many stored responses, or bytes of them, as Quota allows: a server asks
// before it answers a request that will be stored.
func (r *Runtime) CheckResponseQuota(owner string) error {
	return r.checkResponseQuota(owner, 0)
}

func (r *Runtime) checkResponseQuota(owner string, size int64) error {
	q := r.Quota()
	st := r.responses
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sweep(r.opts.Now())
	var u ownerUse
	if p := st.owners[owner]; p != nil {
		u = *p
	}
	if q.Responses > 0 && u.count+1 > q.Responses {
		return fmt.Errorf("%w: %s has %d stored responses, the limit is %d (delete some, or send store: false)", ErrQuota, owner, u.count, q.Responses)
	}
	if q.ResponseBytes > 0 && u.bytes+max(size, 1) > q.ResponseBytes {
		return fmt.Errorf("%w: %s's stored responses would hold %d bytes, the limit is %d", ErrQuota, owner, u.bytes+size, q.ResponseBytes)
	}
	return nil
}

// StoreResponse keeps a response for its owner until it expires
// (Quota.ResponseTTL after now, unless rec.Expires is set), within the
// owner's quota of responses and bytes; over it, the error wraps
// ErrQuota. With Options.DataDir it survives a restart.
func (r *Runtime) StoreResponse(ctx context.Context, rec *StoredResponse) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !validResponseID(rec.ID) || rec.Owner == "" {
		return fmt.Errorf("%w: a stored response needs an id from NewResponseID and an owner", ErrInvalidRequest)
	}
	if rec.Expires.IsZero() {
		rec.Expires = r.opts.Now().Add(r.Quota().ResponseTTL)
	}
	b, err := rec.MarshalBinary()
	if err != nil {
		return err
	}
	if err := r.checkResponseQuota(rec.Owner, int64(len(b))); err != nil {
		return err
	}
	st := r.responses
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, ok := st.byID[rec.ID]; ok {
		return fmt.Errorf("%w: response %q is already stored", ErrInvalidRequest, rec.ID)
	}
	e := &storedEntry{owner: rec.Owner, bytes: int64(len(b)), expires: rec.Expires}
	if st.dir == "" {
		e.rec = rec
	} else {
		path := st.file(rec.Owner, rec.ID)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("runtime: storing response %s: %w", rec.ID, err)
		}
		if err := writeAtomic(path, b); err != nil {
			return fmt.Errorf("runtime: storing response %s: %w", rec.ID, err)
		}
	}
	st.add(rec.ID, e)
	return nil
}

// Response returns an owner's stored response; one that is not there for
// this owner wraps ErrResponseNotFound.
func (r *Runtime) Response(ctx context.Context, id, owner string) (*StoredResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st := r.responses
	st.mu.Lock()
	defer st.mu.Unlock()
	e := st.byID[id]
	if e == nil || e.owner != owner {
		return nil, fmt.Errorf("%w: %q", ErrResponseNotFound, id)
	}
	if !e.expires.After(r.opts.Now()) {
		st.remove(id)
		return nil, fmt.Errorf("%w: %q has expired", ErrResponseNotFound, id)
	}
	if e.rec != nil {
		return e.rec, nil
	}
	b, err := os.ReadFile(st.file(owner, id))
	if err != nil {
		return nil, fmt.Errorf("runtime: reading response %s: %w", id, err)
	}
	return UnmarshalStoredResponse(b)
}

// DeleteResponse deletes an owner's stored response; one that is not
// there for this owner wraps ErrResponseNotFound.
func (r *Runtime) DeleteResponse(ctx context.Context, id, owner string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st := r.responses
	st.mu.Lock()
	defer st.mu.Unlock()
	e := st.byID[id]
	if e == nil || e.owner != owner || !e.expires.After(r.opts.Now()) {
		return fmt.Errorf("%w: %q", ErrResponseNotFound, id)
	}
	st.remove(id)
	return nil
}

// ResponseStats reports the stored responses: how many, and their bytes.
func (r *Runtime) ResponseStats() (count int, bytes int64) {
	st := r.responses
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, u := range st.owners {
		count += u.count
		bytes += u.bytes
	}
	return count, bytes
}
