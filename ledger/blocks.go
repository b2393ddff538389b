package ledger

// blockList holds a store's closed blocks in chunks of at most chunkLen,
// so that closing a block never copies more than one chunk. A single slice
// grown by doubling would copy the whole list now and then: for a series
// of millions of breakpoints, tens of megabytes in one event (a pause of
// milliseconds for the caller, and garbage for the collector). Trimming
// drops blocks from the front.
//
// The list is one pointer, nil while there is no closed block (most jobs'
// series never close one), so that the store, embedded in every job record
// and every account, stays small.
type blockList struct{ c *chunks }

// chunks lays the blocks out so that block i is found in O(1): first is
// the first chunk, possibly shortened from the front by trimming, and
// growing by doubling up to chunkLen while it is the only one; the chunks
// of more follow it, each exactly chunkLen long except the last.
type chunks struct {
	first []block
	more  [][]block
}

// chunkLen is the number of blocks of a chunk (3 KiB of 48-byte blocks).
const chunkLen = 64

// len returns the number of blocks. O(1).
func (l *blockList) len() int {
	c := l.c
	if c == nil {
		return 0
	}
	n := len(c.first)
	if k := len(c.more); k > 0 {
		n += (k-1)*chunkLen + len(c.more[k-1])
	}
	return n
}

// at returns block i, 0 ≤ i < len(). O(1).
func (l *blockList) at(i int) *block {
	c := l.c
	if i < len(c.first) {
		return &c.first[i]
	}
	i -= len(c.first)
	return &c.more[i/chunkLen][i%chunkLen]
}

// push appends b. O(1), copying at most chunkLen/2 blocks.
func (l *blockList) push(b block) {
	if l.c == nil {
		l.c = &chunks{first: make([]block, 0, 4)}
	}
	c := l.c
	if len(c.more) == 0 {
		switch {
		case len(c.first) < cap(c.first):
			c.first = append(c.first, b)
			return
		case len(c.first) < chunkLen:
			// double, as append does only for small slices
			grown := make([]block, len(c.first), min(2*len(c.first), chunkLen))
			copy(grown, c.first)
			c.first = append(grown, b)
			return
		}
		c.more = append(c.more, make([]block, 0, chunkLen))
	} else if len(c.more[len(c.more)-1]) == chunkLen {
		c.more = append(c.more, make([]block, 0, chunkLen))
	}
	last := &c.more[len(c.more)-1]
	*last = append(*last, b)
}

// dropFirst removes block 0, which must exist. O(1) amortized.
func (l *blockList) dropFirst() {
	c := l.c
	c.first[0] = block{} // let its bytes go
	c.first = c.first[1:]
	if len(c.first) > 0 {
		return
	}
	if len(c.more) == 0 {
		l.c = nil
		return
	}
	c.first, c.more[0] = c.more[0], nil
	c.more = c.more[1:]
}
