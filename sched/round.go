package sched

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/internal/idhash"
	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
)

// Optional faces of a Placer that a round uses when they are present.
type (
	// allocationer lets a round check that the running candidates hold what
	// they say (placement.Cluster implements it).
	allocationer interface {
		Allocation(id string) (placement.Placement, bool)
	}
	// holder checks the same without copying the placement
	// (placement.Cluster implements it).
	holder interface {
		Holds(id string, p placement.Placement) bool
	}
	// freeCounter lets a round stop as soon as no GPU is left.
	freeCounter interface{ Free() int }
	// withoutPlacer places as if some allocations were released, leaving
	// them as they are (placement.Cluster implements it).
	withoutPlacer interface {
		PlaceWithout(demand int, ids []string) (placement.Placement, error)
	}
	// clusterCloner copies a placement.Cluster (or a type embedding one),
	// whose node count says what a copy costs.
	clusterCloner interface {
		Clone() *placement.Cluster
		Len() int
	}
	// allocReserver makes room for the allocations a round is about to
	// make (placement.Cluster implements it).
	allocReserver interface{ ReserveAllocations(n int) }
)

// Cloner is an optional face of a Placer: an independent copy of its state.
// A round uses a copy (taken at most once) as its optimistic view, in which
// the expiring jobs not yet decided are released. Without one, a Placer
// with placement.Cluster's PlaceWithout method takes each look in one call,
// which frees and holds again those jobs' GPUs without releasing and
// allocating them: O(slots of the expiring jobs) node updates per look, no
// allocation index update, no copy of their placements. Any other Placer
// gets the same view by releasing those jobs for a moment, O(expiring jobs)
// placer operations per look.
//
// A *placement.Cluster, or a type embedding one, is looked at with
// PlaceWithout until the round's looks have marked as many slots as the
// cluster has nodes, and copied then (Clone): a round on a small cluster,
// or with few expiring jobs, takes few looks (a demand that failed one is
// not looked at again) and does not pay for a copy, whose cost goes on
// after the copying: both clusters then copy the pages they write. The
// answers are the same either way.
type Cloner interface {
	ClonePlacer() placement.Placer
}

type status uint8

const (
	pending status = iota
	granted
	renewed
)

// cand is the round's state of candidate i (r.in[i]), with the hash of
// its job id (which placement.Cluster.AssignHashed takes, so that a grant
// does not read the id's bytes again): 24 bytes, without a pointer, so
// that the garbage collector never scans the round's largest array and a
// round of 100,000 candidates keeps it in 2.4 MB. Its reward lives in its
// heap entry (candEntry). The candidate that preempted it, if any, is by,
// in the padding the other fields leave, so that a round keeps no table
// of preemptions to clear.
type cand struct {
	h       uint64 // idhash.String(string(r.in[i].Job)), which is placement.IDHash
	reason  int32  // 1 + index into round.reasons; 0 = none (candidates failing alike share one)
	tenant  int32
	status  status
	moved   bool  // a running candidate whose GPUs were granted to another
	freed   bool  // a running candidate released from the placer
	running bool  // r.in[i].Running, which finish reads of every candidate
	by      int32 // the candidate granted its GPUs, if moved
}

type tenantRec struct {
	st      TenantState
	heap    []candEntry // built by prepare
	end     int32       // where the tenant's candidates end in byTenant, after the previous tenant's
	out     bool
	ready   bool  // job accounts read, rewards computed, heap built
	blocked int32 // the pick that did not fit in the fair stage, or -1
	reason  Reason
	waiting int // candidates left without a lease
}

// ownerSlot is one slot of a running candidate's placement, under the hash
// of its node's id: victims finds the holders of a placement's GPUs by
// looking up each of its nodes among the slots sorted by that hash (a map
// of GPUs would hash and store every GPU of every running candidate).
type ownerSlot struct {
	h    uint64 // idhash.String(node)
	node string
	gpus []int
	e    int32 // the running candidate
}

type round struct {
	opts   Options
	lease  float64 // seconds
	leaseD time.Duration
	in     []Candidate
	cands  []cand
	// The candidates' rewards, set by prepare: the first two components
	// and the length in the candidates' heap entries (candEntry), whole
	// rewards of more than two components also in rest, which exists only
	// in a round whose reward gives such scores (hasRest); a candidate
	// whose reward is shorter reads 0 there, as Score.Compare counts a
	// missing component.
	rest    []Score
	hasRest bool
	running []int32 // indices of running candidates, in input order
	tenants []tenantRec
	reasons []Reason

	accounts Accounts
	batch    JobAccountsAppender // accounts, if it looks up many at once
	reward   Reward
	candLT   candOrder
	tt       tenantTree // Phase 1's queue
	ht       hierTree   // Phase 1's queue instead with Options.Parent

	p       placement.Placer
	a       placement.Placer   // optimistic view; nil until first needed or without a clone
	cloner  Cloner             // the Placer's ClonePlacer, if any
	ccl     clusterCloner      // else its Clone, if any
	free    freeCounter        // the Placer's Free, if any (a method value would cost an allocation a round)
	cl      *placement.Cluster // the Placer, if it is a Cluster itself
	without withoutPlacer      // the Placer's PlaceWithout, if any
	looks   []string           // the ids released for an optimistic look
	marked  int                // slots the round's PlaceWithout looks have marked free
	expHeld int                // GPUs held by running candidates not yet decided
	// GPUs granted so far (new and renewed), for growGrants' estimate
	grantedGPUs int
	owners      []ownerSlot // the running candidates' slots, sorted by h, once optimisticPlace needs them; empty until then
	// The demands that failed in the current state, with the index (1 +)
	// of their reason in reasons: below 64 GPUs in a bit set and an array,
	// larger ones in a map.
	memoBits  uint64
	memoSmall [64]int32
	memo      map[ledger.GPUs]int32
	full      bool
	steps     int
	touched   byte // what prepare's touching loop read, kept so that the loop is not dropped
	res       Result

	// buffers kept by a Rounder across rounds
	ids        idSet
	tenantIDs  tenantSet
	counts     []int32
	heaps      []candEntry // the tenants' heaps, r.heapsUsed of them taken by prepare
	heapsUsed  int
	byTenant   []int32 // the candidates' indices, grouped by tenant (see tenantRec.end)
	grants     []Grant
	waiting    []Wait
	released   []Release
	tenantRes  []TenantResult
	preempts   []ledger.JobID // the grants' Preempts
	victimBuf  []int32        // victims' answer, valid until its next call
	batchIDs   []ledger.JobID // a tenant's job ids for batch (cleared after use)
	batchAccts []ledger.Account
}

// Rounder runs rounds like [Round] but keeps its working memory from one
// round to the next, so that a scheduler calling it every few seconds does
// not allocate in proportion to its candidates each time. The slices of the
// Result it returns are reused by its next round: copy what must outlive
// it. The zero value is ready to use; a Rounder is not safe for concurrent
// use.
type Rounder struct{ r round }

// Round runs one round; see the function [Round] for what it does and costs.
// The returned Result is valid until the next call.
func (x *Rounder) Round(in Input, opts Options) (Result, error) { return x.round(in, opts, false) }

// Plan runs a round like [Rounder.Round] and returns the same Result, but
// leaves the Placer as it found it: the new grants are released and the
// running jobs the round released are allocated again. A scheduler that
// applies a Result itself (a simulator, a controller that binds the jobs)
// plans on its live Placer, then, rather than on a copy, which on a
// placement.Cluster costs more than the copy: both clusters copy the
// pages they write next. The undo costs O(grants + released jobs) placer
// operations. If the Placer refuses an undo the plan fails with ErrPlacer
// naming the job, the rest of the undo done.
func (x *Rounder) Plan(in Input, opts Options) (Result, error) { return x.round(in, opts, true) }

