package placement

import (
	"fmt"
	"slices"
)

// The allocation index is a hash table with open addressing and linear
// probing, keyed by the 64-bit hash of the allocation id (idhash.String),
// whose slots are copy-on-write: 16 slots to a leaf, 64 leaves to a page.
// A slot holds a pointer to the allocation's record, which holds the hash
// (allocRec.h): eight bytes a slot, so that the inserts of a burst into a
// large table write half as many cache lines of slots as they would with
// the hash beside the pointer, and a table takes half the memory; a
// delete reads the records of the entries after it in its probe run that
// are not in their home slots (at most a few), and a resize every record.
// A clone copies the list of pages, one pointer per 1,024 slots, and an
// insert copies at most one page of pointers and one leaf of slots that a
// clone still shares (a delete, those its probe run crosses: rarely more
// than one). Unlike an ordered tree it moves no entries on insert
// (a delete moves back the few entries of its probe run), so an insert or
// delete costs O(1) expected — a hash, a few slot reads — instead of a
// search through O(log a) nodes and a shift of a node's entries.
//
// Beside each leaf's pointer a page keeps a tag byte per slot of the leaf
// (see slotTag), zero for an empty slot: a probe reads the tags, in pages
// that take a quarter of the memory of the slots and stay in the cache
// where the slots do not, and reads a slot only where its tag matches. A
// lookup of an id the table does not hold, such as the duplicate check
// before an insert, mostly reads no slot at all, and the insert that
// follows writes one without waiting for it to be read.
const (
	leafBits = cowChunkBits // slots per leaf: 16
	pageBits = cowArrayBits // leaves per page: 64
	slotMask = 1<<leafBits - 1
	leafMask = 1<<pageBits - 1

	// minAllocSlots is the capacity of a table's first growth: one leaf.
	minAllocSlots = 1 << leafBits
)

// allocLeaf holds 16 slots (128 bytes, two cache lines); an empty slot
// is nil.
type allocLeaf [1 << leafBits]*allocRec

// allocPage holds 64 leaves (see leafRef): a leaf is changed in place
// only by its owner.
type allocPage struct {
	leaves [1 << pageBits]leafRef
	owner  *cowToken
}

// leafRef is a page's entry for one leaf: the leaf, nil for 16 empty
// slots, its owner and the tags of its slots, 32 bytes of a cache line
// that an insert or a lookup reads, rather than the three lines of three
// arrays. (A page, 2,056 bytes, takes a block of 2,304, a multiple of 64:
// no entry straddles two lines.)
type leafRef struct {
	l     *allocLeaf
	owner *cowToken
	tags  [1 << leafBits]uint8 // slotTag of each slot's entry, 0 if empty
}

// hashTag returns the tag of hash h in a page's tags: its top six bits
// with the eighth set, never 0 (an empty slot's tag), and the seventh
// (tagHome) clear. The home slot is taken from the low bits, so slots of
// one probe run seldom share a tag.
func hashTag(h uint64) uint8 { return uint8(h>>58) | 0x80 }

// tagHome is the bit of a slot's tag that tells an entry in its home slot,
// which a delete leaves where it is without reading its record for the
// hash (see allocTable.delete).
const tagHome = 0x40

// slotTag returns the tag of an entry of hash h in slot i: hashTag(h),
// with tagHome if i is its home slot.
func (t *allocTable) slotTag(h, i uint64) uint8 {
	if h&t.mask == i {
		return hashTag(h) | tagHome
	}
	return hashTag(h)
}

// mut returns p if tok owns it, or else a copy that tok owns (the leaves
// stay shared, and keep their owners).
func (p *allocPage) mut(tok *cowToken) *allocPage {
	if p.owner == tok {
		return p
	}
	cp := *p
	cp.owner = tok
	return &cp
}

// allocTable maps allocation ids to their records. Its capacity, a power of
// two, doubles when an insert would fill more than half the slots, so that
// probe runs stay short; it never shrinks. The zero table is empty.
type allocTable struct {
	pages []*allocPage // capacity / 1,024 pages, at least one once grown
	mask  uint64       // capacity − 1; 0 before the first insert
	n     int          // entries
}

// Len returns the number of entries. O(1).
func (t *allocTable) Len() int { return t.n }

// clone returns a copy sharing every page and leaf. O(capacity / 1,024).
func (t *allocTable) clone() allocTable {
	return allocTable{pages: slices.Clone(t.pages), mask: t.mask, n: t.n}
}

// leaf returns the leaf holding slot i, or nil if it is empty (or the table
// has no slot yet).
func (t *allocTable) leaf(i uint64) *allocLeaf {
	if t.pages == nil {
		return nil
	}
	return t.ref(i).l
}

// ref returns the page entry of the leaf holding slot i; the table has
// that slot.
func (t *allocTable) ref(i uint64) *leafRef {
	return &t.pages[i>>(leafBits+pageBits)].leaves[(i>>leafBits)&leafMask]
}

