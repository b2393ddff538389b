package ledger

import (
	"testing"
	"time"
)

// seriesOf builds a series of the given breakpoints, each in a block of its
// own and unchecked.
func seriesOf(ps ...point) series {
	var s series
	for _, p := range ps {
		s.st.open(p)
	}
	return s
}

// Check finds each kind of corruption it documents. Every case breaks one
// invariant of a sample ledger (with a running job) behind the API's back.
func TestCheckFindsCorruption(t *testing.T) {
	build := func(t *testing.T, h History) *Ledger {
		l := sampleLedger(t, h)
		do(t, l, l.Start(ts(9), "a1"))
		return l
	}
	job := func(l *Ledger, id JobID) *job { return l.jobs.get(id) }
	tnt := func(l *Ledger, id TenantID) *tenant { return l.tenantIx[id] }
	for _, tc := range []struct {
		name    string
		history History
		corrupt func(l *Ledger)
	}{
		{"the clock before its base", Unbounded(), func(l *Ledger) { l.base = l.now + 1 }},
		{"a negative capacity", Unbounded(), func(l *Ledger) { l.capacity = -1 }},
		{"a capacity above MaxGPUs", Unbounded(), func(l *Ledger) { l.capacity = MaxGPUs + 1 }},
		{"a job not found under its id", Unbounded(), func(l *Ledger) { job(l, "a2").id = "zz" }},
		{"a job of a tenant the ledger does not know", Unbounded(), func(l *Ledger) { job(l, "a2").tn = &tenant{id: "ghost"} }},
		{"a job without demand", Unbounded(), func(l *Ledger) { job(l, "b1").demand = 0 }},
		{"a job with an invalid weight", Unbounded(), func(l *Ledger) { job(l, "b1").weight = -1 }},
		{"an active job outside its θ-group", Unbounded(), func(l *Ledger) { job(l, "a2").grp = nil }},
		{"an active job whose last segment has another weight", Unbounded(), func(l *Ledger) {
			j := job(l, "a2")
			j.segs[len(j.segs)-1].w = 99
		}},
		{"a running job billed at another rate", Unbounded(), func(l *Ledger) { job(l, "a1").demand++ }},
		{"a finished job without a final state", Unbounded(), func(l *Ledger) { job(l, "b1").final = 0 }},
		{"a finished job that finished before its submit", Unbounded(), func(l *Ledger) {
			j := job(l, "b1")
			j.finish = j.submit - 1
		}},
		{"a finished job still in a group", Unbounded(), func(l *Ledger) { job(l, "b1").grp = job(l, "a2").grp }},
		{"a job in an unknown state", Unbounded(), func(l *Ledger) { job(l, "b1").state = finished + 1 }},
		{"segments out of order", Unbounded(), func(l *Ledger) {
			j := job(l, "a2")
			j.segs[1].from = j.segs[0].from
		}},
		{"a finish list without a trailing window", Unbounded(), func(l *Ledger) { l.done = append(l.done, job(l, "b1")) }},
		{"a trailing window's finish list missing a job", TrailingWindow(time.Hour), func(l *Ledger) { l.done = nil }},
		{"a finish list holding an active job", TrailingWindow(time.Hour), func(l *Ledger) { l.done[0] = job(l, "a2") }},
		{"buckets' finish list missing a job", Buckets(2, time.Hour), func(l *Ledger) { l.done = nil }},
		{"buckets' finish list holding an active job", Buckets(2, time.Hour), func(l *Ledger) { l.done[0] = job(l, "a2") }},
		{"a bucket count on a trailing window", TrailingWindow(time.Hour), func(l *Ledger) { l.hist.n = 2 }},
		{"the running total off", Unbounded(), func(l *Ledger) { l.running++ }},
		{"a tenant missing from the index", Unbounded(), func(l *Ledger) { delete(l.tenantIx, "c") }},
		{"a tenant indexed under another id", Unbounded(), func(l *Ledger) { l.tenantIx["c"] = tnt(l, "a") }},
		{"ΣW off", Unbounded(), func(l *Ledger) { l.root.kidW += 1 }},
		{"a tenant's demand off", Unbounded(), func(l *Ledger) { tnt(l, "a").demand++ }},
		{"a tenant's allocation off", Unbounded(), func(l *Ledger) { tnt(l, "a").alloc++ }},
		{"a tenant's active-job count off", Unbounded(), func(l *Ledger) { tnt(l, "b").nActive++ }},
		{"a tenant's active weight off", Unbounded(), func(l *Ledger) { tnt(l, "a").activeW += 1 }},
		{"a removed tenant with active jobs", Unbounded(), func(l *Ledger) { job(l, "a2").tn, tnt(l, "c").nActive = tnt(l, "c"), 1 }},
		{"a share per unit weight off its formula", Unbounded(), func(l *Ledger) { l.root.unit *= 2 }},
		{"a registered tenant outside its kid group", Unbounded(), func(l *Ledger) { tnt(l, "a").pg = nil }},
		{"a kid group weighing its members wrong", Unbounded(), func(l *Ledger) { tnt(l, "a").pg.w += 1 }},
		{"a tenant with jobs and registered children", Unbounded(), func(l *Ledger) { tnt(l, "a").nKids = 1 }},
		{"a tenant's groups miscounted", Unbounded(), func(l *Ledger) { tn := tnt(l, "a"); tn.groups = tn.groups[:len(tn.groups)-1] }},
		{"a group miscounting its jobs", Unbounded(), func(l *Ledger) { tnt(l, "a").groups[0].n++ }},
		{"a group at the wrong index", Unbounded(), func(l *Ledger) { tnt(l, "a").groups[0].ix = 7 }},
		{"the cluster's capacity rate off", Unbounded(), func(l *Ledger) { l.capacity = 23 }},
		{"two breakpoints at one time", Unbounded(), func(l *Ledger) { l.capa = seriesOf(point{t: 5, r: 24}, point{t: 5, r: 24}) }},
		{"breakpoints out of order", Unbounded(), func(l *Ledger) { l.capa = seriesOf(point{t: 5, r: 16}, point{t: 7, r: 16}, point{t: 6, r: 24}) }},
		{"a breakpoint after now", Unbounded(), func(l *Ledger) { l.capa = seriesOf(point{t: l.now + 1, r: 24}) }},
		{"a breakpoint before the clock began", Unbounded(), func(l *Ledger) { l.capa = seriesOf(point{t: -1, r: 24}) }},
		{"a negative breakpoint value", Unbounded(), func(l *Ledger) { l.capa = seriesOf(point{t: 0, v: -1, r: 24}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := build(t, tc.history)
			tc.corrupt(l)
			if err := l.Check(); err == nil {
				t.Fatal("Check found nothing")
			}
		})
	}
	for _, h := range []History{Unbounded(), TrailingWindow(time.Hour), Buckets(2, time.Hour)} {
		if err := build(t, h).Check(); err != nil {
			t.Fatalf("%v: the untouched sample fails Check: %v", h, err)
		}
	}
}
