package sched

// A binary min-heap of small entries ordered by an ordering o (o.less(a, b)
// reports that a comes first). The invariant, as in container/heap: for
// every i > 0, !o.less(h[i], h[(i-1)/2]). Init is O(n); push, pop and fix
// are O(log n) comparisons. Hand-rolled over a slice of entries to avoid
// boxing through an interface; the entry and the ordering are type
// parameters, so that each of the round's two heaps (candEntry by candOrder,
// tenantEntry by tenantOrder) gets its own code.

type ordering[E any] interface{ less(a, b E) bool }

func heapInit[E any, O ordering[E]](h []E, o O) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i, o)
	}
}

func heapPush[E any, O ordering[E]](h *[]E, x E, o O) {
	*h = append(*h, x)
	siftUp(*h, len(*h)-1, o)
}

// heapPop removes and returns the first entry. The last entry, which takes
// its place, almost always belongs near the bottom, so the hole the first
// leaves is carried down along the path of first children (one
// comparison a level instead of two) and the last entry sifted up from
// where the path ends (Floyd's bottom-up pop).
func heapPop[E any, O ordering[E]](h *[]E, o O) E {
	a := *h
	n := len(a) - 1
	x := a[0]
	last := a[n]
	a = a[:n]
	*h = a
	if n == 0 {
		return x
	}
	i := 0
	for j := 1; j < n; j = 2*i + 1 {
		if j+1 < n && o.less(a[j+1], a[j]) {
			j++
		}
		a[i] = a[j]
		i = j
	}
	for i > 0 {
		p := (i - 1) / 2
		if !o.less(last, a[p]) {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = last
	return x
}

// heapFix restores the invariant after the key of h[i] changed.
func heapFix[E any, O ordering[E]](h []E, i int, o O) {
	if !siftDown(h, i, o) {
		siftUp(h, i, o)
	}
}

func siftUp[E any, O ordering[E]](h []E, j int, o O) {
	for j > 0 {
		i := (j - 1) / 2
		if !o.less(h[j], h[i]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

// siftDown reports whether the element moved.
func siftDown[E any, O ordering[E]](h []E, i0 int, o O) bool {
	i, n := i0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && o.less(h[r], h[l]) {
			j = r
		}
		if !o.less(h[j], h[i]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
	return i > i0
}
