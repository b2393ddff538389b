package sched

// A binary min-heap of int32 indices ordered by less (less(a, b) reports that
// a comes first). The invariant, as in container/heap: for every i > 0,
// !less(h[i], h[(i-1)/2]). Init is O(n); push, pop and fix are O(log n)
// comparisons. Hand-rolled over []int32 to avoid boxing through an interface.

func heapInit(h []int32, less func(a, b int32) bool) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i, less)
	}
}

func heapPush(h *[]int32, x int32, less func(a, b int32) bool) {
	*h = append(*h, x)
	siftUp(*h, len(*h)-1, less)
}

func heapPop(h *[]int32, less func(a, b int32) bool) int32 {
	a := *h
	n := len(a) - 1
	x := a[0]
	a[0] = a[n]
	a = a[:n]
	if n > 0 {
		siftDown(a, 0, less)
	}
	*h = a
	return x
}

// heapFix restores the invariant after the key of h[i] changed.
func heapFix(h []int32, i int, less func(a, b int32) bool) {
	if !siftDown(h, i, less) {
		siftUp(h, i, less)
	}
}

func siftUp(h []int32, j int, less func(a, b int32) bool) {
	for j > 0 {
		i := (j - 1) / 2
		if !less(h[j], h[i]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

// siftDown reports whether the element moved.
func siftDown(h []int32, i0 int, less func(a, b int32) bool) bool {
	i, n := i0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && less(h[r], h[l]) {
			j = r
		}
		if !less(h[j], h[i]) {
			break
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
	return i > i0
}
