// Package idhash hashes job and node ids for the tables and indexes of the
// core packages, and compares ids the way their tables and the simulator's
// scans do (Equal).
//
// The hash is fixed, not seeded: a table's layout, and so the time its
// operations take, is the same on every run, which keeps benchmarks and
// simulations repeatable. It never decides which ids are equal — every
// user compares the ids themselves on a hash match — so a collision costs
// time, never correctness.
package idhash

import "math/bits"

// String returns a 64-bit hash of s. It reads s eight bytes at a time (the
// last word overlapping the one before) and mixes each word by a
// 64×64→128-bit multiplication folded to 64 bits; ids are short, so this is
// several times cheaper than a call to maphash.String. O(len(s)).
func String(s string) uint64 {
	const (
		k0 = 0xa0761d6478bd642f
		k1 = 0xe7037ed1a0b428db
	)
	n := len(s)
	h := seed ^ uint64(n)*k0
	switch {
	case n >= 8:
		last := s[n-8:]
		for len(s) > 8 {
			h = mix(h^le64(s), k1)
			s = s[8:]
		}
		h = mix(h^le64(last), k1)
	case n >= 4:
		h = mix(h^(le32(s)<<32|le32(s[n-4:])), k1)
	case n > 0:
		h = mix(h^(uint64(s[0])<<16|uint64(s[n>>1])<<8|uint64(s[n-1])), k1)
	}
	return mix(h, k0)
}

// seed starts every hash: any odd constant does.
const seed = 0x8ebc6af09c88c6e3

// le64 and le32 read the first 8 and 4 bytes of s, little-endian.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint64 {
	_ = s[3]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
}

// mix folds the 128-bit product of a and b to 64 bits.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// Equal reports whether a == b, comparing the lengths and the last bytes
// first. The ids of one trace or one cluster often share a length and a
// long prefix, a number following it, so most unequal ids differ in the
// last byte and cost no call of the runtime's comparison. O(len(a)).
func Equal(a, b string) bool {
	n := len(a)
	return n == len(b) && (n == 0 || a[n-1] == b[n-1]) && a == b
}
