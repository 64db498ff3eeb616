package runtime

import (
	"container/list"
	"sync"
)

// prefixCache keeps language models' states after the tokens of earlier
// requests (a prompt, a prompt and its answer, a closed turn), so that a
// request whose prompt extends them resumes from the state instead of
// reading them again. Entries are scoped to one deployment and one
// principal: a state is never shared between callers. The cache is
// bounded by bytes, evicting the least recently used entry first.
type prefixCache struct {
	mu     sync.Mutex
	budget int64
	bytes  int64
	lru    list.List // of *cacheEntry, the most recently used first
	scopes map[string]*cacheScope
	stats  CacheStats
}

// cacheScope is one deployment's and principal's entries, indexed by
// their length and the hash of their tokens; lengths counts the entries
// of each length, so that a lookup tries only lengths that exist.
type cacheScope struct {
	entries map[prefixKey]*list.Element
	lengths map[int]int
}

type prefixKey struct {
	n int
	h uint64
}

type cacheEntry struct {
	scope  string
	key    prefixKey
	tokens []int32
	data   []byte
}

// CacheStats describe the prefix-state cache: lookups that resumed from a
// state (Hits) or found none (Misses), the prompt tokens resumed instead
// of read, and what the cache holds now.
type CacheStats struct {
	Hits          int64 `json:"hits"`
	Misses        int64 `json:"misses"`
	ResumedTokens int64 `json:"resumed_tokens"`
	Entries       int   `json:"entries"`
	Bytes         int64 `json:"bytes"`
	Budget        int64 `json:"budget_bytes"`
}

// entryOverhead is what an entry costs beside its tokens and state: the
// list element, the map slot and the headers.
const entryOverhead = 256

func newPrefixCache(budget int64) *prefixCache {
	return &prefixCache{budget: budget, scopes: map[string]*cacheScope{}}
}

// prefixHashes returns the hash of each prefix of tokens: h[k] is that of
// tokens[:k+1].
func prefixHashes(tokens []int) []uint64 {
	hs := make([]uint64, len(tokens))
	h := uint64(14695981039346656037)
	for i, t := range tokens {
		h ^= uint64(uint32(t))
		h *= 1099511628211
		h ^= h >> 29
		hs[i] = h
	}
	return hs
}

// lookup finds the longest cached prefix of tokens no longer than limit,
// and counts the lookup as a hit or a miss.
func (c *prefixCache) lookup(scope string, tokens []int, limit int) (n int, data []byte) {
	limit = min(limit, len(tokens))
	c.mu.Lock()
	defer c.mu.Unlock()
	sc := c.scopes[scope]
	if sc != nil && limit > 0 {
		hs := prefixHashes(tokens[:limit])
		for k := range sc.lengths {
			if k <= n || k > limit {
				continue
			}
			el, ok := sc.entries[prefixKey{k, hs[k-1]}]
			if !ok || !samePrefix(el.Value.(*cacheEntry).tokens, tokens) {
				continue
			}
			n, data = k, el.Value.(*cacheEntry).data
		}
		if n > 0 {
			c.lru.MoveToFront(sc.entries[prefixKey{n, hs[n-1]}])
		}
	}
	if n == 0 {
		c.stats.Misses++
		return 0, nil
	}
	c.stats.Hits++
	c.stats.ResumedTokens += int64(n)
	return n, data
}

func samePrefix(prefix []int32, tokens []int) bool {
	if len(prefix) > len(tokens) {
		return false
	}
	for i, t := range prefix {
		if int(t) != tokens[i] {
			return false
		}
	}
	return true
}

// put keeps the state after tokens; data is the cache's from now on.
func (c *prefixCache) put(scope string, tokens []int, data []byte) {
	if len(tokens) == 0 {
		return
	}
	size := int64(len(data) + 4*len(tokens) + entryOverhead)
	if size > c.budget {
		return
	}
	key := prefixKey{len(tokens), prefixHashes(tokens)[len(tokens)-1]}
	e := &cacheEntry{scope: scope, key: key, tokens: make([]int32, len(tokens)), data: data}
	for i, t := range tokens {
		e.tokens[i] = int32(t)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc := c.scopes[scope]; sc != nil {
		if el, ok := sc.entries[key]; ok {
			c.remove(el)
		}
	}
	for c.bytes+size > c.budget && c.lru.Len() > 0 {
		c.remove(c.lru.Back())
	}
	sc := c.scopes[scope] // the removals may have dropped it
	if sc == nil {
		sc = &cacheScope{entries: map[prefixKey]*list.Element{}, lengths: map[int]int{}}
		c.scopes[scope] = sc
	}
	sc.entries[key] = c.lru.PushFront(e)
	sc.lengths[key.n]++
	c.bytes += size
}

// remove drops one entry; c.mu is held.
func (c *prefixCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	c.bytes -= int64(len(e.data) + 4*len(e.tokens) + entryOverhead)
	sc := c.scopes[e.scope]
	delete(sc.entries, e.key)
	if sc.lengths[e.key.n]--; sc.lengths[e.key.n] == 0 {
		delete(sc.lengths, e.key.n)
	}
	if len(sc.entries) == 0 {
		delete(c.scopes, e.scope)
	}
}

// drop removes every entry whose scope starts with prefix: those of a
// deployment that stopped.
func (c *prefixCache) drop(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if s := el.Value.(*cacheEntry).scope; len(s) >= len(prefix) && s[:len(prefix)] == prefix {
			c.remove(el)
		}
		el = next
	}
}

func (c *prefixCache) snapshot() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stats
	st.Entries, st.Bytes, st.Budget = c.lru.Len(), c.bytes, c.budget
	return st
}
