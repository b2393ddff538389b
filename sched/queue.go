package sched

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// RhoOrder declares how a [Reward] orders the waiting candidates of one
// tenant and one demand: by Class, higher first, then by ρ_job, lower
// first, then by the [TieBreak]. Class must not read the job's account and
// must not change while the candidate waits (it may read Leases, Demand,
// Submit, Urgent, but not WaitingSince against a clock). A nil Class is
// one class for all.
//
// The declaration is what lets a [Queue] hand a round only the few
// waiting candidates it can reach. It is a promise a round cannot check:
// a reward that breaks it makes the Queue leave out candidates the round
// would have granted. [NegJobRho] has the order of a nil Class;
// [NewJobFirst] and [SmallestNewFirst] that of [NeverRan] (within one
// demand, smallest-first adds nothing to it).
type RhoOrder struct {
	Class func(c *Candidate) Score
	// TieBreak must be the round's [Options.TieBreak]; nil means
	// [BySubmit], as there.
	TieBreak TieBreak
}

// NeverRanFirst is the order of [NewJobFirst] and [SmallestNewFirst] among
// the waiting jobs of one tenant and demand: those that never ran first
// (the class of [NeverRan]), then ρ_job.
func NeverRanFirst() RhoOrder {
	return RhoOrder{Class: func(c *Candidate) Score { return NeverRan(c, ledger.Account{}) }}
}

// Queue keeps a scheduler's waiting candidates from one round to the next
// and hands each round the few of them it can reach, as Kueue's queues
// keep their order: a round's grants and releases over them are those of a
// round over all of them.
//
// Why few suffice: a round gives at most F GPUs to waiting jobs, F being
// the GPUs free once every expiring job counts as free, so at most ⌊F/d⌋
// jobs of demand d are granted. Inside one tenant and demand, candidates
// are tried in the reward's order; once one fails, every later one fails
// for the same reason (a round remembers a demand that failed, and its
// view of free GPUs only shrinks), and a tenant leaves the fair stage at
// its first failure. So only the first ⌊F/d⌋ + 1 of each tenant and
// demand can be granted or stop their tenant; the others would only be
// listed as waiting.
//
// Finding the first ⌊F/d⌋ + 1 needs each job's ρ_job, a read of its
// account. The Queue keeps, for each job, the account it last read and
// when: while the job waits its Alloc is fixed and its FairShare grows by
// at most its demand per second, so its ρ_job lies between a bound that
// falls with time and the value read (see [ledger.View.WaitingRhoFalls]).
// A round reads only the jobs whose bounds could place them among the
// first; the others are not read, and not handed to the round.
//
// The Queue prunes nothing, and hands back every candidate, unless the
// accounts declare the bound (an Accounts with a WaitingRhoFalls method
// that reports true). Its candidates must be waiting and hold no GPUs for
// which their accounts are still charged (a job writing its checkpoint
// goes to the round directly). Tenant orders, trees, backfill or not and
// pre-credits leave the argument whole; a [Reserver] does not (it grants
// the job it holds nodes for ahead of the round, wherever that job ranks),
// so hand a reserving round every candidate. A Queue is not safe for
// concurrent use.
type Queue struct {
	order  RhoOrder
	jobs   map[ledger.JobID]*queued
	groups map[queueKey]*queueGroup
	list   []*queueGroup // the groups, in the order they came
	last   time.Time     // the latest round's time

	// scratch, kept between rounds
	los, his, sel []float64
	stale         []*queued
	ids           []ledger.JobID
	accts         []ledger.Account
}

type queueKey struct {
	tenant ledger.TenantID
	demand ledger.GPUs
}

// queueGroup is one tenant's waiting jobs of one demand, by class, the
// highest first.
type queueGroup struct {
	key     queueKey
	i       int // index in list
	classes []*queueClass
}

type queueClass struct {
	class   Score
	members []*queued
}

// queued is one waiting job with the account last read for it.
type queued struct {
	c   Candidate
	cl  *queueClass
	i   int // index in cl.members
	at  time.Time
	acc ledger.Account
	// read is set once acc holds an account read at time at.
	read bool
}

// NewQueue returns an empty queue whose rounds use a reward with the
// given order.
func NewQueue(o RhoOrder) *Queue {
	return &Queue{order: o, jobs: map[ledger.JobID]*queued{}, groups: map[queueKey]*queueGroup{}}
}

// Len is the number of queued candidates.
func (q *Queue) Len() int { return len(q.jobs) }

