package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/neuro-go/neuro/runtime"
)

// A run's body can hold millions of numbers (64 samples of 3,500 spike
// events each is 450,000), and encoding/json spends about a microsecond
// and an allocation on each through reflection and json.Number. The run
// endpoint reads its body with the scanner below instead: one pass that
// validates the JSON as encoding/json does, and reads the inputs into
// their samples without allocating per value. It accepts exactly what
// encoding/json accepted before it, with the same values (the fuzz test
// FuzzRunInputs holds the two to that), so the API is unchanged.

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// jsonScanner reads one JSON text.
type jsonScanner struct {
	b     []byte
	i     int
	depth int
	parts int // how many parts a run's inputs may be checked in (checkInParts)
	// maxSamples is how many samples of a run's inputs are recorded
	// (inputs): for more, none are, and parseInputs counts them.
	maxSamples int
}

// syntaxError reports malformed JSON at the scanner's offset, as
// decodeObject does.
func (s *jsonScanner) syntaxError(what string) *Error {
	return invalid("", "invalid_json", "malformed JSON at byte %d: %s", s.i, what)
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.ws()
	if s.i == len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *jsonScanner) expect(c byte) *Error {
	if s.peek() != c {
		return s.syntaxError(fmt.Sprintf("want %q", c))
	}
	s.i++
	return nil
}

// value skips one value, checking its syntax, and returns its bytes.
func (s *jsonScanner) value() ([]byte, *Error) {
	c := s.peek()
	start := s.i
	switch {
	case c == '{' || c == '[':
		if e := s.composite(c, nil); e != nil {
			return nil, e
		}
	case c == '"':
		if _, e := s.str(); e != nil {
			return nil, e
		}
	case c == '-' || c >= '0' && c <= '9':
		if _, e := s.number(); e != nil {
			return nil, e
		}
	case c == 't' || c == 'f' || c == 'n':
		if !s.literal() {
			return nil, s.syntaxError("want a value")
		}
	default:
		return nil, s.syntaxError("want a value")
	}
	return s.b[start:s.i], nil
}

// composite skips an object or an array; for an array, starts (when
// not nil) gets the offset of each of its elements.
func (s *jsonScanner) composite(open byte, starts *[]int) *Error {
	if s.depth++; s.depth > maxDepth {
		return s.syntaxError("exceeded max depth")
	}
	defer func() { s.depth-- }()
	close := byte(']')
	if open == '{' {
		close = '}'
	}
	s.i++
	if s.peek() == close {
		s.i++
		return nil
	}
	for {
		if open == '{' {
			if _, e := s.str(); e != nil {
				return e
			}
			if e := s.expect(':'); e != nil {
				return e
			}
		}
		if starts != nil {
			s.ws()
			if len(*starts) < s.maxSamples {
				*starts = append(*starts, s.i)
			} else {
				*starts, starts = nil, nil // too many to record
			}
		}
		if next := skipCompactPair(s.b, s.i); open == '[' && next > 0 && s.depth < maxDepth {
			s.i = next // an event, the most common value of all
		} else if _, e := s.value(); e != nil {
			return e
		}
		switch s.peek() {
		case ',':
			s.i++
		case close:
			s.i++
			return nil
		default:
			return s.syntaxError(fmt.Sprintf("want ',' or %q", close))
		}
	}
}

// skipCompactPair returns the index after the array of two JSON whole
// numbers without signs or spaces at b[i:], such as [12,0], or -1 if
// there is none: what value would skip there, found without its calls.
func skipCompactPair(b []byte, i int) int {
	if i >= len(b) || b[i] != '[' {
		return -1
	}
	i++
	for _, end := range [2]byte{',', ']'} {
		switch {
		case i < len(b) && b[i] == '0':
			i++
		case i < len(b) && b[i] >= '1' && b[i] <= '9':
			for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			}
		default:
			return -1
		}
		if i >= len(b) || b[i] != end {
			return -1
		}
		i++
	}
	return i
}

