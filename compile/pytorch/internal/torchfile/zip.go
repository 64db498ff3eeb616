package torchfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// archive is a zip container checked against hostile layouts before any entry
// is read: entry count, names under one top-level prefix, declared sizes
// against limits and against the file, data regions that overlap or run past
// the end.
type archive struct {
	r       io.ReaderAt
	size    int64
	prefix  string // the top-level directory, without the slash
	names   []string
	files   map[string]*zip.File
	offsets map[string]int64 // data offsets of stored entries
	limits  Limits
}

const (
	eocdLen        = 22
	eocdSig        = 0x06054b50
	zip64LocLen    = 20
	zip64LocSig    = 0x07064b50
	zip64EocdLen   = 56
	zip64EocdSig   = 0x06064b50
	maxCommentLen  = 0xffff
	localHeaderSig = 0x04034b50
)

// countEntries reads the entry count from the end-of-central-directory record
// (zip64 aware), so that an absurd count is refused before archive/zip
// allocates for it.
func countEntries(r io.ReaderAt, size int64) (uint64, error) {
	if size < eocdLen {
		return 0, fmt.Errorf("%w: %d bytes is too short for a zip archive", ErrTruncated, size)
	}
	tail := min(size, eocdLen+maxCommentLen)
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("reading end of archive: %w", err)
	}
	at := -1
	for i := len(buf) - eocdLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == eocdSig {
			at = i
			break
		}
	}
	if at < 0 {
		return 0, fmt.Errorf("%w: no end-of-central-directory record (not a zip archive, or truncated)", ErrFormat)
	}
	n := uint64(binary.LittleEndian.Uint16(buf[at+10:]))
	if n != 0xffff {
		return n, nil
	}
	// zip64: the locator sits just before the record and points to the
	// zip64 end record, which holds the 64-bit count.
	locAt := size - tail + int64(at) - zip64LocLen
	if locAt < 0 {
		return n, nil
	}
	loc := make([]byte, zip64LocLen)
	if _, err := r.ReadAt(loc, locAt); err != nil || binary.LittleEndian.Uint32(loc) != zip64LocSig {
		return n, nil
	}
	off := binary.LittleEndian.Uint64(loc[8:])
	if off > uint64(size-zip64EocdLen) {
		return 0, fmt.Errorf("%w: zip64 end record at %d past the end", ErrTruncated, off)
	}
	rec := make([]byte, zip64EocdLen)
	if _, err := r.ReadAt(rec, int64(off)); err != nil || binary.LittleEndian.Uint32(rec) != zip64EocdSig {
		return 0, fmt.Errorf("%w: bad zip64 end record", ErrFormat)
	}
	return binary.LittleEndian.Uint64(rec[32:]), nil
}

