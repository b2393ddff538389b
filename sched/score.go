package sched

import (
	"cmp"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// MaxScoreLen is the number of components a [Score] holds. Lexicographic
// combinations longer than this keep their first MaxScoreLen components.
const MaxScoreLen = 4

// Score is the value of a [Reward]: up to [MaxScoreLen] components compared
// lexicographically, the first being the most significant; higher is better.
// Most rewards have a single component. A missing component compares as 0,
// so a score of length 1 and the same score padded with zeros are equal.
//
// Score is a small value type (no allocation), so that a round can compute
// every candidate's reward once and compare it cheaply afterwards.
type Score struct {
	v [MaxScoreLen]float64
	n uint8
}

// ScoreOf returns the score with the given components, most significant
// first. Components beyond [MaxScoreLen] are dropped.
func ScoreOf(xs ...float64) Score {
	var s Score
	for _, x := range xs {
		if int(s.n) == MaxScoreLen {
			break
		}
		s.v[s.n] = x
		s.n++
	}
	return s
}

// Len is the number of components.
func (s Score) Len() int { return int(s.n) }

// At returns component i, or 0 if i is out of range.
func (s Score) At(i int) float64 {
	if i < 0 || i >= int(s.n) {
		return 0
	}
	return s.v[i]
}

// Compare orders scores lexicographically: -1 if s ranks below o, 0 if equal,
// +1 if s ranks above o. Components compare as [cmp.Compare] does on float64
// (-Inf below every finite value; NaN below -Inf), so the order is total.
func (s Score) Compare(o Score) int {
	n := max(s.n, o.n)
	for i := uint8(0); i < n; i++ {
		if c := cmp.Compare(s.v[i], o.v[i]); c != 0 {
			return c
		}
	}
	return 0
}

// String formats a one-component score as a number ("-0.5") and a longer one
// as a bracketed list ("[1 -0.5]").
func (s Score) String() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	if s.n == 1 {
		return f(s.v[0])
	}
	parts := make([]string, s.n)
	for i := range parts {
		parts[i] = f(s.v[i])
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Reward is the Phase 2 hook: the value of granting candidate c a lease,
// given the job's account. The candidate with the highest reward inside the
// chosen tenant is picked; equal rewards are ordered by the [TieBreak].
//
// A round calls the reward at most once per candidate, for all candidates of
// a tenant when Phase 1 first reaches that tenant, so rewards must not depend
// on the order of calls or on the round's progress. c must not be modified.
type Reward func(c *Candidate, job ledger.Account) Score

// NegJobRho is the reward of the paper's Algorithm 2: −ρ_job, so that the job
// with the largest debt inside the tenant goes first. A job with ρ = +Inf
// scores −Inf. It is the default reward.
//
// Note that a job submitted at the very instant of the round has been owed
// nothing yet, so its ρ is 1 (see [ledger.Rho]) and it ranks behind every job
// of its tenant that is in debt; [NewJobFirst] changes that.
func NegJobRho(_ *Candidate, job ledger.Account) Score {
	return ScoreOf(0 - float64(job.Rho)) // 0 − ρ, not −ρ: no negative zero
}

// NeverRan scores 1 for a job that has never held a lease (Leases == 0 and
// not running) and 0 otherwise. On its own it is a coarse reward; it is meant
// as the first level of a [Lexicographic] combination.
func NeverRan(c *Candidate, _ ledger.Account) Score {
	if c.Leases == 0 && !c.Running {
		return ScoreOf(1)
	}
	return ScoreOf(0)
}

// NewJobFirst is this library's new-job priority, the Phase 2 rule of the
// paper's simulator. The paper does not publish its formula; ours is
// lexicographic: every job that has never held a lease ranks above every job
// that has, and within each group −ρ_job decides. It is exactly
// Lexicographic(NeverRan, NegJobRho), without the closure.
//
// Rationale: short jobs dominate production traces, so starting new jobs
// quickly cuts the average JCT; a job already running or suspended has been
// started once and keeps its place by −ρ_job.
func NewJobFirst(c *Candidate, job ledger.Account) Score {
	fresh := 0.0
	if c.Leases == 0 && !c.Running {
		fresh = 1
	}
	return ScoreOf(fresh, 0-float64(job.Rho))
}

// UrgentFirst scores 1 for a job marked [Candidate.Urgent] and 0 otherwise:
// the user-flagged urgency of the paper's pluggable factors. Use it as the
// first level of a [Lexicographic] combination so that urgent jobs of the
// chosen tenant go first.
func UrgentFirst(c *Candidate, _ ledger.Account) Score {
	if c.Urgent {
		return ScoreOf(1)
	}
	return ScoreOf(0)
}

// LongJobCredit returns a reward worth perLease for every lease the job has
// held, counting at most maxLeases: long jobs that have run for many leases
// get credit so that they are not preempted endlessly by fresher work, and
// the cap bounds how far the credit can outweigh ρ. Combine it with
// [NegJobRho] through [WeightedSum]. maxLeases < 0 counts as 0.
func LongJobCredit(perLease float64, maxLeases int) Reward {
	maxLeases = max(maxLeases, 0)
	return func(c *Candidate, _ ledger.Account) Score {
		return ScoreOf(perLease * float64(min(max(c.Leases, 0), maxLeases)))
	}
}

// Term is one weighted reward of a [WeightedSum].
type Term struct {
	Weight float64
	Reward Reward
}

// WeightedSum returns the reward Σ Weight × Reward, component by component
// (scalar rewards give a scalar sum; the length of the result is the longest
// term's length, missing components counting as 0). A term with a nil
// reward is ignored.
func WeightedSum(terms ...Term) Reward {
	ts := make([]Term, 0, len(terms))
	for _, t := range terms {
		if t.Reward != nil {
			ts = append(ts, t)
		}
	}
	return func(c *Candidate, job ledger.Account) Score {
		var out Score
		for _, t := range ts {
			s := t.Reward(c, job)
			for i := uint8(0); i < s.n; i++ {
				out.v[i] += t.Weight * s.v[i]
			}
			out.n = max(out.n, s.n)
		}
		return out
	}
}

// Lexicographic returns the reward that concatenates the components of rs:
// rs[0] decides, rs[1] breaks its ties, and so on. Components beyond
// [MaxScoreLen] are dropped. A nil reward is ignored.
func Lexicographic(rs ...Reward) Reward {
	list := make([]Reward, 0, len(rs))
	for _, r := range rs {
		if r != nil {
			list = append(list, r)
		}
	}
	return func(c *Candidate, job ledger.Account) Score {
		var out Score
		for _, r := range list {
			s := r(c, job)
			for i := uint8(0); i < s.n && int(out.n) < MaxScoreLen; i++ {
				out.v[out.n] = s.v[i]
				out.n++
			}
		}
		return out
	}
}

// SmallestNewFirst is new-job priority with the smallest demand first: every
// job that has never held a lease ranks above every job that has, and among
// them the smaller gang goes first; −ρ_job decides within each demand and
// among the jobs that ran (and the [TieBreak], by default the earlier
// submission, after it). It is the order of a tenant's new jobs that keeps a
// head-of-line gang that does not fit from holding back the tenant's small
// jobs in the fair stage.
func SmallestNewFirst(c *Candidate, job ledger.Account) Score {
	if c.Leases == 0 && !c.Running {
		return ScoreOf(1, 0-float64(c.Demand), 0-float64(job.Rho))
	}
	return ScoreOf(0, 0, 0-float64(job.Rho))
}

// LongWaitFirst returns a reward that ranks every waiting candidate that has
// waited at least after by now (since [Candidate.WaitingSince]) above every
// other, the earliest submission first among them; every other candidate,
// and a running one, scores −Inf, so that the next level of a
// [Lexicographic] combination orders them. It is the starvation rule of the
// authors' public simulator (six hours), not of the paper. A candidate with
// no WaitingSince never counts as waiting long.
func LongWaitFirst(now time.Time, after time.Duration) Reward {
	return func(c *Candidate, _ ledger.Account) Score {
		if c.Running || c.WaitingSince.IsZero() || now.Sub(c.WaitingSince) < after {
			return ScoreOf(math.Inf(-1))
		}
		return ScoreOf(0 - float64(c.Submit.UnixNano()))
	}
}