func (x *Rounder) round(in Input, opts Options, plan bool) (Result, error) {
	r := &x.r
	if err := r.init(in, opts); err != nil {
		r.keep() // init may have taken some of in before it stopped
		return Result{}, err
	}
	err := r.run()
	if err == nil && plan {
		err = r.undo()
	} else if err != nil {
		_ = r.undo() // the round's error is the one to report
	}
	if err != nil {
		clear(r.res.Grants) // the caller never sees them
		r.res.Grants = r.res.Grants[:0]
		r.keep()
		return Result{}, err
	}
	res := r.res
	r.keep()
	return res, nil
}

// Round runs one two-phase ASTRAEA scheduling round (the paper's Algorithm
// with Phase 1 over tenants and Phase 2 inside the chosen tenant) and returns
// the grants and, for every candidate not served, why.
//
// The fair stage repeats, while some tenant is in play and a GPU is left:
//
//   - Phase 1: the first tenant in [Options.TenantOrder] (lowest pre-credited
//     ρ_tenant, then id) among the tenants in play.
//   - Phase 2: its candidate with the highest [Options.Reward] (ties by
//     [Options.TieBreak], then job id).
//   - A running candidate is renewed in place. A new candidate is placed on
//     GPUs that are free now; failing that, on GPUs that would be free if the
//     expiring jobs not yet decided were released (the optimistic view), and
//     exactly those of them whose GPUs it uses are preempted: released from
//     the Placer at once and listed in [Grant.Preempts] and
//     [Result.Released]. A new job therefore never lands on GPUs held by a
//     job that is not released. A preempted job stays a candidate of its
//     tenant, now without GPUs: when its turn comes it is placed like a new
//     job (a migration: checkpoint, release, restore elsewhere), or waits.
//   - After a grant the tenant's Alloc is pre-credited by demand × lease and
//     its ρ recomputed. If the pick does not fit even in the optimistic view,
//     the tenant leaves play for the round ([TenantResult.OutOfPlay]) and the
//     round goes on with the others: a tenant never blocks another.
//
// Then, unless [Options.NoBackfill], the backfill stage visits the tenants
// that left play in the same order and tries every remaining candidate,
// skipping those that do not fit one by one; so after a round no waiting
// candidate fits on the Placer (work conservation). Finally every expiring
// job that was neither renewed nor preempted is released.
//
// A demand that did not fit is not tried again in the round: the GPUs a
// round can use (free, or held by undecided expiring jobs) only shrink as
// it goes, so it would not fit later either. Every candidate of that
// demand tried later waits for the reason it first failed. This asks of
// the Placer what placement.Cluster does in every mode: whether a demand
// fits depends only on the GPUs free, and fewer free GPUs never make it
// fit. On a full cluster a round so costs one placer call per distinct
// demand, not one per grant and demand.
//
// Everything is deterministic: no map is iterated for order, every order ends
// in an id, and the order of Input.Candidates does not change the decisions.
// Invalid input (see the Err variables) is rejected before the Placer is
// touched, with two exceptions found only when the round reaches them: a job
// without an account ([ErrUnknownJob]; job accounts are read per tenant, when
// Phase 1 first reaches the tenant) and a pending candidate that already
// holds GPUs under its id ([ErrInvalidCandidate]). In those cases, and if the
// Placer itself fails mid-round ([ErrPlacer]), the round undoes its
// allocations and releases before it returns, so a rejected round leaves the
// Placer as it was.
//
// Complexity, for n candidates, T tenants with candidates, g decisions
// (grants and failed picks, g ≤ n) and placer operations of cost π (O(log
// nodes) for placement.Cluster): O(n) validation and result, O(T) tenant
// account lookups, O(m) job account lookups, reward calls and heap
// construction for the m candidates of the tenants the round reaches (once
// the cluster is full the others are not read at all), and
// O(g (log n + log T + π)) for the loops. The optimistic view is built at
// most once, in O(e π) for e expiring jobs plus one copy of the Placer
// (O(levels + (nodes + domains)/64) for placement.Cluster), when a new job
// first does not fit on the free GPUs while expiring jobs are undecided.
//
// Round allocates its working memory for this call alone; a scheduler that
// runs a round every few seconds keeps a [Rounder] instead, which reuses it.
// (A package-level pool would save the same allocations, but the package
// keeps no state between calls that the caller does not own.)
func Round(in Input, opts Options) (Result, error) {
	var x Rounder
	return x.Round(in, opts)
}

// keep stores the result's slices for the next round and drops every
// reference to the caller's data.
func (r *round) keep() {
	r.keepGrants()
	if cap(r.res.Waiting) > cap(r.waiting) {
		r.waiting = r.res.Waiting
	}
	if cap(r.res.Released) > cap(r.released) {
		r.released = r.res.Released
	}
	if cap(r.res.Tenants) > cap(r.tenantRes) {
		r.tenantRes = r.res.Tenants
	}
	r.res = Result{}
	r.accounts, r.batch, r.reward, r.opts = nil, nil, nil, Options{}
	r.candLT = candOrder{}
	r.tt.tenants, r.tt.order = nil, nil
	r.ht.tenants, r.ht.order = nil, nil
	clear(r.ht.ix)
	r.p, r.a, r.cloner, r.ccl, r.free, r.cl, r.without = nil, nil, nil, nil, nil, nil, nil
	r.in = nil
	// The entries prepare filled hold job ids.
	clear(r.heaps[:r.heapsUsed])
	r.heapsUsed = 0
	r.ids.names = nil
	clear(r.tenantIDs.ids)
	clear(r.owners) // the callers' node ids and GPU lists
	r.owners = r.owners[:0]
}

// keepGrants keeps the array of the round's grants for the next round,
// keeping zero every entry past its length: grant writes every field of an
// entry, so a round starts on the array without clearing the last round's
// grants (megabytes, in a round of tens of thousands), and at its end clears
// only those of the last round's that it did not overwrite.
func (r *round) keepGrants() {
	g := r.res.Grants
	switch {
	case cap(g) > 0 && cap(g) == cap(r.grants) && &g[:1][0] == &r.grants[:1][0]:
		if n := len(r.grants); len(g) < n {
			clear(g[len(g):n])
		}
		r.grants = g
	case cap(g) > cap(r.grants): // a larger array, zero past len(g)
		r.grants = g
	}
}

