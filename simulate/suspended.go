package simulate

import (
	"cmp"
	"fmt"
	"iter"
	"math/bits"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/sched"
)

// suspGroup is the trimmer's lasting record of the suspended waiting jobs
// (they ran before) of one tenant and demand, where the engine calls the
// policy itself: the engine reports each such job as it starts and stops
// waiting (see trimmer.suspend and trimmer.resume), so that a round finds
// the groups made instead of sorting every waiting job into its group, and
// reads the jobs' lower bounds on ρ_job in increasing order from a list
// sorted once for many rounds instead of computing every one of them.
//
// The keys are lower bounds on ρ_job valid for every round whose clock is
// in [from, until]: the bound of waiting.bound taken at until, which is at
// most the bound at any earlier time (the fair share only grows, by at
// most the demand per second, and the margin only widens). A member keeps
// its memo's lower bound while it waits: it holds no GPUs and gets no
// lease until it leaves the group.
type suspGroup struct {
	tenant string
	demand int
	self   int32 // its index in trimmer.susp
	gi, gz int32 // the round's groups (tenant, demand) and (tenant, 0)
	// jobs are the members; each one's six is its index. jobs[:keyed]
	// have an entry in keys, the others (loose) have none.
	jobs  []*waiting
	keyed int
	// keys are ascending by bound; an entry whose job is no longer a
	// keyed member of this group (it left, or left and came back loose)
	// is skipped.
	keys        []boundRef
	from, until time.Duration
}

// suspHorizon is how long the keys of a group serve before they are made
// again from the memos: longer saves making them, shorter keeps them
// close to the bounds of the moment (fewer keys passed over, fewer
// accounts read). On the Philly snapshot (140 × 8 GPUs, one run) 2
// minutes costs the fewest instructions: 1½ to 3 minutes are within
// 0.2 % of it, 5 minutes cost 0.6 % more, 8 minutes 1.4 % more.
const suspHorizon = 2 * time.Minute

// holds reports whether w is a keyed member of g (its entry in keys is
// live).
func (g *suspGroup) holds(w *waiting) bool { return w.sg == g.self && int(w.six) < g.keyed }

// put moves the member at index from to index to.
func (g *suspGroup) put(from, to int) {
	g.jobs[to] = g.jobs[from]
	g.jobs[to].six = int32(to)
}

// attach readies the trimmer for a run whose engine reports the suspended
// jobs (every group empty).
func (t *trimmer) attach() {
	clear(t.held)
	for i := range t.susp {
		g := &t.susp[i]
		clear(g.jobs)
		g.jobs, g.keyed = g.jobs[:0], 0
		clear(g.keys)
		g.keys, g.from, g.until = g.keys[:0], 0, -1
	}
}

// suspend records that js, which ran before, waits again. O(1) amortized.
func (t *trimmer) suspend(js *JobState) {
	w := t.wait(js)
	k := trimKey{tenant: js.Job.Tenant, demand: w.gpus}
	si, added := keyIndex(&t.suspIx, k, len(t.susp))
	if added {
		t.susp = append(t.susp, suspGroup{tenant: k.tenant, demand: k.demand, self: si,
			gi: t.group(k.tenant, k.demand, false), gz: t.group(k.tenant, 0, false), until: -1})
	}
	g := &t.susp[si]
	w.sg, w.six = si, int32(len(g.jobs))
	g.jobs = append(g.jobs, w) // loose until the group's keys are made again
	if len(g.jobs) == 1 {
		word := int(si) / 64
		if word >= len(t.held) {
			t.held = append(t.held, make([]uint64, word+1-len(t.held))...)
		}
		t.held[word] |= 1 << (uint(si) % 64)
	}
}

// resume records that js, suspended, no longer waits (it was granted).
// O(1).
func (t *trimmer) resume(js *JobState) {
	w := &js.trim
	if w.owner != t || w.js != js || w.sg < 0 {
		return
	}
	g := &t.susp[w.sg]
	i, last := int(w.six), len(g.jobs)-1
	if i < g.keyed {
		// The keyed members stay in front.
		k := g.keyed - 1
		g.put(k, i)
		if last != k {
			g.put(last, k)
		}
		g.keyed--
	} else {
		g.put(last, i)
	}
	g.jobs[last] = nil
	g.jobs = g.jobs[:last]
	if last == 0 {
		t.held[w.sg/64] &^= 1 << (uint(w.sg) % 64)
	}
	w.sg, w.six = -1, -1
}

