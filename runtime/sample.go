package runtime

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Sampling are the per-request choices of how the next token is drawn.
type Sampling struct {
	// Temperature divides the logits; 0 picks the most likely token.
	// Default 1 (set by the caller; the zero value here is greedy).
	Temperature float64
	// TopP keeps the smallest set of tokens whose probabilities sum to at
	// least TopP (nucleus sampling); 0 or 1 keeps all.
	TopP float64
	// PresencePenalty and FrequencyPenalty lower the logit of a token by
	// PresencePenalty once it has appeared in the completion and by
	// FrequencyPenalty for each time it has, as in the OpenAI API.
	PresencePenalty, FrequencyPenalty float64
	// LogitBias adds to the logits of the given token ids.
	LogitBias map[int]float64
	// Seed makes sampling reproducible; nil draws a fresh seed.
	Seed *int64
}

// TokenLogprob is a token with its log-probability and, when asked, the
// most likely alternatives at that position.
type TokenLogprob struct {
	Token   int            `json:"token"`
	Text    string         `json:"text"`
	Logprob float64        `json:"logprob"`
	Top     []TokenLogprob `json:"top,omitempty"`
}

// sampler draws tokens for one sequence. Its buffers are sized to the
// vocabulary once, so drawing a token allocates nothing.
type sampler struct {
	s      Sampling
	rng    *rand.Rand
	logits []float64 // processed logits
	probs  []float64
	order  []int32
	counts []int32 // occurrences of each token in the completion
}

func newSampler(s Sampling, vocab int, seed uint64) *sampler {
	return &sampler{
		s:      s,
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		logits: make([]float64, vocab),
		probs:  make([]float64, vocab),
		order:  make([]int32, vocab),
		counts: make([]int32, vocab),
	}
}

// process applies biases and penalties to raw logits into s.logits.
func (sm *sampler) process(raw []float32) {
	for i, v := range raw {
		x := float64(v)
		if c := sm.counts[i]; c > 0 {
			x -= sm.s.PresencePenalty + sm.s.FrequencyPenalty*float64(c)
		}
		sm.logits[i] = x
	}
	for id, b := range sm.s.LogitBias {
		if id >= 0 && id < len(sm.logits) {
			sm.logits[id] += b
		}
	}
}

// logSoftmax returns log p(id) under the processed logits.
func (sm *sampler) logSoftmax(id int) float64 {
	return sm.logits[id] - logSumExp(sm.logits)
}

func logSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// next draws a token from raw logits and records it for the penalties.
func (sm *sampler) next(raw []float32) int {
	sm.process(raw)
	id := sm.draw()
	sm.counts[id]++
	return id
}

func (sm *sampler) draw() int {
	if sm.s.Temperature <= 0 {
		best := 0
		for i, x := range sm.logits {
			if x > sm.logits[best] {
				best = i
			}
		}
		return best
	}
	inv := 1 / sm.s.Temperature
	m := sm.logits[0]
	for _, x := range sm.logits {
		if x > m {
			m = x
		}
	}
	total := 0.0
	for i, x := range sm.logits {
		// Tokens more than 40 nats below the best have probability under
		// 4e-18 of its: not worth an exponential.
		p := 0.0
		if d := (x - m) * inv; d > -40 {
			p = math.Exp(d)
		}
		sm.probs[i] = p
		total += p
	}
	if sm.s.TopP > 0 && sm.s.TopP < 1 {
		for i := range sm.order {
			sm.order[i] = int32(i)
		}
		slices.SortFunc(sm.order, func(a, b int32) int {
			pa, pb := sm.probs[a], sm.probs[b]
			switch {
			case pa > pb:
				return -1
			case pa < pb:
				return 1
			}
			return int(a - b)
		})
		keep, cum := 0, 0.0
		for keep < len(sm.order) {
			cum += sm.probs[sm.order[keep]] / total
			keep++
			if cum >= sm.s.TopP {
				break
			}
		}
		r := sm.rng.Float64() * cum * total
		for _, id := range sm.order[:keep] {
			r -= sm.probs[id]
			if r < 0 {
				return int(id)
			}
		}
		return int(sm.order[keep-1])
	}
	r := sm.rng.Float64() * total
	last := 0
	for i, p := range sm.probs {
		if p > 0 {
			last = i
		}
		r -= p
		if r < 0 {
			return i
		}
	}
	return last
}

// top returns the k most likely tokens under the processed logits, with
// their log-probabilities, into dst.
func (sm *sampler) top(dst []TokenLogprob, k int, text func(int) string) []TokenLogprob {
	if k <= 0 {
		return dst
	}
	lse := logSumExp(sm.logits)
	start := len(dst)
	for i, x := range sm.logits {
		lp := x - lse
		if len(dst)-start < k {
			dst = append(dst, TokenLogprob{Token: i, Logprob: lp})
		} else if lp > dst[len(dst)-1].Logprob {
			dst[len(dst)-1] = TokenLogprob{Token: i, Logprob: lp}
		} else {
			continue
		}
		// Keep dst[start:] sorted by descending log-probability.
		for j := len(dst) - 1; j > start && dst[j].Logprob > dst[j-1].Logprob; j-- {
			dst[j], dst[j-1] = dst[j-1], dst[j]
		}
	}
	for i := start; i < len(dst); i++ {
		dst[i].Text = text(dst[i].Token)
	}
	return dst
}