// init prepares the round for in, reusing the buffers of earlier rounds.
func (r *round) init(in Input, opts Options) error {
	if in.Accounts == nil {
		return &Error{Index: -1, Err: ErrInvalidInput, Msg: "nil Accounts"}
	}
	if in.Placer == nil {
		return &Error{Index: -1, Err: ErrInvalidInput, Msg: "nil Placer"}
	}
	if in.Lease <= 0 {
		return &Error{Index: -1, Err: ErrInvalidInput, Msg: fmt.Sprintf("lease %v is not positive", in.Lease)}
	}
	if n := len(in.Candidates); n > math.MaxInt32 {
		// The round indexes candidates with int32s.
		return &Error{Index: -1, Err: ErrInvalidInput, Msg: fmt.Sprintf("%d candidates, more than %d", n, math.MaxInt32)}
	}
	var rater FairRater
	if opts.AdvanceFairShare {
		var ok bool
		if rater, ok = in.Accounts.(FairRater); !ok {
			return &Error{Index: -1, Err: ErrNoFairRate, Msg: "AdvanceFairShare needs Accounts with TenantFairRate"}
		}
	}
	r.opts, r.lease, r.leaseD, r.p = opts, in.Lease.Seconds(), in.Lease, in.Placer
	r.a, r.cloner, r.ccl, r.free, r.cl, r.expHeld, r.marked, r.full, r.steps = nil, nil, nil, nil, nil, 0, 0, false, 0
	r.hasRest = false
	r.grantedGPUs = 0
	r.running = r.running[:0]
	clear(r.tenants)
	r.tenants = r.tenants[:0]
	clear(r.reasons)
	r.reasons = r.reasons[:0]
	clear(r.preempts)
	r.preempts = r.preempts[:0]
	r.forgetFailures()
	r.accounts, r.reward = in.Accounts, opts.Reward
	r.batch, _ = in.Accounts.(JobAccountsAppender)
	if r.reward == nil {
		r.reward = NegJobRho
	}
	switch p := in.Placer.(type) {
	case Cloner:
		r.cloner = p
	case clusterCloner: // *placement.Cluster, or a type embedding it
		r.ccl = p
	}
	r.free, _ = in.Placer.(freeCounter)
	r.without, _ = in.Placer.(withoutPlacer)
	// Place and Allocate in one step, checking nothing twice; only on a
	// Cluster itself, since a type embedding one may override Allocate.
	if c, ok := in.Placer.(*placement.Cluster); ok {
		r.cl = c
	}
	alloc, _ := in.Placer.(allocationer)
	hold, _ := in.Placer.(holder)

	n := len(in.Candidates)
	r.in = in.Candidates
	r.cands = resize(r.cands, n)
	ids := &r.ids
	ids.begin(in.Candidates)
	tenantIDs := &r.tenantIDs
	tenantIDs.reset()
	var lastTenant int32
	var lastID ledger.TenantID
	counts := r.counts[:0]
	pending, pendingGPUs := 0, 0.0 // candidates not running, and their demand
	for i := range in.Candidates {
		c := &in.Candidates[i]
		switch {
		case c.Job == "":
			return r.badCandidate(i, ErrInvalidCandidate, "empty job id")
		case c.Tenant == "":
			return r.badCandidate(i, ErrInvalidCandidate, "empty tenant id")
		case c.Demand <= 0:
			return r.badCandidate(i, ErrInvalidCandidate, "demand %d is not positive", c.Demand)
		}
		h := ids.add()
		if c.Running {
			if err := r.addRunning(i, hold, alloc); err != nil {
				return err
			}
		}
		// Candidates usually come grouped by tenant: skip the lookup then.
		// (Ids of one length that end alike are compared whole; most of
		// those that differ, as numbered ids do, differ in the last byte,
		// and a round whose tenants come mixed compares no more.)
		ti := lastTenant
		if i == 0 || !idhash.Equal(string(c.Tenant), string(lastID)) {
			ti = tenantIDs.index(c.Tenant)
		}
		if ti < 0 {
			var err error
			if ti, err = r.addTenant(i, rater); err != nil {
				return err
			}
			counts = append(counts, 0)
		}
		lastTenant, lastID = ti, c.Tenant
		counts[ti]++
		r.cands[i] = cand{h: h, tenant: ti, running: c.Running}
		if !c.Running {
			pending++
			pendingGPUs += float64(c.Demand)
		}
	}

	if err := r.duplicate(); err != nil {
		return err
	}
	if ar, ok := in.Placer.(allocReserver); ok && r.free != nil && pending > 0 {
		// The new grants the free GPUs (and those of the expiring jobs)
		// make at the pending jobs' average demand, or all of them.
		room := float64(r.free.Free() + r.expHeld)
		ar.ReserveAllocations(int(float64(pending) * min(1, room/pendingGPUs)))
	}

	// The candidates' indices, grouped by tenant in one array: four bytes
	// a candidate, where the heap entries prepare builds from them take
	// forty-eight, and only for the tenants that the round reaches. They
	// are written through a cursor per tenant (counts, turned into the
	// parts' ends), not appended to the tenants' slices, whose headers
	// would be stored, through the write barrier, once per candidate.
	r.counts = counts
	r.byTenant = resize(r.byTenant, n)
	all := r.byTenant
	off := int32(0)
	for ti, k := range counts {
		counts[ti] = off
		off += k
	}
	for i := range r.cands {
		ti := r.cands[i].tenant
		all[counts[ti]] = int32(i)
		counts[ti]++
	}
	for ti, end := range counts {
		r.tenants[ti].end = end
	}
	// One backing array for all heaps, a part taken by each tenant
	// prepared; a heap never grows beyond its own candidates, so the parts
	// never overlap.
	r.heaps = resize(r.heaps, n)
	tie := opts.TieBreak
	if tie == nil {
		tie = BySubmit
	}
	r.candLT = candOrder{cands: r.cands, in: r.in, tie: tie}
	// Every grant takes at least one GPU: at most free + expiring grants.
	if r.free != nil {
		if g := min(n, r.free.Free()+r.expHeld, 1024); g > cap(r.grants) {
			r.grants = make([]Grant, 0, g)
		}
	}
	r.res.Grants = r.grants[:0] // zero past len(r.grants), see keepGrants
	if opts.Parent != nil {
		return r.ht.build(r, opts.Parent, rater)
	}
	return nil
}

// addRunning checks running candidate i against what the placer holds (a
// Holder's Holds, or an allocationer's Allocation, when it has either) and
// counts it among the expiring jobs. It stands apart from init's loop so
// that the loop, which most candidates pass without it, keeps fewer values
// live.
func (r *round) addRunning(i int, hold holder, alloc allocationer) error {
	c := &r.in[i]
	if g := c.Placement.GPUs(); g != int(c.Demand) {
		return r.badCandidate(i, ErrInvalidCandidate, "running with %d GPUs, demand %d", g, c.Demand)
	}
	if hold != nil {
		if !hold.Holds(string(c.Job), c.Placement) {
			if alloc != nil {
				if _, ok := alloc.Allocation(string(c.Job)); !ok {
					return r.badCandidate(i, ErrInvalidCandidate, "running but holds nothing in the placer")
				}
			}
			return r.badCandidate(i, ErrInvalidCandidate, "placement differs from what the placer holds")
		}
	} else if alloc != nil {
		held, ok := alloc.Allocation(string(c.Job))
		if !ok {
			return r.badCandidate(i, ErrInvalidCandidate, "running but holds nothing in the placer")
		}
		if !held.Equal(c.Placement) {
			return r.badCandidate(i, ErrInvalidCandidate, "placement differs from what the placer holds")
		}
	}
	r.running = append(r.running, int32(i))
	r.expHeld += int(c.Demand)
	return nil
}

// addTenant adds the tenant of candidate i, met for the first time, with
// its account (its fair share advanced through rater if not nil), and
// returns its index.
func (r *round) addTenant(i int, rater FairRater) (int32, error) {
	c := &r.in[i]
	acct, ok := r.accounts.TenantAccount(c.Tenant)
	if !ok {
		return -1, r.badCandidate(i, ErrUnknownTenant, "tenant has no account")
	}
	if rater != nil {
		rate, ok := rater.TenantFairRate(c.Tenant)
		if !ok {
			return -1, r.badCandidate(i, ErrUnknownTenant, "tenant has no fair rate")
		}
		acct = advanced(acct, rate, r.lease)
	}
	ti := int32(len(r.tenants))
	r.tenantIDs.add(c.Tenant)
	r.tenants = append(r.tenants, tenantRec{
		st:      TenantState{ID: c.Tenant, Start: acct, Account: acct},
		blocked: -1,
	})
	return ti, nil
}

