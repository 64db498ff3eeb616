package nir

import (
	"encoding/binary"
	"fmt"
	"io"
)

// The HDF5 library loads a file's whole group tree when it opens it, and
// follows hard links without remembering where it has been for groups that
// store their links in the object header (the format of HDF5 1.8 and
// later). A link from a group to itself or an ancestor therefore recurses
// until the goroutine stack overflows, which no recover can catch; a chain
// of groups that each link twice to the next makes it do exponential work.
// scanStructure walks the same tree first, with a budget, and refuses such
// files. It reads only what it needs: superblock, object headers and their
// continuation blocks, link messages, and the B-trees and symbol-table
// nodes of old-style groups.

const (
	undefAddr    = ^uint64(0)
	maxScanDepth = 64
	maxScanVisit = 1 << 16
	maxOHChunks  = 64
)

type scanner struct {
	r       io.ReaderAt
	size    int64
	visits  int
	onStack map[uint64]bool
}

func scanStructure(r io.ReaderAt, size int64) error {
	s := &scanner{r: r, size: size, onStack: map[uint64]bool{}}
	root, err := s.rootAddr()
	if err != nil {
		return err
	}
	if err := s.object(root, 0, "/"); err != nil {
		return err
	}
	return s.signatures()
}

// signatures checks the structures the library sizes its buffers from
// and that the group walk does not reach: global heap collections (read
// for variable-length strings) and chunk B-tree nodes (read for
// compressed datasets). Both begin with a signature; every occurrence
// whose claimed size would reach past the end of the file is refused.
// A false match needs 5 to 8 specific bytes in a row.
func (s *scanner) signatures() error {
	const block = 1 << 20
	le := binary.LittleEndian
	buf := make([]byte, block+64)
	for off := int64(0); off < s.size; off += block {
		n, err := s.r.ReadAt(buf[:min(int64(len(buf)), s.size-off)], off)
		if err != nil && err != io.EOF {
			return fmt.Errorf("nir: reading offset %d: %w", off, err)
		}
		b := buf[:n]
		for i := 0; i < min(n, block); i++ {
			switch {
			case b[i] == 'G' && i+16 <= n && string(b[i:i+8]) == "GCOL\x01\x00\x00\x00":
				if sz := le.Uint64(b[i+8:]); sz > uint64(s.size-off-int64(i)) {
					return invalidf("", "", "hdf5: global heap at offset %d claims %d bytes, beyond the end of the file", off+int64(i), sz)
				}
			case b[i] == 'T' && i+24 <= n && string(b[i:i+5]) == "TREE\x01":
				if err := s.chunkTree(uint64(off) + uint64(i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// chunkTree checks the chunk sizes in the keys of a chunk B-tree node.
// The key's dimensionality is not known here; the node is checked for
// every plausible rank, and refused only if no rank makes it fit.
func (s *scanner) chunkTree(addr uint64) error {
	le := binary.LittleEndian
	h, err := s.read(addr, 24)
	if err != nil {
		return nil
	}
	entries := int(le.Uint16(h[6:8]))
	for rank := 1; rank <= 33; rank++ {
		key := 8 + 8*rank
		body, err := s.read(addr+24, entries*(key+8)+key)
		if err != nil {
			continue
		}
		ok := true
		for e := 0; e < entries && ok; e++ {
			p := e * (key + 8)
			nbytes := uint64(le.Uint32(body[p:]))
			child := le.Uint64(body[p+key:])
			if h[5] == 0 && (child >= uint64(s.size) || nbytes > uint64(s.size)-child) {
				ok = false
			}
		}
		if ok {
			return nil
		}
	}
	return invalidf("", "", "hdf5: chunk index at offset %d points at chunks beyond the end of the file", addr)
}

// heap checks a local heap (the names of an old-style group's members).
func (s *scanner) heap(addr uint64) error {
	h, err := s.read(addr, 32)
	if err != nil {
		return err
	}
	if string(h[:4]) != "HEAP" {
		return invalidf("", "", "hdf5: no local heap at offset %d", addr)
	}
	le := binary.LittleEndian
	size, data := le.Uint64(h[8:16]), le.Uint64(h[24:32])
	if data >= uint64(s.size) || size > uint64(s.size)-data {
		return invalidf("", "", "hdf5: local heap at offset %d claims %d bytes at offset %d, beyond the end of the file", addr, size, data)
	}
	return nil
}

func (s *scanner) read(addr uint64, n int) ([]byte, error) {
	if n < 0 || addr >= uint64(s.size) || uint64(n) > uint64(s.size)-addr {
		return nil, invalidf("", "", "hdf5: %d bytes at offset %d lie beyond the end of the file (%d bytes)", n, addr, s.size)
	}
	b := make([]byte, n)
	if _, err := s.r.ReadAt(b, int64(addr)); err != nil && err != io.EOF {
		return nil, fmt.Errorf("nir: reading offset %d: %w", addr, err)
	}
	return b, nil
}

func (s *scanner) rootAddr() (uint64, error) {
	b, err := s.read(0, 48)
	if err != nil {
		return 0, invalidf("", "", "hdf5: file too short for a superblock (%d bytes)", s.size)
	}
	if string(b[:8]) != "\x89HDF\r\n\x1a\n" {
		return 0, invalidf("", "", "not an HDF5 file (no signature at offset 0)")
	}
	le := binary.LittleEndian
	switch v := b[8]; v {
	case 0, 1:
		if b[13] != 8 || b[14] != 8 {
			return 0, unsupportedf("", "", "hdf5: offsets of %d bytes and lengths of %d bytes (only 8 is supported)", b[13], b[14])
		}
		off := 64
		if v == 1 {
			off = 68
		}
		h, err := s.read(uint64(off), 32)
		if err != nil {
			return 0, err
		}
		// A cached symbol table (cache type 1) the library may use for the
		// root group.
		if le.Uint32(h[8:12]) == 1 {
			if err := s.heap(le.Uint64(h[24:32])); err != nil {
				return 0, err
			}
		}
		return le.Uint64(h), nil
	case 2, 3:
		if b[9] != 8 || b[10] != 8 {
			return 0, unsupportedf("", "", "hdf5: offsets of %d bytes and lengths of %d bytes (only 8 is supported)", b[9], b[10])
		}
		return le.Uint64(b[36:44]), nil
	default:
		return 0, unsupportedf("", "", "hdf5: superblock version %d", v)
	}
}

// object walks the object whose header is at addr and everything it links
// to.
func (s *scanner) object(addr uint64, depth int, path string) error {
	s.visits++
	if s.visits > maxScanVisit {
		return invalidf("", "", "hdf5: more than %d objects reached through links (a link structure that repeats)", maxScanVisit)
	}
	if depth > maxScanDepth {
		return invalidf("", "", "hdf5: groups nested more than %d deep at %s", maxScanDepth, path)
	}
	if s.onStack[addr] {
		return invalidf("", "", "hdf5: cyclic group structure: %s links back to one of its ancestors", path)
	}
	if addr == undefAddr || addr >= uint64(s.size) {
		return invalidf("", "", "hdf5: object %s at offset %d lies beyond the end of the file", path, addr)
	}
	s.onStack[addr] = true
	defer delete(s.onStack, addr)

	var children []uint64
	var btree uint64 = undefAddr
	err := s.messages(addr, func(typ uint16, data []byte) error {
		le := binary.LittleEndian
		switch typ {
		case 0x06: // link
			a, ok := hardLinkAddr(data)
			if ok {
				children = append(children, a)
			}
		case 0x02: // link info
			if len(data) < 2 {
				return invalidf("", "", "hdf5: short link info message in %s", path)
			}
			off := 2
			if data[1]&1 != 0 {
				off += 8
			}
			if len(data) < off+8 {
				return invalidf("", "", "hdf5: short link info message in %s", path)
			}
			if le.Uint64(data[off:]) != undefAddr {
				return unsupportedf("", "", "hdf5: group %s stores its links densely (fractal heap); write the file with h5py's default libver", path)
			}
		case 0x11: // symbol table
			if len(data) < 16 {
				return invalidf("", "", "hdf5: short symbol table message in %s", path)
			}
			btree = le.Uint64(data[:8])
			if err := s.heap(le.Uint64(data[8:16])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if btree != undefAddr {
		if children, err = s.btreeChildren(btree, children, 0); err != nil {
			return err
		}
	}
	for _, c := range children {
		if err := s.object(c, depth+1, path+"*/"); err != nil {
			return err
		}
	}
	return nil
}

// hardLinkAddr decodes a link message (version 1) and returns the target
// of a hard link.
func hardLinkAddr(d []byte) (uint64, bool) {
	if len(d) < 2 || d[0] != 1 {
		return 0, false
	}
	flags := d[1]
	p := 2
	linkType := byte(0)
	if flags&0x08 != 0 {
		if p >= len(d) {
			return 0, false
		}
		linkType = d[p]
		p++
	}
	if flags&0x04 != 0 {
		p += 8
	}
	if flags&0x10 != 0 {
		p++
	}
	nl := 1 << (flags & 3)
	if p+nl > len(d) {
		return 0, false
	}
	var n uint64
	for i := 0; i < nl; i++ {
		n |= uint64(d[p+i]) << (8 * i)
	}
	p += nl
	if linkType != 0 || n > uint64(len(d)) || p+int(n)+8 > len(d) {
		return 0, false
	}
	p += int(n)
	return binary.LittleEndian.Uint64(d[p:]), true
}

// btreeChildren collects the object addresses of an old-style group from
// its B-tree (version 1, type 0) and symbol-table nodes.
func (s *scanner) btreeChildren(addr uint64, acc []uint64, depth int) ([]uint64, error) {
	if depth > maxScanDepth {
		return nil, invalidf("", "", "hdf5: group B-tree deeper than %d", maxScanDepth)
	}
	s.visits++
	if s.visits > maxScanVisit {
		return nil, invalidf("", "", "hdf5: more than %d B-tree nodes and objects", maxScanVisit)
	}
	h, err := s.read(addr, 24)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	if string(h[:4]) != "TREE" || h[4] != 0 {
		return nil, invalidf("", "", "hdf5: no group B-tree node at offset %d", addr)
	}
	level, n := h[5], int(le.Uint16(h[6:8]))
	body, err := s.read(addr+24, 8+n*16)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		child := le.Uint64(body[8+i*16:])
		if level > 0 {
			if acc, err = s.btreeChildren(child, acc, depth+1); err != nil {
				return nil, err
			}
			continue
		}
		sn, err := s.read(child, 8)
		if err != nil {
			return nil, err
		}
		if string(sn[:4]) != "SNOD" {
			return nil, invalidf("", "", "hdf5: no symbol table node at offset %d", child)
		}
		m := int(le.Uint16(sn[6:8]))
		ents, err := s.read(child+8, m*40)
		if err != nil {
			return nil, err
		}
		for j := 0; j < m; j++ {
			e := ents[j*40:]
			// Cache type 2 is a soft link, whose address is undefined.
			if le.Uint32(e[16:20]) == 2 {
				continue
			}
			acc = append(acc, le.Uint64(e[8:16]))
			// Cache type 1: the library uses the B-tree and heap cached
			// here rather than the child's own header.
			if le.Uint32(e[16:20]) == 1 {
				if err := s.heap(le.Uint64(e[32:40])); err != nil {
					return nil, err
				}
				if acc, err = s.btreeChildren(le.Uint64(e[24:32]), acc, depth+1); err != nil {
					return nil, err
				}
			}
		}
	}
	return acc, nil
}

// messages calls f for every message of the object header at addr, in
// header version 1 or 2, following continuation blocks.
func (s *scanner) messages(addr uint64, f func(typ uint16, data []byte) error) error {
	le := binary.LittleEndian
	sig, err := s.read(addr, 4)
	if err != nil {
		return err
	}
	var blocks []ohBlock
	v2 := string(sig) == "OHDR"
	if v2 {
		h, err := s.read(addr, 6)
		if err != nil {
			return err
		}
		flags := h[5]
		p := addr + 6
		if flags&0x20 != 0 {
			p += 16
		}
		if flags&0x10 != 0 {
			p += 4
		}
		nb := 1 << (flags & 3)
		sz, err := s.read(p, nb)
		if err != nil {
			return err
		}
		var n uint64
		for i := 0; i < nb; i++ {
			n |= uint64(sz[i]) << (8 * i)
		}
		blocks = append(blocks, ohBlock{p + uint64(nb), n, true})
		// Creation-order fields in message headers.
		if flags&0x04 != 0 {
			return s.walkBlocks(blocks, 6, f, true)
		}
		return s.walkBlocks(blocks, 4, f, true)
	}
	h, err := s.read(addr, 16)
	if err != nil {
		return err
	}
	if h[0] != 1 {
		return invalidf("", "", "hdf5: unknown object header version %d at offset %d", h[0], addr)
	}
	blocks = append(blocks, ohBlock{addr + 16, uint64(le.Uint32(h[8:12])), true})
	return s.walkBlocks(blocks, 8, f, false)
}

// ohBlock is one block of an object header's messages.
type ohBlock struct {
	addr, length uint64
	first        bool
}

func (s *scanner) walkBlocks(blocks []ohBlock, hdr int, f func(uint16, []byte) error, v2 bool) error {
	le := binary.LittleEndian
	for i := 0; i < len(blocks); i++ {
		if i >= maxOHChunks {
			return invalidf("", "", "hdf5: object header with more than %d continuation blocks", maxOHChunks)
		}
		b := blocks[i]
		if b.length > uint64(s.size) {
			return invalidf("", "", "hdf5: object header block of %d bytes in a file of %d", b.length, s.size)
		}
		data, err := s.read(b.addr, int(b.length))
		if err != nil {
			return err
		}
		if v2 {
			if !b.first {
				if len(data) < 8 || string(data[:4]) != "OCHK" {
					return invalidf("", "", "hdf5: no continuation block at offset %d", b.addr)
				}
				data = data[4:]
			}
			if len(data) < 4 && !b.first {
				return invalidf("", "", "hdf5: short object header block at offset %d", b.addr)
			}
			if !b.first {
				data = data[:len(data)-4] // checksum
			}
		}
		for p := 0; p+hdr <= len(data); {
			var typ uint16
			var size int
			if v2 {
				typ, size = uint16(data[p]), int(le.Uint16(data[p+1:]))
			} else {
				typ, size = le.Uint16(data[p:]), int(le.Uint16(data[p+2:]))
			}
			p += hdr
			if p+size > len(data) {
				return invalidf("", "", "hdf5: object header message of %d bytes overruns its block at offset %d", size, b.addr)
			}
			msg := data[p : p+size]
			p += size
			if typ == 0x10 {
				if len(msg) < 16 {
					return invalidf("", "", "hdf5: short continuation message at offset %d", b.addr)
				}
				blocks = append(blocks, ohBlock{le.Uint64(msg), le.Uint64(msg[8:]), false})
				continue
			}
			if err := f(typ, msg); err != nil {
				return err
			}
		}
	}
	return nil
}
