package compile_test

// The tests that import neuro-1-lite's model.pt (TestFoldLinearLite) need
// its architecture, which compile/pytorch no longer holds: it is
// registered by models/lima, linked here for the whole test binary.
import _ "github.com/neuro-go/neuro/models/lima"