// badCandidate reports candidate i, rejected by init for sentinel, unless
// the candidates before it, whose ids were added to r.ids, hold a duplicate
// id, which comes first.
func (r *round) badCandidate(i int, sentinel error, format string, args ...any) error {
	if err := r.duplicate(); err != nil {
		return err
	}
	c := &r.in[i]
	return &Error{Index: i, Job: c.Job, Tenant: c.Tenant, Err: sentinel, Msg: fmt.Sprintf(format, args...)}
}

// duplicate reports the first candidate whose job id an earlier one has,
// among the candidates whose ids were added to r.ids, or nil.
func (r *round) duplicate() error {
	i, j := r.ids.firstDuplicate()
	if i < 0 {
		return nil
	}
	c := &r.in[i]
	return &Error{Index: i, Job: c.Job, Tenant: c.Tenant, Err: ErrDuplicateJob,
		Msg: fmt.Sprintf("job appears twice among the candidates (also candidate %d)", j)}
}

// resize returns s with length n, reusing its array when large enough.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// prepare reads the job accounts of tenant ti's candidates, computes their
// rewards and builds the tenant's heap: O(k) for k candidates, done once,
// when Phase 1 first reaches the tenant. Tenants that the round never
// reaches (the cluster filled up first) cost nothing here.
func (r *round) prepare(ti int32) error {
	t := &r.tenants[ti]
	// The candidates lie anywhere in the input, and the lookups below
	// would wait for each candidate, its id's bytes and its cand (whose
	// hash the heap entry takes) in turn: first touch them all in a loop
	// of independent loads, whose cache misses overlap.
	var cands []int32 // the tenant's, in input order
	if ti > 0 {
		cands = r.byTenant[r.tenants[ti-1].end:t.end]
	} else {
		cands = r.byTenant[:t.end]
	}
	k := r.heapsUsed + len(cands)
	heap := r.heaps[r.heapsUsed:k:k]
	r.heapsUsed = k
	var touch byte
	for i, ci := range cands {
		heap[i].ci = ci
		if j := r.in[ci].Job; len(j) > 0 {
			touch ^= j[0] ^ byte(r.cands[ci].h)
		}
	}
	r.touched ^= touch
	t.heap = heap
	accts, err := r.jobAccounts(t.heap)
	if err != nil {
		return err
	}
	for i := range t.heap {
		e := &t.heap[i]
		ci := e.ci
		c := &r.in[ci]
		var acct ledger.Account
		if accts != nil {
			acct = accts[i]
		} else {
			var ok bool
			if acct, ok = r.accounts.JobAccount(c.Job); !ok {
				return r.unknownJob(ci)
			}
		}
		s := r.reward(c, acct)
		e.k0, e.slen = s.At(0), s.n
		if s.n >= 2 {
			e.k1 = math.Float64bits(s.v[1])
		} else {
			key := int64(noSubmitKey)
			if r.opts.TieBreak == nil {
				key = unknownSubmitKey // found at the entry's first tie
			}
			e.k1 = uint64(key)
		}
		e.h, e.job, e.run, e.d = r.cands[ci].h, c.Job, c.Running, 0
		if c.Demand < 1<<16 {
			e.d = uint16(c.Demand)
		}
		if s.n > 2 {
			r.setRest(ci, s)
		}
	}
	heapInit(t.heap, &r.candLT)
	t.ready = true
	return nil
}

// jobAccounts returns the accounts of the candidates of entries es, in
// their order, when the round's Accounts looks many up at once
// (JobAccountsAppender); nil when it does not, and prepare asks for each.
func (r *round) jobAccounts(es []candEntry) ([]ledger.Account, error) {
	if r.batch == nil {
		return nil, nil
	}
	ids := r.batchIDs[:0]
	for _, e := range es {
		ids = append(ids, r.in[e.ci].Job)
	}
	accts, ok := r.batch.AppendJobAccounts(r.batchAccts[:0], ids)
	clear(ids) // hold no caller's id past the round
	r.batchIDs, r.batchAccts = ids[:0], accts[:0]
	switch unknown, fault := checkBatch(len(accts), len(es), ok); {
	case unknown >= 0:
		return nil, r.unknownJob(es[unknown].ci)
	case fault != "":
		return nil, &Error{Index: -1, Err: ErrInvalidInput, Msg: fault}
	}
	return accts, nil
}

// checkBatch judges an AppendJobAccounts answer of got accounts for n ids
// against its interface: unknown is the index of the id it stopped at, or
// -1; fault, if not empty, says how the answer breaks the interface (no
// unknown job to name then).
func checkBatch(got, n int, ok bool) (unknown int, fault string) {
	switch {
	case !ok && got < n:
		return got, ""
	case !ok || got != n:
		return -1, fmt.Sprintf("AppendJobAccounts returned %d accounts for %d jobs (ok %v)", got, n, ok)
	}
	return -1, ""
}

// unknownJob is the error of candidate ci, whose job has no account.
func (r *round) unknownJob(ci int32) error {
	c := &r.in[ci]
	return &Error{Index: int(ci), Job: c.Job, Tenant: c.Tenant, Err: ErrUnknownJob, Msg: "job has no account"}
}

// setRest records s, of more than two components, as candidate ci's
// reward in rest.
func (r *round) setRest(ci int32, s Score) {
	if !r.hasRest {
		r.rest = resize(r.rest, len(r.cands))
		clear(r.rest)
		r.hasRest = true
		r.candLT.rest = r.rest
	}
	r.rest[ci] = s
}

// score returns the reward of e's candidate, as prepare recorded it.
func (r *round) score(e *candEntry) Score {
	if e.slen > 2 {
		return r.rest[e.ci]
	}
	s := Score{n: e.slen}
	s.v[0] = e.k0
	if e.slen == 2 {
		s.v[1] = math.Float64frombits(e.k1)
	}
	return s
}

// putScore writes score(e) to *s field by field, without the temporary
// Score that an assignment of score(e) builds and copies.
func (r *round) putScore(s *Score, e *candEntry) {
	if e.slen > 2 {
		*s = r.rest[e.ci]
		return
	}
	s.n = e.slen
	s.v[0] = e.k0
	s.v[1] = 0
	if e.slen == 2 {
		s.v[1] = math.Float64frombits(e.k1)
	}
	s.v[2], s.v[3] = 0, 0
}

// noSubmitKey is the submit key of an entry that has none, and
// unknownSubmitKey that of an entry whose key is yet to be found: no
// Submit's key takes these values.
const (
	noSubmitKey      = math.MinInt64
	unknownSubmitKey = math.MinInt64 + 1
)

// findSubmitKey finds, stores in e and returns the submit key of e's
// candidate, whose reward has at most one component. lessFrom0 finds an
// entry's key at its first tie: a round whose rewards rarely tie finds
// few, and an entry's candidate is read once, not at each of its ties.
func (o *candOrder) findSubmitKey(e *candEntry) int64 {
	k := submitKey(o.in[e.ci].Submit)
	e.k1 = uint64(k)
	return k
}

