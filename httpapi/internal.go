package httpapi

import (
	"encoding/json"
	"net/http"
)

// internalError maps err as toError does and, when it becomes a 500,
// logs it through the server's logger: the body tells the client it
// has been logged.
func (s *Server) internalError(r *http.Request, err error) *Error {
	e := toError(err)
	if e.Status == http.StatusInternalServerError {
		s.logInternal(r, err)
	}
	return e
}

func (s *Server) logInternal(r *http.Request, err error) {
	ri := info(r)
	s.log.Error("internal error serving request", "request_id", ri.id, "endpoint", ri.endpoint, "error", err)
}

// respond writes v as JSON, as writeJSON does, but logs a value that
// cannot be encoded before answering 500.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.logInternal(r, err)
		writeError(w, errInternal)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
