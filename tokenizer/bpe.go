package tokenizer

// wordCacheSize bounds the per-state cache of word -> ids. When it is full
// it is cleared: cheap, and a corpus's frequent words come back at once.
const wordCacheSize = 1 << 14

// heapThreshold is the word length (in bytes) from which merges are chosen
// with a heap instead of a linear scan; below it the scan is faster, above
// it the scan would be quadratic (a megabyte of spaces is one pre-token).
const heapThreshold = 64

// encodeState is the scratch space of one encoding, kept in a sync.Pool so
// that encoding allocates nothing once warm.
type encodeState struct {
	cache map[string][]int
	syms  []int32
	ranks []uint32 // ranks[i]: rank of the merge of syms[i], syms[i+1]
	// heap path
	next, prev []int32
	h          mergeHeap
	// work counts the steps taken, for tests that check encoding stays
	// linear in the text: a pre-token cut, a merge candidate looked at.
	work int
}

func newEncodeState() *encodeState {
	return &encodeState{cache: make(map[string][]int, 256)}
}

const noRank = ^uint32(0)

func (t *Tokenizer) rankOf(a, b int32) (uint32, int32) {
	v, ok := t.merges[pairKey(a, b)]
	if !ok {
		return noRank, -1
	}
	return uint32(v >> 32), int32(uint32(v))
}

// encodeWord appends the ids of one pre-token.
func (t *Tokenizer) encodeWord(st *encodeState, dst []int, w string) []int {
	if len(w) == 1 {
		return append(dst, int(t.byteIDs[w[0]]))
	}
	if ids, ok := st.cache[w]; ok {
		return append(dst, ids...)
	}
	n0 := len(dst)
	if t.ignoreMerges {
		if id, ok := t.vocab[bytesToSymbolsString(w)]; ok && id < len(t.tokens) && !t.isAddedFast(id) {
			dst = append(dst, id)
			return t.remember(st, w, dst, n0)
		}
	}
	if len(w) >= heapThreshold {
		dst = t.mergeHeap(st, dst, w)
	} else {
		dst = t.mergeScan(st, dst, w)
	}
	return t.remember(st, w, dst, n0)
}

func (t *Tokenizer) isAddedFast(id int) bool { return t.special[id] || t.isAdded(id) }

func bytesToSymbolsString(w string) string { return bytesToSymbols([]byte(w)) }

func (t *Tokenizer) remember(st *encodeState, w string, dst []int, n0 int) []int {
	if len(w) > 256 {
		return dst // long runs are rare and would pin memory
	}
	if len(st.cache) >= wordCacheSize {
		clear(st.cache)
	}
	st.cache[w] = append([]int(nil), dst[n0:]...)
	return dst
}

// mergeScan applies the merges to a short word: keep the rank of every
// adjacent pair, merge the lowest (leftmost among equals), update the two
// neighbours. Equivalent to the Hugging Face BPE model without dropout.
func (t *Tokenizer) mergeScan(st *encodeState, dst []int, w string) []int {
	syms := st.syms[:0]
	for i := 0; i < len(w); i++ {
		syms = append(syms, t.byteIDs[w[i]])
	}
	ranks := st.ranks[:0]
	for i := 0; i+1 < len(syms); i++ {
		r, _ := t.rankOf(syms[i], syms[i+1])
		ranks = append(ranks, r)
	}
	for len(syms) > 1 {
		st.work += len(ranks)
		best, bi := noRank, -1
		for i, r := range ranks {
			if r < best {
				best, bi = r, i
			}
		}
		if bi < 0 {
			break
		}
		_, id := t.rankOf(syms[bi], syms[bi+1])
		syms[bi] = id
		syms = append(syms[:bi+1], syms[bi+2:]...)
		ranks = append(ranks[:bi], ranks[bi+1:]...)
		if bi > 0 {
			ranks[bi-1], _ = t.rankOf(syms[bi-1], syms[bi])
		}
		if bi < len(ranks) {
			ranks[bi], _ = t.rankOf(syms[bi], syms[bi+1])
		}
	}
	for _, s := range syms {
		dst = append(dst, int(s))
	}
	st.syms, st.ranks = syms, ranks
	return dst
}

type mergeItem struct {
	rank uint32
	pos  int32 // index of the left symbol
	id   int32 // merged id
}

// mergeHeap orders merges by (rank, pos).
type mergeHeap = heap[mergeItem]

//lint:ignore U1000 called through heap's type constraint, which staticcheck does not follow
func (a mergeItem) less(b mergeItem) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos)
}

// mergeHeap applies the merges to a long word in O(n log n): symbols in a
// linked list over their original positions, candidate merges in a heap
// ordered by (rank, position), stale candidates dropped when popped.
func (t *Tokenizer) mergeHeap(st *encodeState, dst []int, w string) []int {
	n := len(w)
	syms := st.syms[:0]
	next, prev := st.next[:0], st.prev[:0]
	for i := 0; i < n; i++ {
		syms = append(syms, t.byteIDs[w[i]])
		next = append(next, int32(i+1))
		prev = append(prev, int32(i-1))
	}
	next[n-1] = -1
	h := st.h[:0]
	for i := 0; i+1 < n; i++ {
		if r, id := t.rankOf(syms[i], syms[i+1]); r != noRank {
			h = append(h, mergeItem{r, int32(i), id})
		}
	}
	h.init()
	st.work += len(h)
	for len(h) > 0 {
		it := h.pop()
		st.work++
		p := it.pos
		if syms[p] < 0 {
			continue // merged into its left neighbour
		}
		q := next[p]
		if q < 0 {
			continue
		}
		if r, id := t.rankOf(syms[p], syms[q]); r != it.rank || id != it.id {
			continue // the pair changed since this candidate was pushed
		}
		syms[p] = it.id
		syms[q] = -1
		nq := next[q]
		next[p] = nq
		if nq >= 0 {
			prev[nq] = p
		}
		if pp := prev[p]; pp >= 0 {
			if r, id := t.rankOf(syms[pp], syms[p]); r != noRank {
				h.push(mergeItem{r, pp, id})
			}
		}
		if nq >= 0 {
			if r, id := t.rankOf(syms[p], syms[nq]); r != noRank {
				h.push(mergeItem{r, p, id})
			}
		}
	}
	for i := int32(0); i >= 0; i = next[i] {
		dst = append(dst, int(syms[i]))
	}
	st.syms, st.next, st.prev, st.h = syms, next, prev, h
	return dst
}