// submitKey returns t as Unix nanoseconds, a key in the order of the
// default tie-break's t.Compare, or noSubmitKey where the key would not be
// exact: when t carries a monotonic clock reading (Compare reads it when
// both times have one, the wall clock otherwise; two times without one are
// compared by their wall clock, as their keys are) or when its Unix seconds
// lie beyond ±9223372035, whose nanoseconds an int64 does not hold. O(1).
func submitKey(t time.Time) int64 {
	const lim = math.MaxInt64/1_000_000_000 - 1 // 9223372035
	s := t.Unix()
	if s < -lim || s > lim || t != t.Round(0) {
		return noSubmitKey
	}
	return s*1_000_000_000 + int64(t.Nanosecond())
}

// second returns the second component of e's reward.
func (e *candEntry) second() float64 {
	if e.slen >= 2 {
		return math.Float64frombits(e.k1)
	}
	return 0
}

// candOrder orders candidates: higher reward first, then the tie-break
// (Options.TieBreak, or [BySubmit], set once per round), then the job id.
// The first two components of the rewards are compared in the heap entries
// (candEntry), the others in rest, nil in a round without rewards longer
// than two.
type candOrder struct {
	rest  []Score
	cands []cand
	in    []Candidate
	tie   TieBreak
}

// candEntry is a candidate in its tenant's heap: its index, the first two
// components of its reward (0 where the reward is shorter, as
// Score.Compare counts a missing component), which decide most comparisons
// without reading the round's arrays at random, and the reward's length;
// in place of a second component the reward lacks, the candidate's submit
// key (submitKey, found at the entry's first tie, or noSubmitKey where the
// round's tie-break is not the default), so that equal rewards of one
// component are ordered as the default tie-break orders them without
// reading the candidates at each comparison;
// and, set with the reward by prepare, what a grant needs of the
// candidate: its job id with the id's hash, whether it is running, and its
// demand when below 2¹⁶ (else 0). A round visits its candidates in tenant
// and reward order, that is at random over the input: with these in the
// entry, which the pop has just read, a pending candidate is placed and
// granted without reading its Candidate or its cand, two cache misses a
// grant in a large round, paid instead in prepare, whose loads overlap
// (48 bytes).
type candEntry struct {
	k0   float64
	k1   uint64 // the second component's bits if slen >= 2, else an int64 submit key
	h    uint64 // idhash.String(string(job)), which is placement.IDHash
	job  ledger.JobID
	ci   int32
	slen uint8
	run  bool   // r.in[ci].Running
	d    uint16 // r.in[ci].Demand if below 2¹⁶, else 0
}

// demand returns the demand of e's candidate, from the entry when it holds
// it.
func (r *round) demand(e *candEntry) ledger.GPUs {
	if e.d != 0 {
		return ledger.GPUs(e.d)
	}
	return r.in[e.ci].Demand
}

func (o *candOrder) less(a, b *candEntry) bool {
	// Unequal first components decide most comparisons: this much is
	// inlined. A NaN compares false both ways and goes on to cmp.Compare.
	if a.k0 > b.k0 {
		return true
	}
	if a.k0 < b.k0 {
		return false
	}
	return o.lessFrom0(a, b)
}

// lessFrom0 is less for entries whose first components are neither
// smaller nor larger than each other: equal, or a NaN among them. It may
// store in a and b the submit keys it finds (findSubmitKey).
func (o *candOrder) lessFrom0(a, b *candEntry) bool {
	if c := cmp.Compare(a.k0, b.k0); c != 0 {
		return c > 0
	}
	if a.slen < 2 && b.slen < 2 {
		// Equal rewards of at most one component (rest holds nothing of
		// them): with both submit keys, the default tie-break's order,
		// then that of the job ids (BySubmit's and the round's last).
		ka, kb := int64(a.k1), int64(b.k1)
		if ka == unknownSubmitKey {
			ka = o.findSubmitKey(a)
		}
		if kb == unknownSubmitKey {
			kb = o.findSubmitKey(b)
		}
		if ka != noSubmitKey && kb != noSubmitKey {
			if ka != kb {
				return ka < kb
			}
			return a.job < b.job
		}
		return o.lessRest(a.ci, b.ci)
	}
	if c := cmp.Compare(a.second(), b.second()); c != 0 {
		return c > 0
	}
	return o.lessRest(a.ci, b.ci)
}

// lessRest orders candidates i and j whose first two reward components are
// equal: by the rest of the reward, the tie-break, then the job id.
func (o *candOrder) lessRest(i, j int32) bool {
	if o.rest != nil {
		a, b := &o.rest[i], &o.rest[j]
		for k := 2; k < MaxScoreLen; k++ {
			if c := cmp.Compare(a.v[k], b.v[k]); c != 0 {
				return c > 0
			}
		}
	}
	a, b := &o.in[i], &o.in[j]
	if c := o.tie(a, b); c != 0 {
		return c < 0
	}
	return a.Job < b.Job
}

// phase1 is the queue a stage draws tenants from: the flat tournament, or
// the tree walk of Options.Parent.
type phase1 interface {
	top() int32
	fix(ti int32)
	remove(ti int32)
}

func (r *round) run() error {
	var q phase1 = &r.tt
	reset := func(in func(ti int) bool) { r.tt.reset(r.tenants, r.opts.TenantOrder, in) }
	if r.opts.Parent != nil {
		q, reset = &r.ht, r.ht.reset
	}
	reset(func(int) bool { return true })
	if err := r.stage(Fair, q); err != nil {
		return err
	}
	if !r.full && !r.opts.NoBackfill {
		// The fair stage ended with GPUs left, so it reached (prepared)
		// every tenant.
		reset(func(ti int) bool { return len(r.tenants[ti].heap) > 0 })
		if err := r.stage(Backfill, q); err != nil {
			return err
		}
	}
	return r.finish()
}

// stage runs one loop of the round over the tenants in r.tt: the tenant
// first in order tries its best undecided candidate until the cluster is
// full or no tenant has one left. A tenant whose pick does not fit leaves
// the Fair stage, its pick kept for the Backfill stage; in the Backfill
// stage the pick is dropped and the tenant goes on.
func (r *round) stage(s Stage, tt phase1) error {
	for ti := tt.top(); ti >= 0; ti = tt.top() {
		if r.isFull() {
			r.full = true
			break
		}
		ce, err := r.popCand(ti)
		if err != nil {
			return err
		}
		if ce == nil {
			tt.remove(ti)
			continue
		}
		ci := ce.ci
		ok, err := r.try(ce, ti, s)
		if err != nil {
			return err
		}
		switch {
		case ok:
			tt.fix(ti) // pre-credited by the grant
		case s == Fair:
			t := &r.tenants[ti]
			t.out = true
			t.blocked = ci
			t.reason = r.reasons[r.cands[ci].reason-1]
			heapPush(&t.heap, *ce, &r.candLT) // tried again by the backfill stage
			tt.remove(ti)
		}
	}
	return nil
}

// isFull reports that no GPU is free even in the optimistic view; then no
// candidate can be granted (every undecided expiring job would count).
func (r *round) isFull() bool {
	return r.free != nil && r.free.Free()+r.expHeld == 0
}

// popCand removes and returns the heap entry of tenant ti's best undecided
// candidate, or nil. Every candidate in a heap is
// undecided: a candidate is decided only by try, after its pop, and goes
// back to its heap only undecided (a failed pick kept for the backfill
// stage), so the pop reads nothing of the candidate's state.
//
// The entry stays valid until the tenant's heap changes again.
func (r *round) popCand(ti int32) (*candEntry, error) {
	t := &r.tenants[ti]
	if !t.ready {
		if err := r.prepare(ti); err != nil {
			return nil, err
		}
	}
	if len(t.heap) == 0 {
		return nil, nil
	}
	return heapPop(&t.heap, &r.candLT), nil
}

