package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"

	"github.com/astraea-sched/astraea/internal/atomicfile"
)

// Snapshot file format, little-endian:
//
//	magic   [8]byte  "ASTRCKPT"
//	version uint32   1
//	seed    uint64
//	iter    uint64
//	params  [Features+1]uint64  math.Float64bits of each parameter
//	crc     uint32   CRC-32 (IEEE) of everything before it
const (
	magic       = "ASTRCKPT"
	version     = 1
	encodedSize = 8 + 4 + 8 + 8 + 8*(Features+1) + 4
)

var (
	// ErrCorrupt: the snapshot is truncated, has the wrong magic or fails its
	// checksum.
	ErrCorrupt = errors.New("checkpoint: corrupt snapshot")
	// ErrVersion: the snapshot was written by an unknown format version.
	ErrVersion = errors.New("checkpoint: unsupported snapshot version")
)

// MarshalBinary encodes the snapshot; parameters are stored as exact bits.
func (s Snapshot) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, encodedSize)
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint64(b, s.Seed)
	b = binary.LittleEndian.AppendUint64(b, s.Iter)
	for _, p := range s.Params {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b)), nil
}

// UnmarshalBinary decodes a snapshot written by MarshalBinary. It never
// panics: bad input is ErrCorrupt or ErrVersion, with the reason.
func (s *Snapshot) UnmarshalBinary(b []byte) error {
	if len(b) != encodedSize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrCorrupt, len(b), encodedSize)
	}
	if string(b[:8]) != magic {
		return fmt.Errorf("%w: bad magic %q", ErrCorrupt, b[:8])
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if got := crc32.ChecksumIEEE(body); got != sum {
		return fmt.Errorf("%w: checksum %08x, stored %08x", ErrCorrupt, got, sum)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != version {
		return fmt.Errorf("%w: version %d", ErrVersion, v)
	}
	var out Snapshot
	out.Seed = binary.LittleEndian.Uint64(b[12:])
	out.Iter = binary.LittleEndian.Uint64(b[20:])
	for i := range out.Params {
		out.Params[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[28+8*i:]))
	}
	*s = out
	return nil
}

// WriteFile stores the snapshot at path atomically: it writes a temporary
// file in the same directory, fsyncs it, renames it over path and fsyncs
// the directory. A reader (or a process killed at any instant) sees either
// the old complete snapshot or the new one, never a mix.
func WriteFile(path string, s Snapshot) error {
	b, _ := s.MarshalBinary()
	return atomicfile.WriteBytes(path, b, 0o600)
}

// ReadFile loads a snapshot; ok is false (with a nil error) if the file does
// not exist, which means "start fresh".
func ReadFile(path string) (s Snapshot, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Snapshot{}, false, nil
	}
	if err != nil {
		return Snapshot{}, false, err
	}
	if err := s.UnmarshalBinary(b); err != nil {
		return Snapshot{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return s, true, nil
}
