package slurm

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// Config says how to replay Slurm accounting into a ledger.
type Config struct {
	// Mode is the tenant fair-share equation (ledger.DemandAware, Eq. 8, or
	// ledger.QuotaShare, Eq. 16).
	Mode ledger.Mode
	// Capacity is the cluster's GPU count M; it must be > 0.
	Capacity ledger.GPUs
	// Weights maps each account (tenant) to its weight, e.g. RawShares from
	// sshare. nil means: every account that has jobs, with weight 1. An
	// account with weight 0 gets no fair share: it is kept out of the ledger,
	// its GPU-seconds are counted directly and its ρ is +Inf (or 1 when it
	// used nothing).
	Weights map[string]float64
	// Tree, if set, replaces Weights: every association is a ledger tenant
	// under its tree parent (ledger.AddTenantUnder) with Fairshare=parent
	// applied (see [Tree]), jobs are charged to their user's association
	// (or their account's, see [Tree.Tenant]), and the report has one row
	// per association in tree order. A subtree whose root has 0 shares is
	// kept out of the ledger as a weight-0 account is.
	Tree *Tree
	// Now is when the accounting was taken: runs whose End is Unknown are
	// billed up to Now, and events after Now are ignored. Required.
	Now time.Time
	// From and To bound the report window [From, To). Zero From: the
	// earliest submission among the jobs; zero To: Now. The ledger's history
	// begins at From: jobs that ended before it are left out and runs that
	// began before it are counted from it.
	From, To time.Time
	// HalfLife > 0 discounts service exponentially (ledger.HalfLife, as
	// Slurm's PriorityDecayHalfLife): GPU-seconds HalfLife before To count
	// half.
	HalfLife time.Duration
	// Lenient skips (and counts in Report.Skipped) jobs charged to an
	// account that has no weight instead of failing with ErrUnknownAccount.
	Lenient bool
	// Resume, if set, is a ledger saved by an earlier replay with Persist
	// (a snapshot, ledger.ReadFile): this replay continues it from its
	// Now() instead of starting a new one, so jobs need only be the
	// accounting since then (sacct -S at that time). See [Replay] for what
	// happens to the jobs it holds. Its mode must be Mode; its history
	// policy is kept (HalfLife is then ignored); a different Capacity is
	// set at its Now(). From defaults to its Begin(). Replay changes it.
	Resume *ledger.Ledger
	// Persist prepares the ledger to be saved and resumed: every job up to
	// Now enters it (also those submitted after To, which the report does
	// not need), and the records of jobs that have finished are dropped
	// (ledger.Forget) once the report is read, which changes no tenant's
	// account and keeps a snapshot proportional to the active jobs. The
	// use of weight-0 accounts, which the ledger does not hold, is not
	// carried over.
	Persist bool
}

// Row is one account of the report.
type Row struct {
	Account string
	// User, Depth and UseParent place the row in a [Tree]: the user of a
	// user association (else ""), its depth below root (1 for root's
	// children; 0 without a tree) and whether its shares are
	// Fairshare=parent.
	User      string
	Depth     int
	UseParent bool
	RawShares float64
	// NormShares is RawShares ÷ Σ RawShares over the report's accounts, or
	// with a tree Slurm's Fair Tree NormShares ([Tree.NormShares]).
	NormShares float64
	// Charge is the key of the row whose tenant this association's jobs
	// are charged to ("account" or "account|user"), "" for an inner node.
	Charge string
	Used   ledger.GPUSeconds // ∫ Alloc over the window
	Owed   ledger.GPUSeconds // ∫ FairShare over the window
	Rho    ledger.Rho        // Used ÷ Owed
	// Rank orders accounts by ρ, lowest (most owed) first, from 1; equal ρ
	// share a rank (1, 1, 3), as Slurm's Fair Tree does. With a tree only
	// the leaves are ranked, in the order of a walk from the root that
	// visits siblings by ρ (lowest first), as Fair Tree ranks users; inner
	// rows have Rank 0. For a Fairshare=parent row, Used and Owed are the
	// sums over its children.
	Rank int
}