func (r *round) placerErr(ci int32, what string, err error) error {
	c := &r.in[ci]
	return &Error{Index: int(ci), Job: c.Job, Tenant: c.Tenant, Err: ErrPlacer, Msg: what, Cause: err}
}

// allocErr reports a failed allocation of a new placement. A pending
// candidate that already holds GPUs under its id is the caller's mistake
// (ErrInvalidCandidate, found only when it is granted, since checking every
// pending candidate up front would cost a lookup each); anything else is the
// placer's.
func (r *round) allocErr(ci int32, err error) error {
	if errors.Is(err, placement.ErrDuplicateAllocation) {
		c := &r.in[ci]
		return &Error{Index: int(ci), Job: c.Job, Tenant: c.Tenant, Err: ErrInvalidCandidate,
			Msg: "not running but already holds GPUs in the placer", Cause: err}
	}
	return r.placerErr(ci, "allocate", err)
}

// allocate gives a new placement to candidate ci, on the Placer and in the
// optimistic view if there is one.
func (r *round) allocate(ci int32, p placement.Placement) error {
	id := string(r.in[ci].Job)
	if err := r.p.Allocate(id, p); err != nil {
		return r.allocErr(ci, err)
	}
	return r.allocated(ci, p)
}

// allocated marks candidate ci granted, p being allocated to it on the
// Placer, and allocates p in the optimistic view if there is one.
func (r *round) allocated(ci int32, p placement.Placement) error {
	r.cands[ci].status = granted
	if r.a != nil {
		if err := r.a.Allocate(string(r.in[ci].Job), p); err != nil {
			return r.placerErr(ci, "allocate in the optimistic view", err)
		}
	}
	return nil
}

// placeNow places candidate ci's d GPUs on GPUs free now and allocates
// them, on the Placer and in the optimistic view if there is one. It
// returns the placer's error if the job does not fit (nofit), or the
// round's error if something else failed (err).
func (r *round) placeNow(e *candEntry, d int) (q placement.Placement, nofit, err error) {
	ci := e.ci
	if r.cl == nil {
		q, err = r.p.Place(d)
	} else {
		q, err = r.cl.AssignHashed(string(e.job), e.h, d)
	}
	switch {
	case err == nil && r.cl == nil:
		return q, nil, r.allocate(ci, q)
	case err == nil:
		return q, nil, r.allocated(ci, q)
	case errors.Is(err, placement.ErrNoFit):
		return q, err, nil
	case r.cl != nil && errors.Is(err, placement.ErrDuplicateAllocation):
		return q, nil, r.allocErr(ci, err)
	}
	return q, nil, r.placerErr(ci, "place", err)
}

// release frees running candidate ci.
func (r *round) release(ci int32) error {
	if _, err := r.p.Release(string(r.in[ci].Job)); err != nil {
		return err
	}
	r.cands[ci].freed = true
	return nil
}

// undo restores the Placer as it was before the round: the new grants are
// released and the released running jobs are allocated again. The state of
// the candidates says exactly what was done, so no log is kept. It goes on
// past a refusal and returns the first, naming its job.
func (r *round) undo() error {
	var first error
	for i := range r.cands {
		if r.cands[i].status == granted {
			if _, err := r.p.Release(string(r.in[i].Job)); err != nil && first == nil {
				first = r.placerErr(int32(i), "release a grant to undo the round", err)
			}
		}
	}
	for _, e := range r.running {
		if r.cands[e].freed {
			if err := r.p.Allocate(string(r.in[e].Job), r.in[e].Placement); err != nil && first == nil {
				first = r.placerErr(e, "allocate again to undo the round", err)
			}
		}
	}
	return first
}

// forgetFailures forgets the failed demands, at the start of a round.
func (r *round) forgetFailures() {
	r.memoBits = 0
	if len(r.memo) > 0 {
		clear(r.memo)
	}
}

// failed returns the reason index memoized for demand d, or 0.
func (r *round) failed(d ledger.GPUs) int32 {
	if d < 64 {
		if r.memoBits&(1<<uint(d)) == 0 {
			return 0
		}
		return r.memoSmall[d]
	}
	return r.memo[d]
}

// remember memoizes that demand d failed for reason index ri.
func (r *round) remember(d ledger.GPUs, ri int32) {
	if d < 64 {
		r.memoBits |= 1 << uint(d)
		r.memoSmall[d] = ri
		return
	}
	if r.memo == nil {
		r.memo = make(map[ledger.GPUs]int32)
	}
	r.memo[d] = ri
}

// try decides candidate e.ci of tenant ti: it grants it and returns true,
// or records why it does not fit and returns false.
//
// A pending candidate is placed and granted from its heap entry alone (see
// candEntry).
func (r *round) try(e *candEntry, ti int32, stage Stage) (bool, error) {
	ci := e.ci
	if e.run {
		if c, cd := &r.in[ci], &r.cands[ci]; !cd.moved {
			cd.status = renewed
			r.expHeld -= int(c.Demand)
			if r.a != nil {
				if err := r.a.Allocate(string(c.Job), c.Placement); err != nil {
					return false, r.placerErr(ci, "renewal in the optimistic view", err)
				}
			}
			r.grant(e, ti, stage, Renewed, c.Placement, nil)
			return true, nil
		}
	}
	demand := r.demand(e)
	if ri := r.failed(demand); ri > 0 {
		r.fail(e, ti, stage, ri)
		return false, nil
	}
	d := int(demand)
	var rs Reason
	// Free GPUs first. When fewer are free than needed and expiring jobs are
	// undecided, go straight to the optimistic view.
	if r.expHeld == 0 || r.free == nil || r.free.Free() >= d {
		q, nofit, err := r.placeNow(e, d)
		if err != nil {
			return false, err
		}
		if nofit == nil {
			r.grant(e, ti, stage, New, q, nil)
			return true, nil
		}
		rs = noFit(d, nofit)
	}
	if r.expHeld > 0 {
		q, err := r.optimisticPlace(ci, d)
		if err == nil {
			victims := r.victims(q)
			for _, v := range victims {
				vc := &r.in[v]
				if err := r.release(v); err != nil {
					return false, r.placerErr(v, "release preempted job", err)
				}
				r.cands[v].moved = true
				r.cands[v].by = ci
				r.expHeld -= int(vc.Demand)
			}
			if err := r.allocate(ci, q); err != nil {
				return false, err
			}
			var ids []ledger.JobID
			if len(victims) > 0 {
				// Carved from one array a round (kept by a Rounder), its
				// capacity cut so that the next grant's ids go elsewhere.
				k := len(r.preempts)
				for _, v := range victims {
					r.preempts = append(r.preempts, r.in[v].Job)
				}
				ids = r.preempts[k:len(r.preempts):len(r.preempts)]
			}
			r.grant(e, ti, stage, New, q, ids)
			return true, nil
		}
		if _, ok := err.(*placement.NoFitError); !ok {
			// Not the Placer's plain no-fit answer (checked first: a
			// target of errors.As costs an allocation).
			var perr *Error
			if errors.As(err, &perr) {
				return false, err
			}
			if !errors.Is(err, placement.ErrNoFit) {
				return false, r.placerErr(ci, "place in the optimistic view", err)
			}
		}
		rs = noFit(d, err)
	}
	ri := r.addReason(rs)
	r.remember(demand, ri)
	r.fail(e, ti, stage, ri)
	return false, nil
}