// checkSuspended reports whether the groups hold exactly the suspended jobs
// of pending, each at its index.
func (t *trimmer) checkSuspended(pending []*JobState) error {
	n := 0
	for _, js := range pending {
		if !js.Ran {
			continue
		}
		n++
		w := &js.trim
		if w.owner != t || w.js != js || w.sg < 0 || int(w.sg) >= len(t.susp) {
			return fmt.Errorf("suspended job %s is in no group", js.Job.ID)
		}
		g := &t.susp[w.sg]
		if g.tenant != js.Job.Tenant || g.demand != js.Job.GPUs || int(w.six) >= len(g.jobs) || g.jobs[w.six] != w {
			return fmt.Errorf("suspended job %s is not at its place in group (%s, %d)", js.Job.ID, g.tenant, g.demand)
		}
	}
	for i := range t.susp {
		n -= len(t.susp[i].jobs)
		if held := i/64 < len(t.held) && t.held[i/64]&(1<<(uint(i)%64)) != 0; held != (len(t.susp[i].jobs) > 0) {
			return fmt.Errorf("group (%s, %d) has %d members, marked as held: %v", t.susp[i].tenant, t.susp[i].demand, len(t.susp[i].jobs), held)
		}
		if k := t.susp[i].keyed; k > len(t.susp[i].jobs) {
			return fmt.Errorf("group (%s, %d) has %d keyed members of %d", t.susp[i].tenant, t.susp[i].demand, k, len(t.susp[i].jobs))
		}
	}
	if n != 0 {
		return fmt.Errorf("the groups of suspended jobs hold %d more than the pending list", -n)
	}
	return nil
}

// overBest is a tenant's first suspended job so far among its demands
// above F (selectSuspended).
type overBest struct {
	gz int32
	o  oldJob
}

// selectSuspended is selectOld over the lasting groups: the same jobs, in
// no particular order. A group whose demand is above F gives its first
// job, and the tenant's first of these is kept.
func (t *trimmer) selectSuspended(acc sched.Accounts, now time.Time) []*JobState {
	clock := t.clock(now)
	over := t.over[:0]
	for i := range t.heldGroups() {
		g := &t.susp[i]
		if g.demand > t.free {
			if t.blocked[g.gz] {
				continue
			}
			var o oldJob
			if len(g.jobs) == 1 {
				o = g.jobs[0].read(acc, clock)
			} else {
				o = t.firstKeyed(acc, clock, g, 1)[0]
				t.clearRanked()
			}
			k := slices.IndexFunc(over, func(b overBest) bool { return b.gz == g.gz })
			switch {
			case k < 0:
				over = append(over, overBest{gz: g.gz, o: o})
			case oldBefore(&o, &over[k].o):
				over[k].o = o
			}
			continue
		}
		n := t.limit(g.demand) + 1 - int(t.counts[g.gi])
		if n <= 0 {
			continue
		}
		if len(g.jobs) <= n {
			for _, w := range g.jobs {
				t.kept = append(t.kept, w.js)
			}
			continue
		}
		for _, o := range t.firstKeyed(acc, clock, g, n) {
			t.keepRead(o)
		}
		t.clearRanked()
	}
	for _, b := range over {
		t.keepRead(b.o)
	}
	wipe(over)
	t.over = over[:0]
	return t.kept
}

// heldGroups yields the indices of the groups with members, in increasing
// order: O(groups ÷ 64 + groups with members).
func (t *trimmer) heldGroups() iter.Seq[int] {
	return func(yield func(int) bool) {
		for k, word := range t.held {
			for word != 0 {
				b := bits.TrailingZeros64(word)
				word &= word - 1
				if !yield(64*k + b) {
					return
				}
			}
		}
	}
}

// keepRead keeps o, and its account if it was read this round.
func (t *trimmer) keepRead(o oldJob) {
	t.kept = append(t.kept, o.js)
	if o.w != nil {
		m := &o.w.memo
		t.reads = append(t.reads, readAccount{id: o.js.Job.ID, a: ledger.Account{Alloc: ledger.GPUSeconds(m.alloc), FairShare: ledger.GPUSeconds(m.fair), Rho: o.rho}})
	}
}

// clearRanked empties firstOld's scratch.
func (t *trimmer) clearRanked() {
	wipe(t.ranked)
	t.ranked = t.ranked[:0]
	wipe(t.bounded)
	t.bounded = t.bounded[:0]
}