func (s *jsonScanner) literal() bool {
	for _, lit := range []string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			return true
		}
	}
	return false
}

// skip skips one value of checked JSON, faster than value: it only
// matches brackets and quotes.
func (s *jsonScanner) skip() []byte {
	s.ws()
	start, depth := s.i, 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return s.b[start:s.i]
			}
			if depth--; depth == 0 {
				s.i++
				return s.b[start:s.i]
			}
		case '"':
			s.i = closingQuote(s.b, s.i)
			if depth == 0 {
				s.i++
				return s.b[start:s.i]
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return s.b[start:s.i]
			}
		}
		s.i++
	}
	return s.b[start:s.i]
}

// str skips a string, checking its escapes, and returns its contents
// (still escaped) and whether it has any escape.
func (s *jsonScanner) str() (escaped bool, e *Error) {
	if s.peek() != '"' {
		return false, s.syntaxError("want a string")
	}
	s.i++
	for s.i < len(s.b) {
		s.i += plainPrefix(s.b[s.i:])
		if s.i == len(s.b) {
			break
		}
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return escaped, nil
		case c == '\\':
			escaped = true
			if s.i+1 == len(s.b) {
				return false, s.syntaxError("an unfinished escape")
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return false, s.syntaxError("an unfinished \\u escape")
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false, s.syntaxError("a bad \\u escape")
					}
				}
				s.i += 6
			default:
				return false, s.syntaxError("a bad escape")
			}
		case c < 0x20:
			return false, s.syntaxError("a control character in a string")
		default:
			s.i++
		}
	}
	return false, s.syntaxError("an unfinished string")
}

// plainPrefix returns how many of b's first bytes a string holds as
// they are: neither a quote, a backslash nor a control character. It
// looks at eight bytes at a time, so that a long string (a packed
// sample's base64) is skipped at several bytes a cycle.
func plainPrefix(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// zero is non-zero when some byte of x is 0; below when some byte of
	// x is less than n (n <= 128).
	zero := func(x uint64) uint64 { return (x - ones) &^ x & highs }
	below := func(x uint64, n uint64) uint64 { return (x - ones*n) &^ x & highs }
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if zero(w^(ones*'"'))|zero(w^(ones*'\\'))|below(w, 0x20) != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			break
		}
	}
	return i
}

// number skips a number, checking JSON's grammar.
func (s *jsonScanner) number() ([]byte, *Error) {
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case digits() == 0:
		return nil, s.syntaxError("a bad number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, s.syntaxError("a bad number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, s.syntaxError("a bad number")
		}
	}
	return s.b[start:s.i], nil
}

// object reads a JSON object, calling field with each key (unescaped)
// and the scanner positioned at its value, which field must read.
func (s *jsonScanner) object(field func(key string) *Error) *Error {
	if e := s.expect('{'); e != nil {
		return e
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		s.ws()
		start := s.i
		escaped, e := s.str()
		if e != nil {
			return e
		}
		key := string(s.b[start+1 : s.i-1])
		if escaped {
			json.Unmarshal(s.b[start:s.i], &key) // checked by str
		}
		if e := s.expect(':'); e != nil {
			return e
		}
		if e := field(key); e != nil {
			return e
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.syntaxError("want ',' or '}'")
		}
	}
}

// decodeRunBody reads a run's body into raw, as decodeObject would, but
// leaves the inputs to parseInputs: raw.Inputs holds their bytes,
// checked, and raw.samples where each sample starts in them, when there
// are at most DefaultMaxRunSamples.
func decodeRunBody(b []byte, raw *rawRun) *Error {
	return decodeRunBodyInParts(b, raw, inputParts(len(b)), DefaultMaxRunSamples)
}