func noFit(d int, err error) Reason {
	rs := Reason{Code: NoFit, Need: d, LargestFree: -1, FreeTotal: -1}
	nf, ok := err.(*placement.NoFitError) // without errors.As's allocation
	if !ok {
		nf = asNoFit(err)
	}
	if nf != nil {
		rs.LargestFree = nf.LargestFree
		rs.FreeTotal = nf.FreeTotal
	}
	return rs
}

// asNoFit returns the NoFitError in err's chain, or nil.
func asNoFit(err error) *placement.NoFitError {
	var nf *placement.NoFitError
	if errors.As(err, &nf) {
		return nf
	}
	return nil
}

// optimisticPlace places d GPUs as if every undecided expiring job were
// released.
func (r *round) optimisticPlace(ci int32, d int) (placement.Placement, error) {
	if len(r.owners) == 0 { // not built yet: every running candidate has a slot
		ow := r.owners[:0]
		for _, e := range r.running {
			for _, s := range r.in[e].Placement.Slots {
				ow = append(ow, ownerSlot{h: idhash.String(s.Node), node: s.Node, gpus: s.GPUs, e: e})
			}
		}
		slices.SortFunc(ow, func(a, b ownerSlot) int { return cmp.Compare(a.h, b.h) })
		r.owners = ow
	}
	if r.a == nil && (r.cloner != nil || r.ccl != nil && (r.without == nil || r.marked >= r.ccl.Len())) {
		var a placement.Placer
		if r.cloner != nil {
			a = r.cloner.ClonePlacer()
		} else {
			a = r.ccl.Clone()
		}
		for _, e := range r.running {
			if r.undecidedHolder(e) {
				if _, err := a.Release(string(r.in[e].Job)); err != nil {
					return placement.Placement{}, r.placerErr(e, "release in the optimistic view", err)
				}
			}
		}
		r.a = a
	}
	if r.a != nil {
		return r.a.Place(d)
	}
	if r.without != nil {
		return r.placeWithout(d)
	}
	// No copy: release the undecided expiring jobs for a moment.
	var held []int32
	// restore gives every held job its GPUs back. One the Placer refuses
	// is marked freed, so that the undo of the round, which the error
	// starts, tries again: the round must leave the Placer as it was.
	restore := func() error {
		var first error
		for _, e := range held {
			c := &r.in[e]
			if err := r.p.Allocate(string(c.Job), c.Placement); err != nil {
				r.cands[e].freed = true
				if first == nil {
					first = r.placerErr(e, "restore after an optimistic look", err)
				}
			}
		}
		return first
	}
	for _, e := range r.running {
		if !r.undecidedHolder(e) {
			continue
		}
		if _, err := r.p.Release(string(r.in[e].Job)); err != nil {
			if rerr := restore(); rerr != nil {
				return placement.Placement{}, rerr
			}
			return placement.Placement{}, r.placerErr(e, "release for an optimistic look", err)
		}
		held = append(held, e)
	}
	q, err := r.p.Place(d)
	if rerr := restore(); rerr != nil {
		return placement.Placement{}, rerr
	}
	return q, err
}

// placeWithout takes the optimistic look of optimisticPlace in one call to
// the Placer's PlaceWithout. It fails as optimisticPlace does.
func (r *round) placeWithout(d int) (placement.Placement, error) {
	ids := r.looks[:0]
	for _, e := range r.running {
		if r.undecidedHolder(e) {
			ids = append(ids, string(r.in[e].Job))
			r.marked += len(r.in[e].Placement.Slots)
		}
	}
	q, err := r.without.PlaceWithout(d, ids)
	clear(ids)
	r.looks = ids[:0]
	if err != nil && errors.Is(err, placement.ErrUnknownAllocation) {
		return q, r.unknownInLook(err)
	}
	return q, err
}

// unknownInLook reports the running candidate a look failed on as unknown
// to the Placer, or returns err. (Apart from placeWithout: errors.As's
// target costs an allocation where it is declared.)
func (r *round) unknownInLook(err error) error {
	var perr *placement.Error
	if errors.As(err, &perr) {
		for _, e := range r.running {
			if r.undecidedHolder(e) && string(r.in[e].Job) == perr.Allocation {
				return r.placerErr(e, "release for an optimistic look", err)
			}
		}
	}
	return err
}

// undecidedHolder reports that running candidate e still holds its GPUs and
// has been neither renewed nor preempted.
func (r *round) undecidedHolder(e int32) bool {
	return r.cands[e].status == pending && !r.cands[e].moved
}

// victims returns the undecided expiring jobs holding GPUs of q, ordered by
// job id.
func (r *round) victims(q placement.Placement) []int32 {
	vs := r.victimBuf[:0]
	ow := r.owners
	for _, s := range q.Slots {
		h := idhash.String(s.Node)
		i, _ := slices.BinarySearchFunc(ow, h, func(o ownerSlot, h uint64) int { return cmp.Compare(o.h, h) })
		for ; i < len(ow) && ow[i].h == h; i++ {
			o := &ow[i]
			if o.node == s.Node && r.undecidedHolder(o.e) && !slices.Contains(vs, o.e) && shareGPU(o.gpus, s.GPUs) {
				vs = append(vs, o.e)
			}
		}
	}
	slices.SortFunc(vs, func(a, b int32) int { return cmp.Compare(r.in[a].Job, r.in[b].Job) })
	r.victimBuf = vs
	return vs
}

// shareGPU reports that GPU lists a and b, of one node, have a GPU in
// common. O(len(a) + len(b)) for GPUs below 64, as on most nodes; O(len(a)
// × len(b)) otherwise.
func shareGPU(a, b []int) bool {
	var mask uint64
	for _, g := range a {
		if g < 0 || g >= 64 {
			for _, x := range a {
				if slices.Contains(b, x) {
					return true
				}
			}
			return false
		}
		mask |= 1 << uint(g)
	}
	for _, g := range b {
		if g >= 0 && g < 64 && mask&(1<<uint(g)) != 0 {
			return true
		}
	}
	return false
}

func (r *round) addReason(rs Reason) int32 {
	r.reasons = append(r.reasons, rs)
	return int32(len(r.reasons))
}

// grant records the grant of e's candidate to tenant ti and pre-credits
// the tenant. It reads the candidate from e and its tenant's id from the
// tenant, not r.in[e.ci] (see candEntry).
func (r *round) grant(e *candEntry, ti int32, stage Stage, kind GrantKind, p placement.Placement, preempts []ledger.JobID) {
	if r.opts.Trace != nil {
		r.grantTraced(e, ti, stage, kind, p, preempts)
		return
	}
	r.addGrant(e, ti, stage, kind, p, preempts)
}

// grantTraced is grant with an Options.Trace hook to call: apart, so that
// the grant of a round without one copies no tenant state and keeps a
// small frame.
func (r *round) grantTraced(e *candEntry, ti int32, stage Stage, kind GrantKind, p placement.Placement, preempts []ledger.JobID) {
	before := r.tenants[ti].st
	g := r.addGrant(e, ti, stage, kind, p, preempts)
	r.opts.Trace(Step{N: r.steps, Stage: stage, Tenant: before, Job: r.in[e.ci], Reward: g.Reward, Granted: true, Grant: *g})
}