func openArchive(r io.ReaderAt, size int64, l Limits) (*archive, error) {
	n, err := countEntries(r, size)
	if err != nil {
		return nil, &ZipError{Err: err}
	}
	if n > uint64(l.MaxEntries) {
		return nil, &ZipError{Err: &LimitError{Limit: "MaxEntries", Value: int64(min(n, 1<<62)), Max: int64(l.MaxEntries)}}
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, &ZipError{Err: fmt.Errorf("%w: %w", ErrFormat, err)}
	}
	if len(zr.File) == 0 {
		return nil, &ZipError{Err: fmt.Errorf("%w: empty archive", ErrFormat)}
	}
	if len(zr.File) > l.MaxEntries {
		return nil, &ZipError{Err: &LimitError{Limit: "MaxEntries", Value: int64(len(zr.File)), Max: int64(l.MaxEntries)}}
	}
	a := &archive{r: r, size: size, limits: l, files: make(map[string]*zip.File, len(zr.File)), offsets: make(map[string]int64)}
	first := zr.File[0].Name
	i := strings.IndexByte(first, '/')
	if i <= 0 {
		return nil, &ZipError{Entry: first, Err: fmt.Errorf("%w: entry is not inside an archive directory", ErrFormat)}
	}
	a.prefix = first[:i]
	type region struct {
		start, end int64
		name       string
	}
	var regions []region
	var inflate uint64 // declared sizes of the deflated entries, in all
	for _, f := range zr.File {
		if f.Method == zip.Deflate {
			inflate += min(f.UncompressedSize64, 1<<62)
			if inflate > uint64(l.MaxInflateBytes) {
				// Checked on the central directory, before any entry is
				// inflated: archive/zip refuses an entry that inflates past
				// the size it declares.
				return nil, &ZipError{Entry: f.Name, Err: &LimitError{Limit: "MaxInflateBytes (all deflated entries)", Value: int64(min(inflate, 1<<62)), Max: l.MaxInflateBytes}}
			}
		}
		if err := a.checkName(f.Name); err != nil {
			return nil, &ZipError{Entry: f.Name, Err: err}
		}
		if _, dup := a.files[f.Name]; dup {
			return nil, &ZipError{Entry: f.Name, Err: fmt.Errorf("%w: duplicate entry", ErrFormat)}
		}
		switch f.Method {
		case zip.Store:
			if f.CompressedSize64 != f.UncompressedSize64 {
				return nil, &ZipError{Entry: f.Name, Err: fmt.Errorf("%w: stored entry with compressed size %d != size %d", ErrFormat, f.CompressedSize64, f.UncompressedSize64)}
			}
		case zip.Deflate:
		default:
			return nil, &ZipError{Entry: f.Name, Err: fmt.Errorf("%w: compression method %d", ErrUnsupported, f.Method)}
		}
		if f.UncompressedSize64 > uint64(l.MaxEntryBytes) {
			return nil, &ZipError{Entry: f.Name, Err: &LimitError{Limit: "MaxEntryBytes", Value: int64(min(f.UncompressedSize64, 1<<62)), Max: l.MaxEntryBytes}}
		}
		if f.CompressedSize64 > uint64(size) {
			return nil, &ZipError{Entry: f.Name, Err: fmt.Errorf("%w: entry declares %d bytes in a file of %d", ErrTruncated, f.CompressedSize64, size)}
		}
		off, err := f.DataOffset()
		if err != nil {
			return nil, &ZipError{Entry: f.Name, Err: fmt.Errorf("%w: local header: %w", ErrTruncated, err)}
		}
		end := off + int64(f.CompressedSize64)
		if off < 0 || end > size {
			return nil, &ZipError{Entry: f.Name, Err: fmt.Errorf("%w: data [%d, %d) runs past the end of a %d-byte file", ErrTruncated, off, end, size)}
		}
		if end > off {
			regions = append(regions, region{off, end, f.Name})
		}
		a.files[f.Name] = f
		a.offsets[f.Name] = off
		a.names = append(a.names, f.Name)
	}
	slices.SortFunc(regions, func(x, y region) int {
		switch {
		case x.start < y.start:
			return -1
		case x.start > y.start:
			return 1
		}
		return 0
	})
	for i := 1; i < len(regions); i++ {
		if regions[i].start < regions[i-1].end {
			return nil, &ZipError{Entry: regions[i].name, Err: fmt.Errorf("%w: data overlaps entry %q", ErrFormat, regions[i-1].name)}
		}
	}
	return a, nil
}

// checkName accepts only relative slash-separated names inside the prefix.
func (a *archive) checkName(name string) error {
	if !strings.HasPrefix(name, a.prefix+"/") {
		return fmt.Errorf("%w: entry outside the archive directory %q", ErrFormat, a.prefix)
	}
	if strings.ContainsAny(name, "\\\x00") {
		return fmt.Errorf("%w: entry name has a backslash or NUL", ErrFormat)
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			if seg == "" && strings.HasSuffix(name, "/") {
				continue // directory entries, which torch does not write but zip tools do
			}
			return fmt.Errorf("%w: entry name has an empty, '.' or '..' segment", ErrFormat)
		}
	}
	return nil
}