// decodeRunBodyInParts is decodeRunBody checking the inputs in up to
// parts parts (checkInParts), and recording at most maxSamples samples.
func decodeRunBodyInParts(b []byte, raw *rawRun, parts, maxSamples int) *Error {
	s := &jsonScanner{b: b, parts: parts, maxSamples: maxSamples}
	if c := s.peek(); c != '{' && c != 0 {
		if v, e := s.value(); e == nil {
			return invalid("", "invalid_json", "the request body must be a JSON object, not %s", kindOf(v))
		}
	}
	fields := []struct {
		name string
		dst  *json.RawMessage
	}{{"inputs", &raw.Inputs}, {"timesteps", &raw.Timesteps}, {"record", &raw.Record}, {"model", &raw.Model}, {"seed", &raw.Seed}}
	e := s.object(func(key string) *Error {
		var (
			v []byte
			e *Error
		)
		if strings.EqualFold(key, "inputs") {
			v, e = s.inputs(raw)
		} else {
			v, e = s.value()
		}
		if e != nil {
			return e
		}
		for _, f := range fields { // encoding/json matches names without case
			if strings.EqualFold(f.name, key) {
				*f.dst = v
			}
		}
		return nil
	})
	if e != nil {
		return e
	}
	if s.ws(); s.i != len(s.b) { // not peek: a NUL byte is a character too
		return s.syntaxError("invalid character after top-level value")
	}
	return nil
}

// inputs checks the value of a body's inputs, as value does, and
// returns its bytes; when it is an array, raw.samples gets the offset in
// them of each of its elements, and raw.read what checkInParts read of
// them, for parseInputsInParts.
func (s *jsonScanner) inputs(raw *rawRun) ([]byte, *Error) {
	samples := &raw.samples
	*samples, raw.read = (*samples)[:0], nil
	if s.peek() != '[' {
		return s.value()
	}
	start := s.i
	if !s.checkInParts(samples, &raw.read) {
		s.i, *samples = start, (*samples)[:0]
		if e := s.composite('[', samples); e != nil {
			return nil, e
		}
	}
	for k := range *samples {
		(*samples)[k] -= start
	}
	return s.b[start:s.i], nil
}

// checkInParts checks the array at the scanner as composite does, with
// the same offsets in starts, but in up to s.parts parts on goroutines
// of their own. A part starts at an element found by looking for "},{"
// (the samples of a body a client wrote compactly) near its share of the
// bytes, and holds whole elements separated by commas up to the next
// part: then the parts together are the array composite would accept.
// The compact event samples it reads as it checks them, into read (see
// elements). ok is false, with the scanner, starts and read left as they
// were, when no such place is found or any part fails (which may be a
// wrong guess as well as bad JSON): composite then checks the array, and
// names the first error as it always has.
func (s *jsonScanner) checkInParts(starts *[]int, read *[]runtime.Sample) (ok bool) {
	first := s.i + 1
	for first < len(s.b) && (s.b[first] == ' ' || s.b[first] == '\t' || s.b[first] == '\r' || s.b[first] == '\n') {
		first++
	}
	if s.parts < 2 || s.depth+1 > maxDepth || first >= len(s.b) || s.b[first] == ']' {
		return false
	}
	rest := len(s.b) - first
	cuts := []int{first}
	for p := 1; p < s.parts; p++ {
		lo := max(first+p*rest/s.parts, cuts[len(cuts)-1]+1)
		hi := min(first+(p+1)*rest/s.parts+2, len(s.b))
		if lo >= hi {
			continue
		}
		if j := bytes.Index(s.b[lo:hi], []byte("},{")); j >= 0 {
			cuts = append(cuts, lo+j+2)
		}
	}
	if len(cuts) < 2 {
		return false
	}
	found := make([][]int, len(cuts))
	samples := make([][]runtime.Sample, len(cuts))
	oks := make([]bool, len(cuts))
	var wg sync.WaitGroup
	for k := range len(cuts) - 1 {
		wg.Go(func() {
			p := &jsonScanner{b: s.b, i: cuts[k], depth: s.depth + 1, maxSamples: s.maxSamples}
			found[k], samples[k], oks[k] = p.elements(cuts[k+1])
		})
	}
	last := &jsonScanner{b: s.b, i: cuts[len(cuts)-1], depth: s.depth + 1, maxSamples: s.maxSamples}
	found[len(cuts)-1], samples[len(cuts)-1], oks[len(cuts)-1] = last.elements(-1)
	wg.Wait()
	n := 0
	for k, ok := range oks {
		if n += len(found[k]); !ok || n > s.maxSamples {
			return false
		}
	}
	for k := range found {
		*starts = append(*starts, found[k]...)
		*read = append(*read, samples[k]...)
	}
	s.i = last.i
	return true
}