// firstKeyed returns the n first members of g (n < len(g.jobs)) in Phase 2
// order, as firstOld does, reading the loose members as firstOld would and
// the keyed ones in increasing order of their keys, merged with the loose
// bounds: it stops at the first bound above τ, the n-th ρ read so far,
// and passes over a keyed member whose bound now is above τ. The keys are
// made again first when they do not serve this round. O(loose log loose +
// r) for r keys passed, plus O(len(g.jobs) log len(g.jobs)) when the keys are
// made.
func (t *trimmer) firstKeyed(acc sched.Accounts, now roundClock, g *suspGroup, n int) []oldJob {
	loose := len(g.jobs) - g.keyed
	if !now.exact || now.at < g.from || now.at > g.until || len(g.keys) > 2*g.keyed+16 || loose > 8 && loose > g.keyed/4 {
		t.rekey(g, now)
	}
	read, bounded, first := t.split(acc, now, g.jobs[g.keyed:], n)
	sortBounds(bounded)
	keys := g.keys
	for i, j := 0, 0; ; {
		for j < len(keys) && !g.holds(keys[j].w) {
			j++
		}
		var b boundRef
		switch {
		case i < len(bounded) && (j == len(keys) || !(keys[j].lo < bounded[i].lo)):
			b = bounded[i]
			i++
		case j < len(keys):
			b = keys[j]
			j++
			if len(read) >= n && !(b.lo > read[0].rho) {
				// Its bound now may already place it behind τ.
				if lo, ok := b.w.bound(now); ok && lo > read[0].rho {
					continue
				}
			}
		default:
			t.ranked = read[:max(first, len(read))]
			return read
		}
		var stop bool
		if read, stop = t.readBounded(acc, now, read, n, b); stop {
			t.ranked = read[:max(first, len(read))]
			return read
		}
	}
}

// rekey makes g's keys from its members' memos, valid until now plus
// suspHorizon (or trimmer.horizon), and puts the keyed members in front.
// O(len(g.jobs) log len(g.jobs)).
func (t *trimmer) rekey(g *suspGroup, now roundClock) {
	clear(g.keys)
	keys, k := g.keys[:0], 0
	h := cmp.Or(t.horizon, suspHorizon)
	until := now.at + h
	g.from, g.until = now.at, until
	if !now.exact || until < now.at {
		g.keys, g.keyed, g.until = keys, 0, -1 // none serve
		return
	}
	scale := max(now.scale, marginScale(now.now.Add(h)))
	for i, w := range g.jobs {
		m := &w.memo
		if !m.settled || !m.sameLeases(w.js) || m.at > now.at || until-m.at < 0 {
			continue
		}
		d := float64(w.gpus)
		keys = append(keys, boundRef{lo: lowRho(m.alloc, m.fair+d*(until-m.at).Seconds(), d, scale), w: w})
		if i != k {
			x := g.jobs[k]
			g.put(i, k)
			g.jobs[i], x.six = x, int32(i)
		}
		k++
	}
	sortBounds(keys)
	g.keys, g.keyed = keys, k
}

// sortBounds sorts h by increasing bound, in the order of ledger.Rho's
// Compare (a NaN first), as slices.SortFunc with that comparator would,
// except that equal bounds may come in another order (the rounds read
// them in any order): a quicksort whose comparisons are inlined, where
// slices.SortFunc calls a function for each. Groups are sorted when their
// keys are made, which is the trimmer's largest cost after its reads.
// O(len(h) log len(h)) expected; a part that recurses too deep (an
// unlucky pivot again and again) is left to slices.SortFunc, which keeps
// the worst case at O(len(h) log len(h)).
func sortBounds(h []boundRef) {
	sortBoundsDepth(h, 2*bits.Len(uint(len(h))))
}

func sortBoundsDepth(h []boundRef, depth int) {
	for len(h) > 12 {
		if depth == 0 {
			slices.SortFunc(h, func(x, y boundRef) int { return x.lo.Compare(y.lo) })
			return
		}
		depth--
		// The median of the first, middle and last bounds, at the middle.
		n, m := len(h)-1, (len(h)-1)/2
		if cmp.Less(h[m].lo, h[0].lo) {
			h[m], h[0] = h[0], h[m]
		}
		if cmp.Less(h[n].lo, h[m].lo) {
			h[n], h[m] = h[m], h[n]
			if cmp.Less(h[m].lo, h[0].lo) {
				h[m], h[0] = h[0], h[m]
			}
		}
		// Hoare's partition around the pivot's value: h[:j+1] holds no
		// bound above it, h[j+1:] none below, and neither is empty (the
		// pivot is the lower middle).
		p := h[m].lo
		i, j := -1, len(h)
		for {
			for i++; cmp.Less(h[i].lo, p); i++ {
			}
			for j--; cmp.Less(p, h[j].lo); j-- {
			}
			if i >= j {
				break
			}
			h[i], h[j] = h[j], h[i]
		}
		// Recurse into the smaller part, loop on the larger.
		if j+1 < len(h)-(j+1) {
			sortBoundsDepth(h[:j+1], depth)
			h = h[j+1:]
		} else {
			sortBoundsDepth(h[j+1:], depth)
			h = h[:j+1]
		}
	}
	for i := 1; i < len(h); i++ {
		for k := i; k > 0 && cmp.Less(h[k].lo, h[k-1].lo); k-- {
			h[k], h[k-1] = h[k-1], h[k]
		}
	}
}
