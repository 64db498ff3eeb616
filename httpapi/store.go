package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime"
)

// networkStore keeps compiled networks: registered in the runtime (so
// that /v1/models lists them) and, with a data directory, on disk as
// <dir>/networks/<id>.program (the compiled Program) and <id>.json (the
// compile result and owner), each written to a temporary file and renamed
// into place, the program first, so that a crash leaves either a whole
// entry or none.
type networkStore struct {
	dir    string
	rt     *runtime.Runtime
	mu     sync.RWMutex
	owners map[string]string
}

func openNetworkStore(dataDir string, rt *runtime.Runtime, log *slog.Logger) (*networkStore, error) {
	st := &networkStore{rt: rt, owners: map[string]string{}}
	if dataDir == "" {
		return st, nil
	}
	st.dir = filepath.Join(dataDir, "networks")
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return nil, fmt.Errorf("httpapi: data directory: %w", err)
	}
	metas, err := filepath.Glob(filepath.Join(st.dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("httpapi: data directory: %w", err)
	}
	for _, path := range metas {
		if err := st.load(path); err != nil {
			// One damaged entry must not keep the server from starting.
			log.Error("skipping a stored compiled network", "file", path, "err", err)
		}
	}
	return st, nil
}

func validNetworkID(id string) bool {
	if !strings.HasPrefix(id, "net-") || len(id) > 64 {
		return false
	}
	for _, c := range id[4:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return len(id) > 4
}

func (st *networkStore) load(metaPath string) error {
	b, err := os.ReadFile(metaPath)
	if err != nil {
		return err
	}
	var meta compiledNetwork
	if err := json.Unmarshal(b, &meta); err != nil {
		return err
	}
	id := strings.TrimSuffix(filepath.Base(metaPath), ".json")
	if meta.ID != id || !validNetworkID(id) {
		return fmt.Errorf("entry id %q does not match its file", meta.ID)
	}
	f, err := os.Open(filepath.Join(st.dir, id+".program"))
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	prog, err := compile.Load(f, fi.Size(), nil)
	if err != nil {
		return err
	}
	return st.register(&meta, prog, time.Unix(meta.Created, 0))
}

func (st *networkStore) register(meta *compiledNetwork, prog *compile.Program, created time.Time) error {
	m := &runtime.Model{ID: meta.ID, Program: prog, OwnedBy: meta.OwnedBy, Created: created,
		Card: runtime.Card{Description: "compiled network " + meta.Name}}
	if err := st.rt.RegisterModel(m); err != nil {
		return err
	}
	st.mu.Lock()
	st.owners[meta.ID] = meta.OwnedBy
	st.mu.Unlock()
	return nil
}

// add stores a newly compiled network.
func (st *networkStore) add(meta *compiledNetwork, prog *compile.Program, now time.Time) error {
	if st.dir != "" {
		var pb bytes.Buffer
		if err := prog.Save(&pb); err != nil {
			return err
		}
		mb, err := json.Marshal(meta)
		if err != nil {
			return err
		}
		if err := writeAtomic(filepath.Join(st.dir, meta.ID+".program"), pb.Bytes()); err != nil {
			return err
		}
		if err := writeAtomic(filepath.Join(st.dir, meta.ID+".json"), mb); err != nil {
			os.Remove(filepath.Join(st.dir, meta.ID+".program"))
			return err
		}
	}
	return st.register(meta, prog, now)
}

// owner returns the principal that compiled network id, if it is one.
func (st *networkStore) owner(id string) (string, bool) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	o, ok := st.owners[id]
	return o, ok
}

// writeAtomic writes data to a temporary file in the same directory,
// syncs it and renames it over path.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