// elements checks an array's elements from the scanner's position, as
// composite does, and returns where each starts: up to the comma before
// end, or to the array's closing bracket when end is -1. ok is false
// when they do not end there, or there are more than s.maxSamples. The
// compact event samples among them it also reads (compactEventSample),
// into read; the others are left zero there.
func (s *jsonScanner) elements(end int) (starts []int, read []runtime.Sample, ok bool) {
	for {
		if len(starts) == s.maxSamples {
			return nil, nil, false
		}
		s.ws()
		starts = append(starts, s.i)
		x, compact := s.compactEventSample()
		read = append(read, x)
		if compact {
			// checked and read in one pass
		} else if next := skipCompactPair(s.b, s.i); next > 0 && s.depth < maxDepth {
			s.i = next
		} else if _, e := s.value(); e != nil {
			return nil, nil, false
		}
		if end >= 0 && s.i >= end {
			return nil, nil, false
		}
		switch s.peek() {
		case ',':
			if s.i++; s.i == end {
				return starts, read, true
			}
		case ']':
			if end < 0 {
				s.i++
				return starts, read, true
			}
			return nil, nil, false
		default:
			return nil, nil, false
		}
	}
}

// compactEventSample checks and reads at the scanner the event sample a
// client writes compactly, {"timesteps":T,"events":[[t,i],...]} with the
// two keys once each in either order, and T and the events whole numbers
// of at most 9 digits without signs, spaces or leading zeros, T at least
// 1: the same sample as sample reads there, in one pass over the bytes.
// ok is false, with the scanner where it was, for anything else, which
// value checks and sample reads.
func (s *jsonScanner) compactEventSample() (x runtime.Sample, ok bool) {
	const steps, events = `"timesteps":`, `"events":[`
	b, start := s.b, s.i
	i := start + 1
	if start >= len(b) || b[start] != '{' {
		return x, false
	}
	for {
		switch {
		case x.Timesteps == 0 && bytes.HasPrefix(b[i:], []byte(steps)):
			i += len(steps)
			d := 0
			for ; i < len(b) && b[i] >= '0' && b[i] <= '9' && d < 10; i++ {
				x.Timesteps = x.Timesteps*10 + int(b[i]-'0')
				d++
			}
			if d == 0 || d > 9 || b[i-d] == '0' {
				return runtime.Sample{}, false
			}
		case x.Events == nil && bytes.HasPrefix(b[i:], []byte(events)):
			s.i = i + len(events)
			x.Events = make([]runtime.SpikeEvent, 0, s.eventsHint())
			i = s.i
			for i < len(b) && b[i] != ']' {
				ev, next, ok := compactPair(b, i)
				if !ok || next >= len(b) || b[next] != ',' && b[next] != ']' {
					s.i = start
					return runtime.Sample{}, false
				}
				x.Events = append(x.Events, ev)
				if i = next; b[i] == ',' {
					if i++; i < len(b) && b[i] == ']' { // [0,1],]
						s.i = start
						return runtime.Sample{}, false
					}
				}
			}
			i++
			s.i = start
		default:
			return runtime.Sample{}, false
		}
		if i >= len(b) {
			return runtime.Sample{}, false
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			if x.Timesteps == 0 || x.Events == nil {
				return runtime.Sample{}, false
			}
			s.i = i + 1
			return x, true
		default:
			return runtime.Sample{}, false
		}
	}
}

