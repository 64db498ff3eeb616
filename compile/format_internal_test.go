package compile

import (
	"errors"
	"strings"
	"testing"
)

// TestSniffAmbiguous: a file that two formats claim is refused, naming
// both, rather than given to whichever registered first.
func TestSniffAmbiguous(t *testing.T) {
	formatsMu.Lock()
	sniffers["test.a"] = Magic("AMB")
	sniffers["test.b"] = Magic("AM")
	formatsMu.Unlock()
	t.Cleanup(func() {
		formatsMu.Lock()
		delete(sniffers, "test.a")
		delete(sniffers, "test.b")
		formatsMu.Unlock()
	})
	_, err := sniff([]byte("AMBIGUOUS"))
	if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), "any of test.a, test.b") {
		t.Fatalf("err = %v", err)
	}
	if got, err := sniff([]byte("AMX")); got != "test.b" || err != nil {
		t.Fatalf("%q, %v", got, err)
	}
}