func (a *archive) has(rel string) bool {
	_, ok := a.files[a.prefix+"/"+rel]
	return ok
}

// read returns the whole of entry rel (relative to the prefix), refusing
// entries larger than max before reading. The CRC is checked.
func (a *archive) read(rel string, max int64, limit string) ([]byte, error) {
	name := a.prefix + "/" + rel
	f, ok := a.files[name]
	if !ok {
		return nil, &ZipError{Entry: name, Err: fmt.Errorf("%w: missing entry", ErrFormat)}
	}
	if f.UncompressedSize64 > uint64(max) {
		return nil, &ZipError{Entry: name, Err: &LimitError{Limit: limit, Value: int64(min(f.UncompressedSize64, 1<<62)), Max: max}}
	}
	rc, err := f.Open()
	if err != nil {
		return nil, &ZipError{Entry: name, Err: fmt.Errorf("%w: %w", ErrFormat, err)}
	}
	defer rc.Close()
	// A stored entry's size was checked against the file; a deflated one's
	// is only a claim, so its buffer grows with the data actually inflated.
	want := int64(f.UncompressedSize64)
	initial := want
	if f.Method != zip.Store {
		initial = min(want, int64(f.CompressedSize64)*4+4096)
	}
	b := bytes.NewBuffer(make([]byte, 0, initial))
	if n, err := io.Copy(b, io.LimitReader(rc, want)); err != nil || n != want {
		if err == nil {
			err = fmt.Errorf("%d of %d bytes", n, want)
		}
		return nil, &ZipError{Entry: name, Err: fmt.Errorf("%w: %w", ErrTruncated, err)}
	}
	buf := b.Bytes()
	// Reading to EOF makes archive/zip check the size and CRC.
	var one [1]byte
	if n, err := rc.Read(one[:]); n != 0 || !errors.Is(err, io.EOF) {
		if err == nil || errors.Is(err, io.EOF) {
			err = errors.New("more data than declared")
		}
		return nil, &ZipError{Entry: name, Err: fmt.Errorf("%w: %w", ErrFormat, err)}
	}
	return buf, nil
}

// source returns random access to entry rel, which must hold at least need
// bytes. Stored entries (all torch writes) are read in place; a deflated entry
// is inflated once, on first use, bounded by its checked declared size.
func (a *archive) source(rel string, need int64) (io.ReaderAt, string, error) {
	name := a.prefix + "/" + rel
	f, ok := a.files[name]
	if !ok {
		return nil, name, fmt.Errorf("%w: storage entry %q is missing", ErrFormat, name)
	}
	if f.UncompressedSize64 < uint64(need) {
		return nil, name, fmt.Errorf("%w: storage entry %q holds %d bytes, its tensors need %d", ErrTruncated, name, f.UncompressedSize64, need)
	}
	if f.Method == zip.Store {
		return io.NewSectionReader(a.r, a.offsets[name], int64(f.UncompressedSize64)), name, nil
	}
	if f.UncompressedSize64 > uint64(a.limits.MaxInflateBytes) {
		return nil, name, &LimitError{Limit: "MaxInflateBytes", Value: int64(min(f.UncompressedSize64, 1<<62)), Max: a.limits.MaxInflateBytes}
	}
	return &inflated{a: a, rel: rel}, name, nil
}

type inflated struct {
	a    *archive
	rel  string
	once sync.Once
	data []byte
	err  error
}

func (z *inflated) ReadAt(p []byte, off int64) (int, error) {
	z.once.Do(func() { z.data, z.err = z.a.read(z.rel, z.a.limits.MaxInflateBytes, "MaxInflateBytes") })
	if z.err != nil {
		return 0, z.err
	}
	return bytes.NewReader(z.data).ReadAt(p, off)
}
