package ledger

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// v3Script drives a two-level ledger through 300 pseudo-random events
// (every kind of event, some of them rejected) from a fixed seed. The
// version-3 fixtures in testdata/v3 are its snapshots as the ledger of
// that version wrote them, so restoring them compares today's numbers
// with that ledger's.
func v3Script(t testing.TB, mode Mode, h History) *Ledger {
	t.Helper()
	l := mustNew(t, Config{Mode: mode, Capacity: 16, Start: t0, History: h})
	r := rand.New(rand.NewPCG(3, 30))
	tenants := []TenantID{"a", "b", "c", "d", "e"}
	at := t0
	for range 300 {
		at = at.Add(time.Duration(r.IntN(20_000)) * time.Millisecond)
		tn := tenants[r.IntN(len(tenants))]
		jb := JobID(fmt.Sprint("j", r.IntN(12)))
		w := []float64{0.5, 1, 2, 3}[r.IntN(4)]
		switch r.IntN(12) {
		case 0, 1:
			_ = l.AddTenant(at, tn, w)
		case 2:
			_ = l.SetTenantWeight(at, tn, w)
		case 3:
			_ = l.RemoveTenant(at, tn)
		case 4:
			_ = l.SetCapacity(at, GPUs(8+r.IntN(24)))
		case 5, 6:
			_ = l.Submit(at, jb, tn, GPUs(1+r.IntN(8)), w)
		case 7:
			_ = l.SetJobWeight(at, jb, w)
		case 8, 9:
			_ = l.Start(at, jb)
		case 10:
			_ = l.Stop(at, jb)
		case 11:
			_ = l.Finish(at, jb, Completed)
		}
	}
	do(t, l, l.Advance(at))
	return l
}

// The numbers of today's tree ledger on a two-level history are the
// numbers of the version-3 ledger, which knew no trees: each fixture,
// written by that ledger, restores to the accounts and rates that the same
// events give today, for every tenant and job over several windows, and
// both continue alike.
func TestRestoreVersion3AgreesWithToday(t *testing.T) {
	for _, mode := range []Mode{DemandAware, QuotaShare} {
		for name, h := range map[string]History{"unbounded": Unbounded(), "trailing": TrailingWindow(300 * time.Second), "halflife": HalfLife(10 * time.Minute)} {
			t.Run(mode.String()+"/"+name, func(t *testing.T) {
				old := restoreFixture(t, 3, mode.String()+"-"+name)
				cur := v3Script(t, mode, h)
				compareLedgers(t, "restored", old, cur)
				for _, l := range []*Ledger{old, cur} {
					now := l.Now()
					_ = l.AddTenant(now.Add(time.Second), "late", 2)
					_ = l.SetCapacity(now.Add(2*time.Second), 40)
					_ = l.Submit(now.Add(3*time.Second), "late/1", "late", 4, 1)
					_ = l.Start(now.Add(3*time.Second), "late/1")
					do(t, l, l.Advance(now.Add(time.Minute)))
				}
				compareLedgers(t, "continued", old, cur)
				writtenBack(t, old)
			})
		}
	}
}

// compareLedgers checks that two ledgers agree on every tenant's and job's
// account over [Begin, Now), over its second half, and on every rate.
func compareLedgers(t *testing.T, when string, x, y *Ledger) {
	t.Helper()
	if !x.Now().Equal(y.Now()) || !x.Begin().Equal(y.Begin()) {
		t.Fatalf("%s: clocks %v %v, %v %v", when, x.Now(), x.Begin(), y.Now(), y.Begin())
	}
	b, n := x.Begin(), x.Now()
	windows := [][2]time.Time{{b, n}, {b.Add(n.Sub(b) / 2), n}}
	for id := range x.Tenants() {
		for _, w := range windows {
			p, err1 := x.TenantAccount(id, w[0], w[1])
			q, err2 := y.TenantAccount(id, w[0], w[1])
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: tenant %s: %v, %v", when, id, err1, err2)
			}
			agree(t, when+" tenant "+string(id)+" alloc", p.Alloc, q.Alloc)
			agree(t, when+" tenant "+string(id)+" fair share", p.FairShare, q.FairShare)
		}
		p, _ := x.Tenant(id)
		q, _ := y.Tenant(id)
		agree(t, when+" tenant "+string(id)+" fair rate", p.FairRate, q.FairRate)
		agree(t, when+" tenant "+string(id)+" quota", p.Quota, q.Quota)
	}
	for _, j := range x.jobs.all() {
		for _, w := range windows {
			p, err1 := x.JobAccount(j.id, w[0], w[1])
			q, err2 := y.JobAccount(j.id, w[0], w[1])
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: job %s: %v, %v", when, j.id, err1, err2)
			}
			agree(t, when+" job "+string(j.id)+" alloc", p.Alloc, q.Alloc)
			agree(t, when+" job "+string(j.id)+" fair share", p.FairShare, q.FairShare)
		}
	}
	sameCluster(t, when, x, y, b, n)
}
