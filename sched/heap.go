package sched

// A tenant's candidates in a binary min-heap of candEntry ordered by
// candOrder (o.less(a, b) reports that a comes first). The invariant, as in
// container/heap: for every i > 0, !o.less(h[i], h[(i-1)/2]). Init is O(n);
// push and pop are O(log n) comparisons. Hand-rolled over the entries
// themselves, without an interface or type parameters, so that every
// comparison is a direct call the compiler may inline.

func heapInit(h []candEntry, o *candOrder) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i, o)
	}
}

func heapPush(h *[]candEntry, x candEntry, o *candOrder) {
	*h = append(*h, x)
	siftUp(*h, len(*h)-1, o)
}

// heapPop removes the first entry and returns a pointer to it, moved to
// the place just beyond the heap's new end: the entry stays valid until
// the heap grows again, and pushing it back copies it onto itself. The
// last entry, which takes its place, almost always belongs near the
// bottom, so the hole the first leaves is carried down along the path of
// first children (one comparison a level instead of two) and the last
// entry sifted up from where the path ends (Floyd's bottom-up pop).
func heapPop(h *[]candEntry, o *candOrder) *candEntry {
	a := *h
	n := len(a) - 1
	if n == 0 {
		*h = a[:0]
		return &a[0]
	}
	x := a[0]
	last := a[n]
	a = a[:n]
	*h = a
	i := 0
	for j := 1; j < n; j = 2*i + 1 {
		if j+1 < n && o.less(&a[j+1], &a[j]) {
			j++
		}
		a[i] = a[j]
		i = j
	}
	for i > 0 {
		p := (i - 1) / 2
		if !o.less(&last, &a[p]) {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = last
	p := &a[:n+1][n]
	*p = x
	return p
}

func siftUp(h []candEntry, j int, o *candOrder) {
	for j > 0 {
		i := (j - 1) / 2
		if !o.less(&h[j], &h[i]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

func siftDown(h []candEntry, i int, o *candOrder) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && o.less(&h[r], &h[l]) {
			j = r
		}
		if !o.less(&h[j], &h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}