// Report is the result of a replay.
type Report struct {
	From, To, Now time.Time
	Mode          ledger.Mode
	Capacity      ledger.GPUs
	HalfLife      time.Duration
	Rows          []Row // by Rank, then Account; with a tree, in tree order
	Jobs          int   // jobs replayed into the ledger
	// Ignored counts jobs that had no effect on the window, by reason:
	// "no GPUs", "ended before window", "submitted after window",
	// "submitted after now", "zero shares" (charged to a weight-0 account,
	// counted outside the ledger), "accounted before" (already finished in
	// the resumed ledger).
	Ignored map[string]int
	Skipped Skipped // jobs left out in lenient mode
	// Partitions and Pending are filled by the caller, when known: the
	// capacity of each partition ([Partitions]) and why each pending job
	// waits ([Explain]). WriteReport prints them after the accounts.
	Partitions []Partition
	Pending    []Waiting
	Ledger     *ledger.Ledger // the replayed ledger, advanced to Now
}

// event kinds, in the order they apply at one instant: releases first.
const (
	evFinish = iota
	evStop
	evSubmit
	evStart
)

type event struct {
	at   time.Time
	kind int
	job  int // index in jobs
	fin  ledger.FinalState
}

// Replay builds a ledger from Slurm jobs (see [GroupJobs]) and reports every
// account over the window. Each job is one ledger job of its account with
// demand GPUs: Submit at its submission, Start and Stop around each run
// (requeued jobs have several), Finish at its End with the state mapped by
// [State.Final]; a job whose End is Unknown is still running (or pending)
// at Now. Events at one instant apply releases first. Complexity
// O(E log E) for E events, plus the ledger's cost per event.
func Replay(jobs []Job, cfg Config) (*Report, error) {
	if cfg.Now.IsZero() {
		return nil, fmt.Errorf("slurm: replay: Now is required")
	}
	if cfg.Capacity <= 0 {
		return nil, fmt.Errorf("slurm: replay: capacity %d must be > 0", cfg.Capacity)
	}
	if cfg.HalfLife < 0 {
		return nil, fmt.Errorf("slurm: replay: negative half-life %v", cfg.HalfLife)
	}
	rep := &Report{Now: cfg.Now, Mode: cfg.Mode, Capacity: cfg.Capacity, HalfLife: cfg.HalfLife,
		Ignored: map[string]int{}, Skipped: Skipped{}}
	weights := cfg.Weights
	if cfg.Tree != nil {
		weights = nil
	} else if weights == nil {
		weights = map[string]float64{}
		for _, j := range jobs {
			if j.Account != "" {
				weights[j.Account] = 1
			}
		}
	}
	for a, w := range weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("slurm: replay: account %q: weight %v", a, w)
		}
	}
	to := cfg.To
	if to.IsZero() {
		to = cfg.Now
	}
	from := cfg.From
	if from.IsZero() && cfg.Resume != nil {
		from = cfg.Resume.Begin()
	} else if from.IsZero() {
		from = to
		for _, j := range jobs {
			if j.Submit.Before(from) {
				from = j.Submit
			}
		}
	}
	if to.Before(from) {
		return nil, fmt.Errorf("slurm: replay: window ends (%s) before it begins (%s)", to.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	rep.From, rep.To = from, to
	begin := from
	if cfg.Resume != nil {
		begin = cfg.Resume.Now()
	}
	if cfg.Now.Before(begin) {
		return nil, fmt.Errorf("slurm: replay: now (%s) is before the window or the saved state (%s)", cfg.Now.Format(time.RFC3339), begin.Format(time.RFC3339))
	}
	l, err := replayLedger(cfg, begin)
	if err != nil {
		return nil, err
	}
	accounts := slices.Sorted(maps.Keys(weights))
	for _, a := range accounts {
		if weights[a] > 0 {
			if err := ensureTenant(l, begin, ledger.TenantID(a), "", weights[a]); err != nil {
				return nil, err
			}
		}
	}
	var excluded []bool
	if cfg.Tree != nil {
		if excluded, err = addTreeTenants(l, cfg.Tree, begin); err != nil {
			return nil, err
		}
	}
	zeroUse := map[string]ledger.GPUSeconds{} // accounts with weight 0
	var evs []event
	tenantOf := make([]ledger.TenantID, len(jobs))
	for i, j := range jobs {
		w, known := weights[j.Account]
		tenantOf[i] = ledger.TenantID(j.Account)
		if cfg.Tree != nil {
			var at int
			if at, known = cfg.Tree.charge(j.Account, j.User); known {
				tenantOf[i], w = ledger.TenantID(cfg.Tree.assocs[at].key()), 1
				if excluded[at] {
					w = 0
				}
			}
		}
		if !known {
			err := perr("sacct", j.Line, "Account", j.Account, ErrUnknownAccount, "job %s: no weight for this account", j.ID)
			if !cfg.Lenient {
				return nil, err
			}
			rep.Skipped.add(err)
			continue
		}
		if j.GPUs == 0 {
			rep.Ignored["no GPUs"]++
			continue
		}
		var jev []event
		reason := jobEvents(j, i, begin, cfg.Now, &jev)
		if cfg.Resume != nil {
			if info, held := l.Job(ledger.JobID(j.ID)); held {
				if !info.Active {
					rep.Ignored["accounted before"]++
					continue
				}
				jev, reason = resumeEvents(j, i, info.Running, begin, jev, reason)
			}
		}
		if reason != "" {
			rep.Ignored[reason]++
			continue
		}
		if !cfg.Persist && !j.Submit.Before(to) {
			rep.Ignored["submitted after window"]++
			continue
		}
		if w == 0 {
			rep.Ignored["zero shares"]++
			zeroUse[string(tenantOf[i])] += directUse(j, begin, to, cfg.Now, cfg.HalfLife)
			continue
		}
		evs = append(evs, jev...)
		rep.Jobs++
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.kind, b.kind), cmp.Compare(a.job, b.job))
	})
	for _, e := range evs {
		j := jobs[e.job]
		id := ledger.JobID(j.ID)
		var err error
		switch e.kind {
		case evSubmit:
			err = l.Submit(e.at, id, tenantOf[e.job], ledger.GPUs(j.GPUs), 1)
		case evStart:
			err = l.Start(e.at, id)
		case evStop:
			err = l.Stop(e.at, id)
		case evFinish:
			err = l.Finish(e.at, id, e.fin)
		}
		if err != nil {
			return nil, fmt.Errorf("slurm: replay: job %s (sacct line %d): %w", j.ID, j.Line, err)
		}
	}
	if err := l.Advance(cfg.Now); err != nil {
		return nil, fmt.Errorf("slurm: replay: %w", err)
	}
	rep.Ledger = l
	if cfg.Tree != nil {
		if rep.Rows, err = treeRows(l, cfg.Tree, excluded, zeroUse, from, to); err != nil {
			return nil, err
		}
		return rep, forgetFinished(l, jobs, cfg.Persist)
	}

	total := 0.0
	for _, a := range accounts {
		total += weights[a]
	}
	for _, a := range accounts {
		row := Row{Account: a, RawShares: weights[a], Charge: a}
		if total > 0 {
			row.NormShares = weights[a] / total
		}
		if weights[a] > 0 {
			acct, err := l.TenantAccount(ledger.TenantID(a), from, to)
			if err != nil {
				return nil, fmt.Errorf("slurm: replay: %w", err)
			}
			row.Used, row.Owed, row.Rho = acct.Alloc, acct.FairShare, acct.Rho
		} else {
			row.Used = zeroUse[a]
			row.Rho = ledger.Ratio(row.Used, 0)
		}
		rep.Rows = append(rep.Rows, row)
	}
	rankRows(rep.Rows)
	return rep, forgetFinished(l, jobs, cfg.Persist)
}