// addGrant pre-credits tenant ti, appends the grant and returns it.
func (r *round) addGrant(e *candEntry, ti int32, stage Stage, kind GrantKind, p placement.Placement, preempts []ledger.JobID) *Grant {
	t := &r.tenants[ti]
	demand := r.demand(e)
	rhoBefore := t.st.Account.Rho
	t.st.Account = withAlloc(t.st.Account, preCredit(&r.opts, demand, r.leaseD))
	t.st.Grants++
	t.st.GPUs += demand
	if len(r.res.Grants) == cap(r.res.Grants) {
		r.growGrants()
	}
	// Written in place, field by field: a Grant built aside and appended,
	// or assigned whole, is copied through the write barrier's bulk path
	// while the collector runs. Every field is written.
	n := len(r.res.Grants)
	r.res.Grants = r.res.Grants[:n+1]
	g := &r.res.Grants[n]
	g.Job, g.Tenant, g.Demand, g.Kind, g.Stage = e.job, t.st.ID, demand, kind, stage
	g.Placement, g.Preempts = p, preempts
	r.putScore(&g.Reward, e)
	g.TenantRhoBefore, g.TenantRhoAfter = rhoBefore, t.st.Account.Rho
	r.grantedGPUs += int(demand)
	r.steps++
	return g
}

// growGrants makes room for more grants. Grant is a large struct and a
// round on an idle cluster makes tens of thousands of them, so it neither
// lets append grow the slice by 1.25× (copying it many times over) nor
// just doubles it (allocating up to twice what the round needs): when
// the Placer counts its free GPUs it grows the slice to the grants the GPUs
// still to be had (free, plus those of undecided expiring jobs) would make
// at the round's average demand so far, an eighth more, and at least
// double; without a count, or once the estimate falls short, it doubles.
// Never beyond one grant per candidate.
func (r *round) growGrants() {
	n := len(r.res.Grants)
	c := 2*n + 64
	if r.free != nil && r.grantedGPUs > 0 {
		left := r.free.Free() + r.expHeld
		est := n + int(int64(left)*int64(n)/int64(r.grantedGPUs))
		c = max(c, est+est/8+64)
	}
	c = max(min(c, len(r.cands)), n+1)
	gs := make([]Grant, n, c)
	copy(gs, r.res.Grants)
	r.res.Grants = gs
}

// fail records that candidate e.ci did not fit, for the reason with index
// ri (1 +) in r.reasons.
func (r *round) fail(e *candEntry, ti int32, stage Stage, ri int32) {
	ci := e.ci
	r.cands[ci].reason = ri
	r.steps++
	if r.opts.Trace != nil {
		r.opts.Trace(Step{N: r.steps, Stage: stage, Tenant: r.tenants[ti].st, Job: r.in[ci],
			Reward: r.score(e), Reason: r.reasons[ri-1], OutOfPlay: stage == Fair})
	}
}

// finish releases the undecided expiring jobs and assembles the result.
func (r *round) finish() error {
	for _, e := range r.running {
		if r.undecidedHolder(e) {
			if err := r.release(e); err != nil {
				return r.placerErr(e, "release expiring job", err)
			}
		}
	}
	if len(r.res.Grants) == 0 {
		r.keepGrants()
		r.res.Grants = nil
	}
	waiting := len(r.cands) - len(r.res.Grants)
	if waiting > 0 {
		// Every entry up to waiting is written below; beyond the length
		// the array is kept zero, so that it holds no stale reference.
		ws := r.waiting
		if cap(ws) < waiting {
			ws = make([]Wait, waiting)
		}
		if len(ws) > waiting {
			clear(ws[waiting:])
		}
		r.res.Waiting = ws[:waiting]
	}
	w := 0
	clear(r.released)
	r.res.Released = r.released[:0]
	for i := range r.cands {
		// The candidate itself is read only when it waits or was
		// released, not for each of a large round's grants.
		cd := &r.cands[i]
		var by ledger.JobID
		if cd.moved {
			by = r.in[cd.by].Job
		}
		if cd.running && cd.moved {
			c := &r.in[i]
			r.res.Released = append(r.res.Released, Release{Job: c.Job, Tenant: c.Tenant, Placement: c.Placement, By: by,
				Reason: Reason{Code: Preempted, Need: int(c.Demand), LargestFree: -1, FreeTotal: -1, By: by}})
		}
		if cd.status != pending {
			continue
		}
		c := &r.in[i]
		var rs Reason
		switch {
		case cd.reason > 0:
			rs = r.reasons[cd.reason-1]
		case cd.moved: // preempted and not tried again
			rs = Reason{Code: Preempted, Need: int(c.Demand), LargestFree: -1, FreeTotal: -1, By: by}
		case r.full:
			rs = Reason{Code: ClusterFull, Need: int(c.Demand), LargestFree: -1, FreeTotal: -1}
		default: // never tried: its tenant left play (NoBackfill)
			t := &r.tenants[cd.tenant]
			rs = t.reason
			rs.Code = OutOfPlay
			if t.blocked >= 0 {
				rs.By = r.in[t.blocked].Job
			}
		}
		r.tenants[cd.tenant].waiting++
		// Field by field, as grant writes a Grant: every field is written.
		wt := &r.res.Waiting[w]
		wt.Job, wt.Tenant, wt.Demand, wt.Running, wt.PreemptedBy = c.Job, c.Tenant, c.Demand, cd.running, by
		wt.Reason.Code, wt.Reason.Need, wt.Reason.LargestFree, wt.Reason.FreeTotal, wt.Reason.By = rs.Code, rs.Need, rs.LargestFree, rs.FreeTotal, rs.By
		w++
		if cd.running && !cd.moved {
			r.res.Released = append(r.res.Released, Release{Job: c.Job, Tenant: c.Tenant, Placement: c.Placement, Reason: rs})
		}
	}
	if len(r.res.Released) == 0 {
		r.released = r.res.Released
		r.res.Released = nil
	}
	if len(r.tenants) > 0 {
		r.res.Tenants = resize(r.tenantRes, len(r.tenants))
	}
	for ti := range r.tenants {
		t := &r.tenants[ti]
		tr := TenantResult{ID: t.st.ID, Start: t.st.Start, End: t.st.Account, Grants: t.st.Grants, GPUs: t.st.GPUs, OutOfPlay: t.out}
		if t.out {
			tr.Blocked = r.in[t.blocked].Job
			tr.Reason = t.reason
		} else if r.full && t.waiting > 0 {
			tr.Reason = Reason{Code: ClusterFull, LargestFree: -1, FreeTotal: -1}
		}
		tr.Waiting = t.waiting
		if r.opts.Parent != nil {
			tr.Depth = int(r.ht.nodes[r.ht.leafOf[ti]].depth)
		}
		r.res.Tenants[ti] = tr
	}
	if r.opts.Parent != nil {
		r.res.Subtrees = r.ht.subtrees()
	}
	return nil
}

// preCredit is what a grant of demand GPUs adds to its tenant's Alloc for
// the rest of a round: the hook's answer, or demand × lease (in seconds).
func preCredit(opts *Options, demand ledger.GPUs, lease time.Duration) ledger.GPUSeconds {
	if opts.PreCredit != nil {
		return opts.PreCredit(demand, lease)
	}
	return LeaseCredit(demand, lease)
}

// withAlloc returns a with Alloc higher by credit and ρ recomputed.
func withAlloc(a ledger.Account, credit ledger.GPUSeconds) ledger.Account {
	a.Alloc += credit
	a.Rho = ledger.Ratio(a.Alloc, a.FairShare)
	return a
}

// advanced returns a with its fair share advanced by one lease (in
// seconds) at rate, and ρ recomputed ([Options.AdvanceFairShare]).
func advanced(a ledger.Account, rate, lease float64) ledger.Account {
	a.FairShare += ledger.GPUSeconds(rate * lease)
	a.Rho = ledger.Ratio(a.Alloc, a.FairShare)
	return a
}