// parseInputs reads a run's inputs (checked JSON): an array of samples,
// each a vector, a matrix, or {"events": [[t, i], ...], "timesteps": T}.
func parseInputs(raw []byte, maxSamples int) ([]runtime.Sample, *Error) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, invalid("inputs", "invalid_type", "inputs must be an array of samples, not %s", kindOf(raw))
	}
	s := &jsonScanner{b: raw}
	s.i++
	var samples []runtime.Sample
	for s.peek() != ']' {
		if len(samples) == maxSamples {
			n := len(samples)
			for s.peek() != ']' {
				s.skip()
				n++
				if s.peek() == ',' {
					s.i++
				}
			}
			return nil, invalid("inputs", "invalid_value", "inputs has %d samples; 1 to %d are allowed", n, maxSamples)
		}
		x, e := s.sample(fmt.Sprintf("inputs[%d]", len(samples)))
		if e != nil {
			return nil, e
		}
		samples = append(samples, x)
		if s.peek() == ',' {
			s.i++
		}
	}
	if len(samples) == 0 {
		return nil, invalid("inputs", "invalid_value", "inputs has 0 samples; 1 to %d are allowed", maxSamples)
	}
	return samples, nil
}

// parseInputsInParts reads a run's inputs as parseInputs does, with the
// same samples or the same first error in sample order, but in up to
// parts parts on goroutines of their own: starts holds the offset of
// each sample in raw, as decodeRunBody found them while it checked the
// body, and read the samples it read then (those not zero).
func parseInputsInParts(raw []byte, starts []int, read []runtime.Sample, maxSamples, parts int) ([]runtime.Sample, *Error) {
	n := len(starts)
	parts = min(parts, n)
	if parts < 2 || n > maxSamples || len(raw) == 0 || raw[0] != '[' {
		return parseInputs(raw, maxSamples) // including its errors for the count
	}
	samples := make([]runtime.Sample, n)
	errs := make([]*Error, parts)
	var wg sync.WaitGroup
	lo := 0
	for p := range parts {
		// Parts of about equal bytes: part p starts at the first sample
		// that starts in its share of raw.
		hi := n
		if p < parts-1 {
			hi = max(lo, sort.SearchInts(starts, (p+1)*len(raw)/parts))
		}
		from := lo
		wg.Go(func() {
			s := &jsonScanner{b: raw}
			for k := from; k < hi; k++ {
				if k < len(read) && read[k].Events != nil {
					samples[k] = read[k]
					continue
				}
				s.i = starts[k]
				x, e := s.sample(fmt.Sprintf("inputs[%d]", k))
				if e != nil {
					errs[p] = e
					return
				}
				samples[k] = x
			}
		})
		lo = hi
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return samples, nil
}

// parallelInputBytes is the size of a run's inputs from which the run
// endpoint reads its samples on several goroutines.
const parallelInputBytes = 1 << 16

// inputParts is how many parts a run's inputs of n bytes are read in.
func inputParts(n int) int {
	if n < parallelInputBytes {
		return 1
	}
	return min(goruntime.GOMAXPROCS(0), 8, n/(parallelInputBytes/2))
}

func (s *jsonScanner) sample(param string) (runtime.Sample, *Error) {
	var x runtime.Sample
	bad := func(format string, a ...any) (runtime.Sample, *Error) {
		return runtime.Sample{}, invalid(param, "invalid_value", param+": "+format, a...)
	}
	switch s.peek() {
	case '{':
		// Every value is read, as encoding/json reads them: a duplicate
		// key's last value counts, and a wrong type anywhere fails.
		const form = "an event sample is {\"events\": [[t, i], ...], \"timesteps\": T}, or {\"events_packed\" or \"raster\": base64, \"timesteps\": T}"
		var (
			steps            []byte
			wrong, hasEvents bool
			packed           []runtime.SpikeEvent
			packedErr        string
			raster           []byte
		)
		x.Events = []runtime.SpikeEvent{}
		s.object(func(key string) *Error {
			switch {
			case strings.EqualFold(key, "events"):
				hasEvents = true
				start := s.i
				if s.peek() == '[' {
					if evs, ok := s.events(); ok {
						x.Events = evs
						return nil
					}
					s.i = start
				}
				if v := s.skip(); string(v) == "null" {
					x.Events = []runtime.SpikeEvent{}
				} else {
					wrong = true
				}
			case key == "events_packed":
				v := s.skip()
				text, ok := stringValue(v)
				if !ok {
					packedErr = "events_packed must be a string: the events in base64"
					return nil
				}
				packed, packedErr = unpackEvents(text)
			case key == "raster":
				v := s.skip()
				text, ok := stringValue(v)
				if !ok {
					packedErr = "raster must be a string: the spikes' bits in base64"
					return nil
				}
				var err error
				if raster, err = base64.StdEncoding.DecodeString(text); err != nil {
					packedErr = fmt.Sprintf("raster is not base64: %v", err)
				} else if raster == nil {
					raster = []byte{}
				}
			case strings.EqualFold(key, "timesteps"):
				if v := s.skip(); string(v) != "null" { // null leaves it as it was
					steps = v
					wrong = wrong || !isNumber(v)
				}
			default:
				s.skip()
			}
			return nil
		})
		if wrong {
			return bad(form)
		}
		switch {
		case packedErr != "":
			return bad("%s", packedErr)
		case packed != nil && hasEvents:
			return bad("give events or events_packed, not both")
		case raster != nil && (hasEvents || packed != nil):
			return bad("give events, events_packed or raster, one of them")
		case packed != nil:
			x.Events = packed
		case raster != nil:
			x.Events, x.Raster = nil, raster
		}
		t, ok := wholeNumber(steps)
		if !ok || t < 1 || t > math.MaxInt32 {
			return bad("timesteps must be a whole number of at least 1")
		}
		x.Timesteps = int(t)
		for j, ev := range x.Events {
			if ev.T == badEvent {
				return bad("event %d is not a pair [t, i]", j)
			}
			if ev.I == badEvent {
				return bad("event %d: step and input must be whole numbers", j)
			}
		}
		return x, nil
	case '[':
		v := s.skip()
		inner := &jsonScanner{b: v, i: 1}
		if inner.peek() == '[' {
			x.Matrix = [][]float32{}
			for inner.peek() != ']' {
				row := inner.skip()
				if string(row) == "null" {
					x.Matrix = append(x.Matrix, []float32{})
				} else if r, ok := readFloats(row); ok && row[0] == '[' {
					x.Matrix = append(x.Matrix, r)
				} else {
					return bad("a matrix is an array of rows of numbers")
				}
				if inner.peek() == ',' {
					inner.i++
				}
			}
			return x, nil
		}
		var ok bool
		if x.Vector, ok = readFloats(v); !ok {
			return bad("a vector is an array of numbers")
		}
		return x, nil
	}
	v := s.skip()
	return bad("a sample is a vector, a matrix (array of rows) or {\"events\", \"timesteps\"}, not %s", kindOf(v))
}

// badEvent marks, in readEvents' result, an event that is not a pair (in
// T) or whose numbers are not whole (in I).
const badEvent = math.MinInt

// events reads checked JSON [[t, i], ...]: ok is false when it is not
// an array of arrays (or nulls) of numbers (or nulls, or numbers in
// strings), as encoding/json would refuse it for [][]json.Number.
func (s *jsonScanner) events() ([]runtime.SpikeEvent, bool) {
	s.i++ // [
	out := make([]runtime.SpikeEvent, 0, s.eventsHint())
	for {
		if ev, next, ok := compactPair(s.b, s.i); ok {
			out = append(out, ev)
			s.i = next
			if next < len(s.b) && s.b[next] == ',' {
				s.i++
				continue
			}
		} else if s.peek() == ']' {
			break
		} else if ev, ok := s.pair(); ok {
			out = append(out, ev)
		} else {
			ev, ok := readEvent(s.skip())
			if !ok {
				return nil, false
			}
			out = append(out, ev)
		}
		if s.peek() == ',' {
			s.i++
		}
	}
	s.i++
	return out, true
}

// eventsHint guesses how many events the array being read holds, from
// the scanner's position just inside it: exactly, for compact JSON whose
// array ends at the first "]]", by counting its '[' (two fast passes over
// the bytes instead of growing the result a dozen times); 64 when there
// is no "]]". It is at most the number of 6-byte events the bytes to the
// "]]" can hold, so that it never reserves more than the input warrants.
func (s *jsonScanner) eventsHint() int {
	rest := s.b[s.i:]
	end := bytes.Index(rest, []byte("]]"))
	if end < 0 {
		return 64
	}
	return min(bytes.Count(rest[:end], []byte("[")), end/6+1)
}

// compactPair reads at b[i:] the event nearly every client writes, [t,i]
// of two whole numbers of at most 9 digits without signs, spaces or
// leading zeros, and returns the index after it; ok is false for
// anything else, which pair and readEvent read. What it reads is valid
// JSON, and pair reads the same.
func compactPair(b []byte, i int) (ev runtime.SpikeEvent, next int, ok bool) {
	if i >= len(b) || b[i] != '[' {
		return ev, i, false
	}
	i++
	var nums [2]int
	for k, end := range [2]byte{',', ']'} {
		n, d := 0, 0
		for i < len(b) && d < 9 {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			n = n*10 + int(c)
			i++
			d++
		}
		if d == 0 || d > 1 && b[i-d] == '0' || i >= len(b) || b[i] != end {
			return ev, i, false
		}
		i++
		nums[k] = n
	}
	return runtime.SpikeEvent{T: nums[0], I: nums[1]}, i, true
}

// pair reads the common event, [t, i] of two small whole numbers, and
// leaves the scanner where it was when the next value is anything else.
func (s *jsonScanner) pair() (runtime.SpikeEvent, bool) {
	start := s.i
	var nums [2]int
	for k := range 2 {
		want := byte('[')
		if k == 1 {
			want = ','
		}
		if s.peek() != want {
			s.i = start
			return runtime.SpikeEvent{}, false
		}
		s.i++
		s.ws()
		neg := s.i < len(s.b) && s.b[s.i] == '-'
		if neg {
			s.i++
		}
		n, d := 0, 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' && d < 9 {
			n = n*10 + int(s.b[s.i]-'0')
			s.i++
			d++
		}
		if d == 0 || s.i < len(s.b) && (s.b[s.i] >= '0' && s.b[s.i] <= '9' || s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
			s.i = start
			return runtime.SpikeEvent{}, false
		}
		if neg {
			n = -n
		}
		nums[k] = n
	}
	if s.peek() != ']' {
		s.i = start
		return runtime.SpikeEvent{}, false
	}
	s.i++
	return runtime.SpikeEvent{T: nums[0], I: nums[1]}, true
}

