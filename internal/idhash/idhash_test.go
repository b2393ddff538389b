package idhash

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestStringIsFixed pins a few values, one for each way the id's bytes
// are read: the hash must not change between runs or builds, or a table's
// layout (and a benchmark's timing) would.
func TestStringIsFixed(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want uint64
	}{
		{"", 0xe28f2b2061a2b984},
		{"a", 0xb40a13105e9a029b},
		{"job-1", 0xa35bf963b437a58a},
		{"big/000123", 0x1f469af38afcc1e3},
		{strings.Repeat("x", 33), 0x446ad1d4e989481b},
	} {
		if got := String(strings.Clone(tc.s)); got != tc.want {
			t.Errorf("String(%q) = %#x, want %#x", tc.s, got, tc.want)
		}
	}
}

// TestStringSeparatesIDs hashes ids of every length from 0 to 40 that
// share long prefixes and differ in one byte anywhere (the shapes generated
// ids have), and requires no two to collide: every byte position, in each
// branch of the word reads, reaches the result.
func TestStringSeparatesIDs(t *testing.T) {
	seen := make(map[uint64]string)
	add := func(s string) {
		h := String(s)
		if o, dup := seen[h]; dup && o != s {
			t.Fatalf("String(%q) = String(%q) = %#x", s, o, h)
		}
		seen[h] = s
	}
	for n := 0; n <= 40; n++ {
		base := strings.Repeat("j", n)
		add(base)
		for i := range n {
			for _, c := range []byte{'0', '1', 'k', 0, 0xff} {
				b := []byte(base)
				b[i] = c
				add(string(b))
			}
		}
	}
	for i := range 200_000 {
		add(fmt.Sprintf("tenant-%03d/job-%06d", i%1000, i))
	}
}

// TestStringSpreadsLowBits checks that the low bits, which an open
// addressing table indexes by, are spread evenly over sequential ids.
func TestStringSpreadsLowBits(t *testing.T) {
	const buckets, ids = 1 << 10, 1 << 16
	var count [buckets]int
	for i := range ids {
		count[String(fmt.Sprintf("job-%d", i))%buckets]++
	}
	for b, c := range count {
		if c < ids/buckets/2 || c > ids/buckets*2 {
			t.Fatalf("bucket %d holds %d of %d ids, expected about %d", b, c, ids, ids/buckets)
		}
	}
}

// Equal is string equality: for empty ids, for a string and its copy, and
// for ids that share their length and last byte, or a long prefix, or both.
func TestPropertyEqualIsEquality(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alphabet := rapid.SampledFrom([]string{"", "a", "b", "ab", "ba", "aab", "bab", "tenant-", "application_1_1", "application_2_1"})
		a, b := alphabet.Draw(t, "a"), alphabet.Draw(t, "b")
		if rapid.Bool().Draw(t, "suffix") {
			s := rapid.StringMatching(`[0-9a-c]{0,3}`).Draw(t, "s")
			a, b = a+s, b+s
		}
		if got := Equal(a, b); got != (a == b) {
			t.Fatalf("Equal(%q, %q) = %v", a, b, got)
		}
		if c := strings.Clone(a); !Equal(a, c) {
			t.Fatalf("Equal(%q, its copy) is false", a)
		}
	})
}

// Equal tells apart ids of every length from 0 to 40 that differ in one
// byte anywhere, and finds each equal to its copy: every byte position, in
// each branch of the word reads, takes part in the comparison.
func TestEqualReadsEveryByte(t *testing.T) {
	for n := 0; n <= 40; n++ {
		base := strings.Repeat("j", n)
		if !Equal(base, strings.Clone(base)) {
			t.Fatalf("Equal(%q, its copy) is false", base)
		}
		for i := range n {
			b := []byte(base)
			b[i] = 'k'
			if Equal(base, string(b)) || Equal(string(b), base) {
				t.Fatalf("Equal(%q, %q) is true", base, b)
			}
		}
	}
}
