package torchfile

import "fmt"

// Options configures Open and Unpickle. The zero value (or a nil *Options) is
// safe to use on untrusted files.
type Options struct {
	// Limits bounds what a file may make the reader allocate or do.
	Limits Limits

	// AllowModules lists extra fully qualified class names (for example
	// "mypkg.models.Net") that the unpickler builds as *Module data values,
	// the way it builds torch.nn modules. Nothing of them is ever called; the
	// list only widens what is accepted instead of refused.
	AllowModules []string
}

// Limits bounds the work and memory a file can demand. A zero field means the
// default given in its comment.
type Limits struct {
	// MaxEntries is the most zip entries an archive may have. Default 65536.
	MaxEntries int
	// MaxPickleBytes is the largest pickle (data.pkl, constants.pkl) read into
	// memory. Default 256 MiB.
	MaxPickleBytes int64
	// MaxEntryBytes is the largest uncompressed size of any other zip entry.
	// Default 16 GiB.
	MaxEntryBytes int64
	// MaxInflateBytes bounds what deflate-compressed entries may inflate
	// to in memory, all of them together, checked on the sizes the
	// archive declares before any is inflated (torch stores entries
	// uncompressed; zip tools may not). Default 1 GiB.
	MaxInflateBytes int64
	// MaxTensorElements is the most elements one tensor may have, checked when
	// the pickle is read, before anything is allocated. Default 1<<30.
	MaxTensorElements int64
	// MaxDims is the most dimensions of one tensor. Default 64.
	MaxDims int
	// MaxModules is the most module visits when walking a module tree
	// (StateDict visits a module shared by two parents twice, as torch does;
	// a hand-made pickle can share one at every level). Default 65536.
	MaxModules int
	// MaxDepth bounds nesting when walking values (module trees, hashed tuple
	// keys). Default 1000.
	MaxDepth int
}

// Defaults of the Limits that the importer also uses to derive its own.
const (
	DefaultMaxTensorElements = 1 << 30
	DefaultMaxInflateBytes   = 1 << 30
)

const (
	defaultMaxEntries     = 65536
	defaultMaxPickleBytes = 256 << 20
	defaultMaxEntryBytes  = 16 << 30
	defaultMaxDims        = 64
	defaultMaxDepth       = 1000
	defaultMaxModules     = 1 << 16
)

// Validate reports a negative limit.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	l := o.Limits
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxEntries", int64(l.MaxEntries)},
		{"MaxPickleBytes", l.MaxPickleBytes},
		{"MaxEntryBytes", l.MaxEntryBytes},
		{"MaxInflateBytes", l.MaxInflateBytes},
		{"MaxTensorElements", l.MaxTensorElements},
		{"MaxDims", int64(l.MaxDims)},
		{"MaxModules", int64(l.MaxModules)},
		{"MaxDepth", int64(l.MaxDepth)},
	} {
		if f.v < 0 {
			return fmt.Errorf("pytorch: Options.Limits.%s is negative (%d)", f.name, f.v)
		}
	}
	return nil
}

// withDefaults returns the limits with zero fields replaced by defaults.
func (l Limits) withDefaults() Limits {
	if l.MaxEntries == 0 {
		l.MaxEntries = defaultMaxEntries
	}
	if l.MaxPickleBytes == 0 {
		l.MaxPickleBytes = defaultMaxPickleBytes
	}
	if l.MaxEntryBytes == 0 {
		l.MaxEntryBytes = defaultMaxEntryBytes
	}
	if l.MaxInflateBytes == 0 {
		l.MaxInflateBytes = DefaultMaxInflateBytes
	}
	if l.MaxTensorElements == 0 {
		l.MaxTensorElements = DefaultMaxTensorElements
	}
	if l.MaxDims == 0 {
		l.MaxDims = defaultMaxDims
	}
	if l.MaxModules == 0 {
		l.MaxModules = defaultMaxModules
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = defaultMaxDepth
	}
	return l
}

// resolved returns the options with defaults filled in.
func (o *Options) resolved() (Options, error) {
	if o == nil {
		return Options{Limits: Limits{}.withDefaults()}, nil
	}
	if err := o.Validate(); err != nil {
		return Options{}, err
	}
	r := *o
	r.Limits = o.Limits.withDefaults()
	return r, nil
}