// rankRows sorts rows by ρ then account and assigns competition ranks.
func rankRows(rows []Row) {
	slices.SortStableFunc(rows, func(a, b Row) int {
		return cmp.Or(a.Rho.Compare(b.Rho), cmp.Compare(a.Account, b.Account))
	})
	for i := range rows {
		if i > 0 && rows[i].Rho.Compare(rows[i-1].Rho) == 0 {
			rows[i].Rank = rows[i-1].Rank
		} else {
			rows[i].Rank = i + 1
		}
	}
}

// jobEvents appends the ledger events of job j (index i) clipped to
// [begin, now] and returns "" or the reason the job is ignored.
func jobEvents(j Job, i int, begin, now time.Time, out *[]event) string {
	if j.Submit.After(now) {
		return "submitted after now"
	}
	// Runs clipped to [begin, now]; zero-length pieces dropped; back-to-back
	// runs merged.
	type span struct{ a, b time.Time } // b zero: open at now
	var runs []span
	submit := j.Submit
	for _, r := range j.Runs {
		if r.Start.Before(submit) {
			submit = r.Start
		}
		a, b := r.Start, r.End
		if a.After(now) {
			continue
		}
		if !b.IsZero() && b.After(now) {
			b = time.Time{}
		}
		if !b.IsZero() && !b.After(begin) {
			continue // entirely before the window
		}
		if a.Before(begin) {
			a = begin
		}
		if !b.IsZero() && !b.After(a) {
			continue
		}
		if n := len(runs); n > 0 && !runs[n-1].b.IsZero() && runs[n-1].b.Equal(a) {
			runs[n-1].b = b
			continue
		}
		runs = append(runs, span{a, b})
	}
	fin, final := j.State.Final()
	end := j.End
	if final && end.IsZero() {
		end = submit
		if n := len(j.Runs); n > 0 && j.Runs[n-1].End.After(end) {
			end = j.Runs[n-1].End
		}
	}
	if !final || end.After(now) {
		final = false
	}
	if final && !end.After(begin) {
		return "ended before window"
	}
	if submit.Before(begin) {
		submit = begin
	}
	if final && !end.After(submit) {
		return "ended before window" // zero length: no effect on any account
	}
	*out = append(*out, event{at: submit, kind: evSubmit, job: i})
	for k, r := range runs {
		*out = append(*out, event{at: r.a, kind: evStart, job: i})
		if r.b.IsZero() {
			break
		}
		if final && k == len(runs)-1 && r.b.Equal(end) {
			break // Finish releases the GPUs
		}
		*out = append(*out, event{at: r.b, kind: evStop, job: i})
	}
	if final {
		*out = append(*out, event{at: end, kind: evFinish, job: i, fin: fin})
	}
	return ""
}

// directUse integrates a job's GPUs over its runs within [from, to), runs
// open at now extending to to, discounted when halfLife > 0. It serves
// accounts with zero shares, which the ledger does not hold.
func directUse(j Job, from, to, now time.Time, halfLife time.Duration) ledger.GPUSeconds {
	var sum float64
	for _, r := range j.Runs {
		a, b := r.Start, r.End
		if a.After(now) {
			continue
		}
		if b.IsZero() || b.After(now) {
			b = to
		}
		if a.Before(from) {
			a = from
		}
		if b.After(to) {
			b = to
		}
		if !b.After(a) {
			continue
		}
		if halfLife > 0 {
			lambda := math.Ln2 / halfLife.Seconds()
			sum += float64(j.GPUs) / lambda * (math.Exp(-lambda*to.Sub(b).Seconds()) - math.Exp(-lambda*to.Sub(a).Seconds()))
		} else {
			sum += float64(j.GPUs) * b.Sub(a).Seconds()
		}
	}
	return ledger.GPUSeconds(sum)
}
