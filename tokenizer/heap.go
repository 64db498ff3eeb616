package tokenizer

// heap is a binary heap whose first element is the least by T's less. It is
// written out rather than built on container/heap so that pushing does not
// box items into interfaces; encoding (long words) and training both use
// it.
type heap[T interface{ less(T) bool }] []T

func (h *heap[T]) push(x T) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *heap[T]) down(i int) {
	s := *h
	for {
		l := 2*i + 1
		if l >= len(s) {
			return
		}
		m := l
		if r := l + 1; r < len(s) && s[r].less(s[l]) {
			m = r
		}
		if !s[m].less(s[i]) {
			return
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

func (h *heap[T]) pop() T {
	s := *h
	x := s[0]
	s[0] = s[len(s)-1]
	*h = s[:len(s)-1]
	h.down(0)
	return x
}

func (h *heap[T]) init() {
	for i := len(*h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}