// readEvent reads any other event: null (not a pair), or an array of
// numbers, nulls and numbers in strings; ok is false for anything that
// encoding/json would refuse for []json.Number.
func readEvent(pair []byte) (runtime.SpikeEvent, bool) {
	ev := runtime.SpikeEvent{T: badEvent}
	switch pair[0] {
	case 'n':
		return ev, true
	case '[':
	default:
		return ev, false
	}
	p := &jsonScanner{b: pair, i: 1}
	var nums [2]int64
	n, whole := 0, true
	for p.peek() != ']' {
		x := p.skip()
		if !isNumber(x) && string(x) != "null" {
			return ev, false
		}
		if n < 2 {
			w, ok := wholeNumber(x)
			nums[n], whole = w, whole && ok && w >= math.MinInt32 && w <= math.MaxInt32
		}
		n++
		if p.peek() == ',' {
			p.i++
		}
	}
	if n == 2 {
		ev = runtime.SpikeEvent{T: int(nums[0]), I: int(nums[1])}
		if !whole {
			ev.I = badEvent
		}
	}
	return ev, true
}

// isNumber tells whether v is a number, or a string that encoding/json
// would take for a json.Number: one holding a valid number literal.
func isNumber(v []byte) bool {
	if len(v) > 0 && v[0] != '"' {
		return v[0] == '-' || v[0] >= '0' && v[0] <= '9'
	}
	var n json.Number
	return json.Unmarshal(v, &n) == nil
}

