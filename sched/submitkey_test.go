package sched

import (
	"cmp"
	"fmt"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/astraea-sched/astraea/ledger"
	"pgregory.net/rapid"
)

// timeRep is time.Time's layout: the wall clock, the monotonic reading
// (or the wall seconds) and the location.
type timeRep struct {
	wall uint64
	ext  int64
	loc  *time.Location
}

// stepMono returns t, which carries a monotonic reading, with that reading
// moved by d and its wall clock unchanged: the pair of readings two calls
// of time.Now around a step of the wall clock give. ok is false where
// time.Time is not laid out as timeRep.
func stepMono(t time.Time, d time.Duration) (_ time.Time, ok bool) {
	if unsafe.Sizeof(t) != unsafe.Sizeof(timeRep{}) {
		return t, false
	}
	wall := t.Round(0)
	(*timeRep)(unsafe.Pointer(&t)).ext += int64(d)
	return t, t.Round(0) == wall
}

// drawSubmit draws a submission time from a few small sets, so that equal
// and nearly equal times are frequent: a base time and times a few
// nanoseconds or many years from it, times before 1970, the zero time,
// times at and beyond the bounds of the submit key, and times that carry a
// monotonic reading, some with the reading stepped against the wall clock
// (so that comparing them by their wall clock would be wrong).
func drawSubmit(t *rapid.T, now time.Time) time.Time {
	const lim = 9223372035
	base := time.Date(2026, 3, 1, 12, 0, 0, 500, time.UTC)
	switch rapid.IntRange(0, 6).Draw(t, "submitKind") {
	case 0:
		return base
	case 1:
		return base.Add(time.Duration(rapid.IntRange(-3, 3).Draw(t, "ns")))
	case 2:
		return base.Add(time.Duration(rapid.IntRange(-2, 2).Draw(t, "years")) * 100 * 8766 * time.Hour)
	case 3:
		return time.Unix(int64(rapid.IntRange(-3, 0).Draw(t, "sec")), int64(rapid.IntRange(0, 2).Draw(t, "nsec"))*499_999_999)
	case 4:
		return rapid.SampledFrom([]time.Time{
			{},
			time.Unix(lim, 999_999_999), time.Unix(lim+1, 0), time.Unix(-lim, 0), time.Unix(-lim-1, 999_999_999),
			time.Unix(-lim, 0).In(time.FixedZone("X", 3600)),
		}).Draw(t, "edge")
	case 5:
		return now.Add(time.Duration(rapid.IntRange(-2, 2).Draw(t, "monoNs")))
	default:
		m := now.Add(time.Duration(rapid.IntRange(-2, 2).Draw(t, "monoNs")))
		if s, ok := stepMono(m, time.Duration(rapid.IntRange(-2, 2).Draw(t, "step"))*time.Second); ok {
			return s
		}
		return m
	}
}

// The submit key, where a time has one, orders times as Compare does.
func TestPropertySubmitKeyOrdersAsCompare(t *testing.T) {
	now := time.Now()
	rapid.Check(t, func(t *rapid.T) {
		a, b := drawSubmit(t, now), drawSubmit(t, now)
		ka, kb := submitKey(a), submitKey(b)
		if ka == noSubmitKey || kb == noSubmitKey {
			return
		}
		if got, want := cmp.Compare(ka, kb), a.Compare(b); got != want {
			t.Fatalf("keys of %v and %v compare %d, the times %d", a, b, got, want)
		}
	})
}

// TestPropertySubmitKeyMatchesSlowPath runs rounds with few distinct
// rewards and submission times from drawSubmit, under the default
// tie-break, whose heap entries order equal rewards by their submit keys:
// Round must agree with the reference round and take its steps in the
// order of the same round under BySubmit given explicitly (which compares
// the candidates' times). Some rewards are given a second component of 0,
// equal to a missing one, so that entries with and without a submit key
// meet.
func TestPropertySubmitKeyMatchesSlowPath(t *testing.T) {
	now := time.Now()
	rapid.Check(t, func(t *rapid.T) {
		cl := cluster(t, rapid.IntRange(1, 2).Draw(t, "nodes"), 4)
		acc := newAccounts()
		nTen := rapid.IntRange(1, 2).Draw(t, "tenants")
		for k := range nTen {
			acc.tenant(ledger.TenantID(fmt.Sprintf("T%d", k)), ledger.GPUSeconds(900*k), 7200, 1)
		}
		long := map[ledger.JobID]bool{}
		var cands []Candidate
		for j := range rapid.IntRange(0, 12).Draw(t, "jobs") {
			id, ten := drawJobTenant(t, j, nTen)
			d := ledger.GPUs(rapid.IntRange(1, 3).Draw(t, "demand"))
			cands = append(cands, Candidate{Job: id, Tenant: ten, Demand: d, Submit: drawSubmit(t, now)})
			acc.job(id, ledger.Rho(rapid.IntRange(0, 1).Draw(t, "rho"))/2)
			long[id] = rapid.IntRange(0, 3).Draw(t, "long") == 0
		}
		reward := func(c *Candidate, a ledger.Account) Score {
			if long[c.Job] {
				return ScoreOf(0-float64(a.Rho), 0)
			}
			return NegJobRho(c, a)
		}
		s := scenario{cl: cl, in: Input{Accounts: acc, Candidates: cands, Lease: lease, Placer: cl},
			opts: Options{NoBackfill: rapid.Bool().Draw(t, "noBackfill")}}
		if rapid.Bool().Draw(t, "mixedLengths") {
			s.opts.Reward = reward
		}
		got := s.matchesReference(t)
		_, _, steps := s.run(t, cands, nil)
		slow := s
		slow.opts.TieBreak = BySubmit
		want, _, slowSteps := slow.run(t, cands, nil)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("default tie-break differs from BySubmit\n got  %+v\n want %+v", got, want)
		}
		if !reflect.DeepEqual(steps, slowSteps) {
			t.Fatalf("default tie-break steps differ from BySubmit's\n got  %+v\n want %+v", steps, slowSteps)
		}
	})
}

// drawJobTenant returns job j's id, j%02d, and a tenant drawn for it among
// T0…T(nTen-1).
func drawJobTenant(t *rapid.T, j, nTen int) (ledger.JobID, ledger.TenantID) {
	return ledger.JobID(fmt.Sprintf("j%02d", j)), ledger.TenantID(fmt.Sprintf("T%d", rapid.IntRange(0, nTen-1).Draw(t, "tenant")))
}