// at returns slot i.
func (t *allocTable) at(i uint64) *allocRec {
	if l := t.leaf(i); l != nil {
		return l[i&slotMask]
	}
	return nil
}

// set makes e slot i (nil to empty it), copying its page and leaf first unless tok owns them.
// When tok owns both, as it does all of a table it has grown and most of
// one it has written since a clone, only the slot is written: the page's
// pointers, which a copy would change, are left alone (each write of a
// pointer costs a write-barrier check and dirties the page's cache line).
func (t *allocTable) set(tok *cowToken, i uint64, e *allocRec) {
	pi := i >> (leafBits + pageBits)
	li := (i >> leafBits) & leafMask
	var tag uint8
	if e != nil {
		tag = t.slotTag(e.h, i)
	}
	if p := t.pages[pi]; p.owner == tok {
		if r := &p.leaves[li]; r.owner == tok && r.l != nil {
			r.l[i&slotMask] = e
			r.tags[i&slotMask] = tag
			return
		}
	}
	p := t.pages[pi].mut(tok)
	t.pages[pi] = p
	r := &p.leaves[li]
	switch {
	case r.l == nil:
		if e == nil {
			return // already empty
		}
		r.l = new(allocLeaf)
	case r.owner != tok:
		cp := *r.l
		r.l = &cp
	}
	r.owner = tok
	r.l[i&slotMask] = e
	r.tags[i&slotMask] = tag
}

// find returns the slot of id (hash h) and true, or the empty slot that
// ends its probe run and false. The table has at least one slot. It reads
// the tags of the probe run, and a slot and its record only where the tag
// matches.
func (t *allocTable) find(h uint64, id string) (uint64, bool) {
	tag := hashTag(h)
	i := h & t.mask
	for {
		// Read a leaf's tags in a row, without going through the page
		// for each.
		r := t.ref(i)
		for {
			switch r.tags[i&slotMask] {
			case 0:
				return i, false
			case tag, tag | tagHome:
				if e := r.l[i&slotMask]; e.h == h && e.id == id {
					return i, true
				}
			}
			i = (i + 1) & t.mask
			if i&slotMask == 0 {
				break // next leaf
			}
		}
	}
}

// get returns the record of id, whose hash is h. O(1) expected.
func (t *allocTable) get(h uint64, id string) (*allocRec, bool) {
	if t.n == 0 {
		return nil, false
	}
	i, ok := t.find(h, id)
	if !ok {
		return nil, false
	}
	return t.at(i), true
}

// insert stores e, filed under e.h, unless an entry with its id is there
// already, and reports whether it did; tok owns what it copies. O(1)
// expected (amortized over the doublings, each O(capacity)).
func (t *allocTable) insert(tok *cowToken, e *allocRec) bool {
	i, dup := t.probe(e.h, e.id)
	if dup {
		return false
	}
	t.insertAt(tok, i, e)
	return true
}

// probe returns the slot of id (hash h) and true, or else false and the
// slot where insertAt stores an entry for id, the empty slot that ends
// its probe run (0 in a table without slots). O(1) expected.
func (t *allocTable) probe(h uint64, id string) (uint64, bool) {
	if t.pages == nil {
		return 0, false
	}
	return t.find(h, id)
}

// insertAt stores e, filed under e.h, whose id t does not hold, in slot
// i, which probe has returned for it with t unchanged since: that slot,
// without a second look, unless the table must grow first. O(1)
// amortized, as insert.
func (t *allocTable) insertAt(tok *cowToken, i uint64, e *allocRec) {
	if t.pages == nil || uint64(t.n+1)*2 > t.mask+1 {
		t.grow(tok)
		i, _ = t.find(e.h, e.id)
	}
	t.set(tok, i, e)
	t.n++
}

// grow doubles the capacity (or makes the first leaf) and stores every
// entry again. O(capacity).
func (t *allocTable) grow(tok *cowToken) {
	size := uint64(minAllocSlots)
	if t.pages != nil {
		size = 2 * (t.mask + 1)
	}
	t.resize(tok, size)
}

// reserve grows the capacity, if needed, so that n entries beyond those
// held fit without another growth: one rebuild instead of a doubling each
// time the table fills. O(capacity) if it grows, else O(1).
func (t *allocTable) reserve(tok *cowToken, n int) {
	if n <= 0 {
		return
	}
	want := 2 * uint64(t.n+n)
	if t.pages != nil && want <= t.mask+1 {
		return
	}
	size := uint64(minAllocSlots)
	for size < want {
		size <<= 1
	}
	t.resize(tok, size)
}