// wholeNumber reads a number (or a number in a string) as json.Number's
// Int64 does: whole and in int64's range, with no fraction or exponent.
func wholeNumber(v []byte) (int64, bool) {
	if len(v) == 0 || v[0] == 'n' {
		return 0, false
	}
	if v[0] == '"' {
		var n json.Number
		if json.Unmarshal(v, &n) != nil {
			return 0, false
		}
		w, err := n.Int64()
		return w, err == nil
	}
	neg := v[0] == '-'
	d := v
	if neg {
		d = d[1:]
	}
	if len(d) > 0 && len(d) < 19 {
		var w int64
		for _, c := range d {
			if c < '0' || c > '9' {
				return 0, false
			}
			w = w*10 + int64(c-'0')
		}
		if neg {
			w = -w
		}
		return w, true
	}
	w, err := strconv.ParseInt(string(v), 10, 64)
	return w, err == nil
}

// readFloats reads checked JSON [x, ...] as encoding/json reads
// []float64 (null is 0), refusing what float32 cannot hold.
func readFloats(v []byte) ([]float32, bool) {
	if v[0] != '[' {
		return nil, false
	}
	s := &jsonScanner{b: v, i: 1}
	out := make([]float32, 0, len(v)/4)
	for s.peek() != ']' {
		x := s.skip()
		var f float64
		switch {
		case string(x) == "null":
		case x[0] == '-' || x[0] >= '0' && x[0] <= '9':
			var err error
			if f, err = strconv.ParseFloat(string(x), 64); err != nil || math.Abs(f) > math.MaxFloat32 {
				return nil, false
			}
		default:
			return nil, false
		}
		out = append(out, float32(f))
		if s.peek() == ',' {
			s.i++
		}
	}
	return out, true
}

