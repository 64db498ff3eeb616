package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
)

// KeyStore authenticates API keys. Implementations must be safe for
// concurrent use, must not log keys, and should compare in constant time.
type KeyStore interface {
	// Principal returns the identity a key stands for, or ok false for
	// a key it does not know.
	Principal(key string) (principal string, ok bool)
}

// StaticKeys is a fixed set of keys, each mapped to its principal.
// Lookups hash the key and compare it with every stored hash in constant
// time, so neither a key's content nor its position leaks through timing.
func StaticKeys(keys map[string]string) KeyStore {
	s := &staticKeys{entries: make([]staticKey, 0, len(keys))}
	for k, p := range keys {
		s.entries = append(s.entries, staticKey{sum: sha256.Sum256([]byte(k)), principal: p})
	}
	return s
}

type staticKey struct {
	sum       [32]byte
	principal string
}

type staticKeys struct{ entries []staticKey }

func (s *staticKeys) Principal(key string) (string, bool) {
	sum := sha256.Sum256([]byte(key))
	found := -1
	for i := range s.entries {
		if subtle.ConstantTimeCompare(sum[:], s.entries[i].sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return "", false
	}
	return s.entries[found].principal, true
}

// queryKeyParams are query parameters in which clients sometimes put a key;
// a request carrying one is refused, whatever its header says.
var queryKeyParams = [...]string{"api_key", "apikey", "key", "access_token", "token", "api-key"}

// bearer returns the key of an "Authorization: Bearer <key>" header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const p = "bearer "
	if len(h) <= len(p) || !strings.EqualFold(h[:len(p)], p) {
		return "", false
	}
	k := strings.TrimSpace(h[len(p):])
	return k, k != ""
}

func hasQueryKey(r *http.Request) bool {
	if r.URL.RawQuery == "" {
		return false
	}
	q := r.URL.Query()
	for _, p := range queryKeyParams {
		if q.Has(p) {
			return true
		}
	}
	return false
}

// limiter holds each principal's token bucket and in-flight count.
type limiter struct {
	perMinute  int // <= 0: no rate limit
	concurrent int // <= 0: no concurrency limit
	now        func() time.Time
	admitted   func(principal string) // Options.RateShare's hook, or nil

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens   float64
	last     time.Time
	inFlight int
}

func newLimiter(perMinute, concurrent int, now func() time.Time) *limiter {
	return &limiter{perMinute: perMinute, concurrent: concurrent, now: now, buckets: map[string]*bucket{}}
}

// acquire admits a request of principal or returns a 429 error; release
// must follow an admitted request.
func (l *limiter) acquire(principal string) *Error {
	if l.perMinute <= 0 && l.concurrent <= 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.refill(principal)
	if l.concurrent > 0 && b.inFlight >= l.concurrent {
		return &Error{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "rate_limit_exceeded", RetryAfter: time.Second,
			Message: "too many concurrent requests for this key (limit " + itoa(l.concurrent) + "); retry when one finishes"}
	}
	if l.perMinute > 0 {
		if b.tokens < 1 {
			rate := float64(l.perMinute) / 60 // tokens per second
			wait := time.Duration((1 - b.tokens) / rate * float64(time.Second))
			return &Error{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "rate_limit_exceeded", RetryAfter: wait,
				Message: "rate limit of " + itoa(l.perMinute) + " requests per minute reached for this key"}
		}
		b.tokens--
		if l.admitted != nil {
			l.admitted(principal)
		}
	}
	b.inFlight++
	return nil
}

// spent takes n requests that principal made on other servers out of its
// bucket (which may go below zero: the next local request then waits).
func (l *limiter) spent(principal string, n int) {
	if l.perMinute <= 0 || n <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refill(principal).tokens -= float64(n)
}

// refill returns principal's bucket (a new one is full) with the tokens
// earned since it was last touched; called with l.mu held.
func (l *limiter) refill(principal string) *bucket {
	now := l.now()
	b := l.buckets[principal]
	if b == nil {
		b = &bucket{tokens: float64(l.perMinute), last: now}
		l.buckets[principal] = b
	}
	if l.perMinute > 0 {
		rate := float64(l.perMinute) / 60 // tokens per second
		b.tokens = math.Min(float64(l.perMinute), b.tokens+now.Sub(b.last).Seconds()*rate)
		b.last = now
	}
	return b
}

func (l *limiter) release(principal string) {
	if l.perMinute <= 0 && l.concurrent <= 0 {
		return
	}
	l.mu.Lock()
	if b := l.buckets[principal]; b != nil {
		b.inFlight--
	}
	l.mu.Unlock()
}