// Add queues a waiting candidate. It fails, leaving the queue unchanged,
// with an error matching [ErrInvalidCandidate] for a running candidate, an
// empty job id or tenant, or a demand below 1, and [ErrDuplicateJob] if
// the job is queued already. O(classes of its group), amortized.
func (q *Queue) Add(c Candidate) error {
	switch {
	case c.Running:
		return fmt.Errorf("%w: queue: job %q is running", ErrInvalidCandidate, c.Job)
	case c.Job == "" || c.Tenant == "":
		return fmt.Errorf("%w: queue: job %q of tenant %q: empty id", ErrInvalidCandidate, c.Job, c.Tenant)
	case c.Demand < 1:
		return fmt.Errorf("%w: queue: job %q demands %d GPUs", ErrInvalidCandidate, c.Job, c.Demand)
	}
	if _, ok := q.jobs[c.Job]; ok {
		return fmt.Errorf("%w: queue: job %q", ErrDuplicateJob, c.Job)
	}
	k := queueKey{c.Tenant, c.Demand}
	g := q.groups[k]
	if g == nil {
		g = &queueGroup{key: k, i: len(q.list)}
		q.groups[k] = g
		q.list = append(q.list, g)
	}
	var class Score
	if q.order.Class != nil {
		class = q.order.Class(&c)
	}
	at, found := slices.BinarySearchFunc(g.classes, class, func(cl *queueClass, s Score) int { return s.Compare(cl.class) })
	if !found {
		g.classes = slices.Insert(g.classes, at, &queueClass{class: class})
	}
	cl := g.classes[at]
	j := &queued{c: c, cl: cl, i: len(cl.members)}
	cl.members = append(cl.members, j)
	q.jobs[c.Job] = j
	return nil
}

// Remove takes the job out of the queue and reports whether it was
// there. O(classes of its group), or O(groups) when it empties its
// group.
func (q *Queue) Remove(id ledger.JobID) bool {
	j, ok := q.jobs[id]
	if !ok {
		return false
	}
	delete(q.jobs, id)
	cl := j.cl
	last := len(cl.members) - 1
	cl.members[j.i] = cl.members[last]
	cl.members[j.i].i = j.i
	cl.members[last] = nil
	cl.members = cl.members[:last]
	if last > 0 {
		return true
	}
	k := queueKey{j.c.Tenant, j.c.Demand}
	g := q.groups[k]
	g.classes = slices.DeleteFunc(g.classes, func(x *queueClass) bool { return x == cl })
	if len(g.classes) == 0 {
		delete(q.groups, k)
		q.list = slices.Delete(q.list, g.i, g.i+1)
		for _, h := range q.list[g.i:] {
			h.i--
		}
	}
	return true
}

// ForgetAccounts drops every account the queue has read, so that the next
// round reads them again: call it after a ledger Reset, which breaks the
// bound the queue relies on.
func (q *Queue) ForgetAccounts() {
	for _, j := range q.jobs {
		j.read = false
	}
}

// rhoSlack widens every bound by a relative 10⁻⁹, far more than the
// rounding of a ledger's sums, so that floating-point error never leaves
// out a job whose ρ equals the cut's.
const rhoSlack = 1e-9

// Append appends to dst the queued candidates that a round at time now can
// reach when it can grant at most room(d) jobs of demand d: for each
// tenant and demand, a set that holds the first room(d) + 1 in the
// reward's order (see [Queue]). With a placement.Cluster as the round's
// placer, its placement.Room with every expiring candidate let go gives
// room (Room.Gangs). acc are the round's accounts, at now; with accounts
// that do not declare WaitingRhoFalls, Append appends every queued
// candidate. The order of what it appends is unspecified (a round does not
// depend on it).
//
// It fails with an error matching [ErrInvalidInput] if now is before an
// earlier call's time or acc's AppendJobAccounts answers other than its
// interface states, and [ErrUnknownJob] if acc has no account for a job it
// reads; dst is then returned as it was.
//
// Cost: O(q + r + k) on average for q queued jobs, r of them in groups
// larger than their cut, and k account reads, the jobs whose bounds place
// them near the cut; plus a call of room per group.
func (q *Queue) Append(dst []Candidate, acc Accounts, now time.Time, room func(demand ledger.GPUs) int) ([]Candidate, error) {
	if now.Before(q.last) {
		return dst, fmt.Errorf("%w: queue: round at %v after a round at %v", ErrInvalidInput, now, q.last)
	}
	q.last = now
	b, ok := acc.(interface{ WaitingRhoFalls() bool })
	if !ok || !b.WaitingRhoFalls() {
		for _, g := range q.list {
			for _, cl := range g.classes {
				for _, j := range cl.members {
					dst = append(dst, j.c)
				}
			}
		}
		return dst, nil
	}
	n0 := len(dst)
	for _, g := range q.list {
		room := max(room(g.key.demand), 0) + 1
		for _, cl := range g.classes {
			if room <= 0 {
				break
			}
			if len(cl.members) <= room {
				for _, j := range cl.members {
					dst = append(dst, j.c)
				}
				room -= len(cl.members)
				continue
			}
			var err error
			if dst, err = q.cut(dst, cl, acc, now, room); err != nil {
				clear(dst[n0:])
				return dst[:n0], err
			}
			room = 0
		}
	}
	return dst, nil
}

