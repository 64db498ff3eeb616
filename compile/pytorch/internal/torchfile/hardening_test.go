package torchfile

import (
	"archive/zip"
	"bytes"
	"errors"
	"testing"
)

// A legacy (non-zip) torch.save stream whose pickle names os.system is
// refused as forbidden, as a zip archive's would be, not only as an
// unsupported format.
func TestLegacyPickleNamingASystemCallIsForbidden(t *testing.T) {
	evil := []byte("\x80\x02cposix\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03.")
	_, err := Open(bytes.NewReader(evil), int64(len(evil)), nil)
	var fe *ForbiddenClassError
	if !errors.As(err, &fe) || fe.Module != "posix" || fe.Name != "system" {
		t.Fatalf("got %v", err)
	}
	benign := []byte("\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.") // the legacy magic number, as torch writes it
	if _, err := Open(bytes.NewReader(benign), int64(len(benign)), nil); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("a benign legacy file: %v", err)
	}
}

// Deflated entries that together declare more than MaxInflateBytes are
// refused from the central directory, before any is inflated.
func TestInflationIsBoundedInAll(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zero := make([]byte, 1<<20)
	for _, name := range []string{"archive/data.pkl", "archive/data/0", "archive/data/1", "archive/data/2"} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			w.Write(zero)
		}
	}
	zw.Close()
	_, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), &Options{Limits: Limits{MaxInflateBytes: 8 << 20}})
	var le *LimitError
	if !errors.As(err, &le) || le.Max != 8<<20 {
		t.Fatalf("got %v", err)
	}
}
