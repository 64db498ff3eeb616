package snn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Encoders turn data into one step of network input. They share one shape:
// a type per encoding whose Encode method writes into a caller's buffer,
//
//	Encode(dst []float32, x X) error
//
// where dst holds batch × size values, slot-major: what Step takes, or the
// buffer of an Input node itself (Simulator.InputBuffer), so that
//
//	enc.Encode(sim.InputBuffer(0), x)
//	sim.Step()
//
// feeds the network without a copy. Encode allocates nothing. The value
// encoders (Bernoulli, Direct) take x as float32s and satisfy Encoder; x
// holds either one value per element of dst, or one sample's worth (a
// length that divides len(dst)) that is used for every batch slot. OneHot
// takes token ids, one per slot. On error dst is left untouched.
//
// An Encoder is not safe for concurrent use: Bernoulli owns a random
// stream.

// Encoder is an encoding of float32 values, such as Bernoulli or Direct.
type Encoder interface {
	Encode(dst, x []float32) error
}

var (
	_ Encoder = (*Bernoulli)(nil)
	_ Encoder = Direct{}
)

// checkBroadcast checks that x fills dst exactly or once per batch slot.
func checkBroadcast(who string, dst, x []float32) error {
	if len(x) == 0 {
		if len(dst) == 0 {
			return nil
		}
		return fmt.Errorf("%w: %s: x is empty, dst has %d values", ErrInputSize, who, len(dst))
	}
	if len(dst)%len(x) != 0 {
		return fmt.Errorf("%w: %s: dst has %d values, x has %d: want equal lengths, or x one sample used for every slot (len(dst) a multiple of len(x))",
			ErrInputSize, who, len(dst), len(x))
	}
	return nil
}

// BernoulliOptions configure a Bernoulli encoder. The zero value works:
// seed 0, values read as probabilities, spikes of height 1.
type BernoulliOptions struct {
	// Seed starts the encoder's random stream (a PCG from math/rand/v2):
	// the same seed gives the same spikes.
	Seed uint64
	// Dt, when non-zero, makes Encode read its values as firing rates in
	// hertz: the probability of a spike in a step is rate × Dt (the
	// simulator's step in seconds). Zero means the values are
	// probabilities already.
	Dt float64
	// Amplitude is the value written for a spike. Default 1.
	Amplitude float32
}

// Bernoulli is rate coding: every value becomes a spike (Amplitude) with
// probability p in each step and 0 otherwise, independently per element,
// slot and step. Probabilities are clamped to [0, 1]: p ≤ 0 (and NaN)
// never fires, p ≥ 1 always does. It is snnTorch's spikegen.rate and
// Norse's PoissonEncoder in discrete time.
type Bernoulli struct {
	src   rand.PCG
	scale float32 // rate to probability: Dt, or 1
	amp   float32
}

// bernoulliStream is the second PCG seed word: fixed, so that one uint64
// names the whole stream.
const bernoulliStream = 0x9e3779b97f4a7c15

// NewBernoulli returns a Bernoulli encoder. It fails on a negative, NaN
// or infinite Dt, or a NaN or infinite Amplitude.
func NewBernoulli(opts *BernoulliOptions) (*Bernoulli, error) {
	var o BernoulliOptions
	if opts != nil {
		o = *opts
	}
	if !(o.Dt >= 0) || math.IsInf(o.Dt, 0) {
		return nil, fmt.Errorf("snn: BernoulliOptions.Dt is %v, must be 0 or a positive number of seconds", o.Dt)
	}
	if a := float64(o.Amplitude); math.IsNaN(a) || math.IsInf(a, 0) {
		return nil, fmt.Errorf("snn: BernoulliOptions.Amplitude is %v, must be finite", o.Amplitude)
	}
	b := &Bernoulli{scale: 1, amp: o.Amplitude}
	if o.Dt != 0 {
		b.scale = float32(o.Dt)
	}
	if b.amp == 0 {
		b.amp = 1
	}
	b.src.Seed(o.Seed, bernoulliStream)
	return b, nil
}

// Seed restarts the random stream as if the encoder had been built with
// this seed.
func (b *Bernoulli) Seed(seed uint64) { b.src.Seed(seed, bernoulliStream) }

// Encode draws one step of spikes into dst from the probabilities (or
// rates) x. See Encoder for the lengths it accepts; a wrong length returns
// an error wrapping ErrInputSize.
func (b *Bernoulli) Encode(dst, x []float32) error {
	if err := checkBroadcast("Bernoulli.Encode", dst, x); err != nil {
		return err
	}
	for lo := 0; lo < len(dst); lo += len(x) {
		d := dst[lo : lo+len(x)]
		for i, v := range x {
			// A 24-bit uniform in [0, 1): every float32 in it is exact, so
			// u < p fires with probability p rounded to 2⁻²⁴. NaN compares
			// false and never fires.
			u := float32(b.src.Uint64()>>40) * (1.0 / (1 << 24))
			if u < v*b.scale {
				d[i] = b.amp
			} else {
				d[i] = 0
			}
		}
	}
	return nil
}

// Direct is direct (current) coding: values are copied into the input as
// they are, times Gain. It is what snnTorch and SpikingJelly call direct
// encoding, where the first layer turns the current into spikes.
type Direct struct {
	// Gain multiplies every value. Zero means 1.
	Gain float32
}

// Encode writes Gain × x into dst. See Encoder for the lengths it accepts;
// a wrong length returns an error wrapping ErrInputSize.
func (e Direct) Encode(dst, x []float32) error {
	if err := checkBroadcast("Direct.Encode", dst, x); err != nil {
		return err
	}
	g := e.Gain
	for lo := 0; lo < len(dst); lo += len(x) {
		if g == 0 || g == 1 {
			copy(dst[lo:], x)
			continue
		}
		d := dst[lo : lo+len(x)]
		for i, v := range x {
			d[i] = g * v
		}
	}
	return nil
}

// OneHot codes a token id as a one-hot vector: Amplitude at the id's index
// and 0 elsewhere. It is the input of a language model: a token presented
// for as many steps as the model takes per token.
type OneHot struct {
	// Amplitude is the value at the token's index. Zero means 1.
	Amplitude float32
}

// Encode writes one one-hot vector per batch slot into dst: ids[k] for
// slot k, each slot holding len(dst)/len(ids) values (the vocabulary
// size). An id outside [0, vocabulary) is an error and leaves dst as it
// was, as does a length of dst that is not a multiple of len(ids)
// (wrapping ErrInputSize).
func (e OneHot) Encode(dst []float32, ids ...int) error {
	if len(ids) == 0 || len(dst)%len(ids) != 0 {
		return fmt.Errorf("%w: OneHot.Encode: %d ids for %d values: want one id per batch slot, len(dst) a multiple of len(ids)", ErrInputSize, len(ids), len(dst))
	}
	size := len(dst) / len(ids)
	for k, id := range ids {
		if id < 0 || id >= size {
			return fmt.Errorf("snn: OneHot.Encode: id %d (slot %d) out of range [0, %d)", id, k, size)
		}
	}
	amp := e.Amplitude
	if amp == 0 {
		amp = 1
	}
	clear(dst)
	for k, id := range ids {
		dst[k*size+id] = amp
	}
	return nil
}