// cut appends the members of cl whose ρ_job may be among the room lowest:
// it reads the accounts of those whose bounds reach the room-th lowest
// upper bound, and appends those whose ρ_job, or lower bound, reaches it
// then.
func (q *Queue) cut(dst []Candidate, cl *queueClass, acc Accounts, now time.Time, room int) ([]Candidate, error) {
	n := len(cl.members)
	q.los, q.his = resize(q.los, n), resize(q.his, n)
	q.stale = q.stale[:0]
	for i, j := range cl.members {
		q.los[i], q.his[i] = j.bounds(now)
	}
	u := q.bar(room)
	for i, j := range cl.members {
		if q.los[i] <= u && !(j.read && j.at.Equal(now)) {
			q.stale = append(q.stale, j)
		}
	}
	if len(q.stale) > 0 {
		if err := q.read(acc, now); err != nil {
			return dst, err
		}
		for _, j := range q.stale {
			q.los[j.i], q.his[j.i] = j.bounds(now)
		}
		u = q.bar(room)
	}
	// Every member at or below u has just been read: its ρ_job is exact,
	// and every other member's is above u. So the room first by the
	// round's order are the room first of these.
	in := q.stale[:0]
	for i, j := range cl.members {
		if q.los[i] <= u {
			in = append(in, j)
		}
	}
	if len(in) > room {
		slices.SortFunc(in, q.compare)
		in = in[:room]
	}
	for _, j := range in {
		dst = append(dst, j.c)
	}
	clear(q.stale)
	return dst, nil
}

// compare orders two queued jobs of one class as a round does: lower
// ρ_job first, then by the tie-break, then by job id.
func (q *Queue) compare(a, b *queued) int {
	if c := cmp.Compare(a.acc.Rho, b.acc.Rho); c != 0 {
		return c
	}
	tb := q.order.TieBreak
	if tb == nil {
		tb = BySubmit
	}
	if c := tb(&a.c, &b.c); c != 0 {
		return c
	}
	return cmp.Compare(a.c.Job, b.c.Job)
}

// bar returns the room-th lowest of q.his, in O(len) on average.
func (q *Queue) bar(room int) float64 {
	q.sel = append(q.sel[:0], q.his...)
	return nth(q.sel, room-1)
}

// nth returns the k-th lowest of xs (from 0), reordering xs: Hoare's
// selection with the middle element as pivot. xs holds no NaN.
func nth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		p := xs[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] < p {
				i++
			}
			for xs[j] > p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

// read reads the accounts of q.stale at now.
func (q *Queue) read(acc Accounts, now time.Time) error {
	if len(q.stale) == 0 {
		return nil
	}
	if ba, ok := acc.(JobAccountsAppender); ok {
		q.ids = q.ids[:0]
		for _, j := range q.stale {
			q.ids = append(q.ids, j.c.Job)
		}
		as, ok := ba.AppendJobAccounts(q.accts[:0], q.ids)
		q.accts = as
		switch unknown, fault := checkBatch(len(as), len(q.ids), ok); {
		case unknown >= 0:
			return fmt.Errorf("%w: queue: no account for job %q", ErrUnknownJob, q.ids[unknown])
		case fault != "":
			return fmt.Errorf("%w: queue: %s", ErrInvalidInput, fault)
		}
		for i, j := range q.stale {
			j.acc, j.at, j.read = as[i], now, true
		}
		return nil
	}
	for _, j := range q.stale {
		a, ok := acc.JobAccount(j.c.Job)
		if !ok {
			return fmt.Errorf("%w: queue: no account for job %q", ErrUnknownJob, j.c.Job)
		}
		j.acc, j.at, j.read = a, now, true
	}
	return nil
}

// bounds returns a lower and an upper bound of the job's ρ_job at now:
// unknown before its first read (0 and +Inf); after it, the ratio of the
// Alloc read to the FairShare read plus demand × the time since, and the
// ρ read, each widened by rhoSlack.
func (j *queued) bounds(now time.Time) (lo, hi float64) {
	if !j.read {
		return 0, math.Inf(1)
	}
	hi = float64(j.acc.Rho) * (1 + rhoSlack)
	owed := float64(j.acc.FairShare) + float64(j.c.Demand)*now.Sub(j.at).Seconds()
	lo = float64(ledger.Ratio(j.acc.Alloc, ledger.GPUSeconds(owed))) * (1 - rhoSlack)
	return lo, hi
}