// unpackEvents reads the compact form of a sample's events: base64
// (standard, padded) of little-endian int32 pairs (t, i), 8 bytes an
// event. It is a quarter of the JSON's size and decodes at memory speed.
func unpackEvents(text string) ([]runtime.SpikeEvent, string) {
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Sprintf("events_packed is not base64: %v", err)
	}
	if len(b)%8 != 0 {
		return nil, fmt.Sprintf("events_packed holds %d bytes; an event is 8 (int32 t, int32 i, little-endian)", len(b))
	}
	out := make([]runtime.SpikeEvent, len(b)/8)
	for k := range out {
		out[k] = runtime.SpikeEvent{T: int(int32(binary.LittleEndian.Uint32(b[8*k:]))), I: int(int32(binary.LittleEndian.Uint32(b[8*k+4:])))}
	}
	return out, ""
}

// stringValue reads a checked JSON string: its bytes as they stand when
// it has no escape (base64 has none), else as encoding/json reads it.
func stringValue(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if !bytes.ContainsRune(v, '\\') {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	return s, json.Unmarshal(v, &s) == nil
}

// closingQuote finds the quote that closes the checked JSON string that
// opens at i: the next quote after an even run of backslashes.
func closingQuote(b []byte, i int) int {
	for {
		j := bytes.IndexByte(b[i+1:], '"')
		i += 1 + j
		n := 0
		for b[i-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return i
		}
	}
}