// resize makes the table size slots, a power of two that holds its entries
// at a load of at most one half, and stores every entry again, reading its
// hash from its record. O(capacity).
//
// Its leaves come in one array, allocated at once: a table is resized to
// fill more than a quarter of its slots (a growth doubles a table half
// full; a reservation sizes it for the entries announced), which leaves
// almost no leaf of 16 slots empty, and one allocation replaces one per
// leaf as the entries come.
func (t *allocTable) resize(tok *cowToken, size uint64) {
	old := *t
	*t = allocTable{pages: make([]*allocPage, max(size>>(leafBits+pageBits), 1)), mask: size - 1, n: old.n}
	leaves := make([]allocLeaf, max(size>>leafBits, 1))
	for i := range t.pages {
		p := &allocPage{owner: tok}
		for li := range p.leaves {
			if len(leaves) == 0 {
				break
			}
			p.leaves[li] = leafRef{l: &leaves[0], owner: tok}
			leaves = leaves[1:]
		}
		t.pages[i] = p
	}
	old.all(func(e *allocRec) bool {
		t.rehash(tok, e)
		return true
	})
}

// rehash puts e, whose id t does not hold, in the empty slot that ends its
// probe run, in a table grow has just made: tok owns every page and leaf,
// so the slots are written without the checks of set.
func (t *allocTable) rehash(tok *cowToken, e *allocRec) {
	for i := e.h & t.mask; ; {
		r := t.ref(i)
		if r.l == nil {
			r.l, r.owner = new(allocLeaf), tok
		}
		for {
			if r.tags[i&slotMask] == 0 {
				r.l[i&slotMask] = e
				r.tags[i&slotMask] = t.slotTag(e.h, i)
				return
			}
			i = (i + 1) & t.mask
			if i&slotMask == 0 {
				break // next leaf
			}
		}
	}
}

// delete removes the entry of id, whose hash is h, and returns it. The
// entries after it in its probe run move back (backward-shift deletion),
// so that no tombstone is left and every entry stays reachable from its
// home slot (read from the record of each one that is not in its home
// slot: see tagHome). O(1) expected.
func (t *allocTable) delete(tok *cowToken, h uint64, id string) (*allocRec, bool) {
	if t.n == 0 {
		return nil, false
	}
	i, ok := t.find(h, id)
	if !ok {
		return nil, false
	}
	out := t.at(i)
	for j := (i + 1) & t.mask; ; j = (j + 1) & t.mask {
		tag := t.ref(j).tags[j&slotMask]
		if tag == 0 {
			break
		}
		if tag&tagHome != 0 {
			continue // in its home slot, which lies after i: it stays
		}
		// e may fill the hole at i unless its home slot lies cyclically
		// after i and at or before j.
		e := t.at(j)
		home := e.h & t.mask
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.set(tok, i, e)
			i = j
		}
	}
	t.set(tok, i, nil)
	t.n--
	return out, true
}

// all yields every entry, in slot order. O(capacity).
func (t *allocTable) all(yield func(*allocRec) bool) {
	for _, p := range t.pages {
		for _, r := range p.leaves {
			if r.l == nil {
				continue
			}
			for _, e := range r.l {
				if e != nil && !yield(e) {
					return
				}
			}
		}
	}
}

// check verifies the table's invariants: the count, a capacity with room to
// spare, every slot's tag that of its entry (0 if empty), and every entry
// reachable from its home slot with no empty slot in between, its id
// stored once. O(capacity · probe run).
func (t *allocTable) check() error {
	size := t.mask + 1
	if t.pages == nil {
		if t.n != 0 || t.mask != 0 {
			return fmt.Errorf("placement: check: allocation table without slots counts %d entries", t.n)
		}
		return nil
	}
	if size&t.mask != 0 || size < minAllocSlots || uint64(len(t.pages)) != max(size>>(leafBits+pageBits), 1) {
		return fmt.Errorf("placement: check: allocation table of %d slots in %d pages", size, len(t.pages))
	}
	if uint64(t.n)*2 > size {
		return fmt.Errorf("placement: check: allocation table holds %d entries in %d slots", t.n, size)
	}
	n := 0
	for i := range size {
		e := t.at(i)
		want := uint8(0)
		if e != nil {
			want = t.slotTag(e.h, i)
		}
		if g := t.ref(i).tags[i&slotMask]; g != want {
			return fmt.Errorf("placement: check: allocation table slot %d has tag %#x, want %#x", i, g, want)
		}
		if e == nil {
			continue
		}
		n++
		for j := e.h & t.mask; j != i; j = (j + 1) & t.mask {
			if t.at(j) == nil {
				return fmt.Errorf("placement: check: allocation %q in slot %d is cut off from its home slot %d", e.id, i, e.h&t.mask)
			}
		}
		if k, ok := t.find(e.h, e.id); !ok || k != i {
			return fmt.Errorf("placement: check: allocation %q stored twice", e.id)
		}
	}
	if n != t.n {
		return fmt.Errorf("placement: check: allocation table counts %d entries, holds %d", t.n, n)
	}
	return nil
}
