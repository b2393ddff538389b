package ledger

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestTrailingWindowForgetsTheOldPast(t *testing.T) {
	l := oldAndNew(t, TrailingWindow(time.Hour))
	t1 := ts(2 * 3600)
	do(t, l, l.Advance(t1))
	if got, want := l.Begin(), ts(3600); !got.Equal(want) {
		t.Fatalf("Begin() = %v, want %v", got, want)
	}
	if _, err := l.TenantAccount("t", t0, t1); !errors.Is(err, ErrOutOfHistory) {
		t.Fatalf("window before Begin(): %v", err)
	}
	v := l.View(t1)
	a, _ := v.TenantAccount("t")
	wantAccount(t, "trailing hour", a, 2*3600, 2*3600)
	if _, err := l.JobAccount("old", ts(3600), t1); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("job that finished before Begin(): %v", err)
	}
	forgotten(t, l, v, t1, ts(3*3600))
}

func TestTrailingWindowBoundsMemory(t *testing.T) {
	l := windowedTimeline(t, TrailingWindow(100*time.Second))
	// [9899, 9999): the job ran in 50 of those 100 seconds
	wantAccount(t, "last 100 s", tenantAcct(t, l, "t", ts(9899), ts(9999)), 8*50, 8*100)
}

// windowedTimeline starts and stops an 8-GPU job every second for 10,000 s
// under h, a window of about 100 s, and checks that the tenant and the job
// keep breakpoints for the window only.
func windowedTimeline(t *testing.T, h History) *Ledger {
	t.Helper()
	l := mustNew(t, Config{Capacity: 8, History: h})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(t0, "j", "t", 8, 1))
	for i := range 10000 {
		var err error
		if i%2 == 0 {
			err = l.Start(ts(float64(i)), "j")
		} else {
			err = l.Stop(ts(float64(i)), "j")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	do(t, l, nil)
	tn := l.tenantIx["t"]
	if n := tn.s.st.len(); n > 110 {
		t.Fatalf("%v: tenant keeps %d breakpoints for a 100 s window of 1 event/s", h, n)
	}
	if n := l.jobs.get("j").alloc.st.len(); n > 110 {
		t.Fatalf("%v: job keeps %d breakpoints", h, n)
	}
	return l
}

// Two buckets of an hour keep the current hour and the one before it: the
// start of history stays on the hour while the clock moves inside one, and
// jumps a whole hour when the clock crosses the next.
func TestBucketsForgetTheOldPast(t *testing.T) {
	l := oldAndNew(t, Buckets(2, time.Hour))
	for _, tc := range []struct {
		at, begin float64
	}{
		{3599, 0}, {3600, 0}, {7199, 0}, {7200, 3600}, {9000, 3600}, {10800, 7200},
	} {
		do(t, l, l.Advance(ts(tc.at)))
		if got, want := l.Begin(), ts(tc.begin); !got.Equal(want) {
			t.Fatalf("at %v s: Begin() = %v, want %v", tc.at, got, want)
		}
	}
	// At 10800 s the window is [7200, 10800): the old job is forgotten
	// though a trailing 2 h window would still hold [3600, 10800).
	t1 := ts(10800)
	if _, err := l.TenantAccount("t", ts(7199), t1); !errors.Is(err, ErrOutOfHistory) {
		t.Fatalf("window before Begin(): %v", err)
	}
	v := l.View(t1)
	a, _ := v.TenantAccount("t")
	wantAccount(t, "two buckets, the second just begun", a, 2*3600, 2*3600)
	// 30 minutes later the current bucket holds 1800 s more, the start stays.
	a, _ = l.View(ts(12600)).TenantAccount("t")
	wantAccount(t, "half into the current bucket", a, 2*5400, 2*5400)
	if _, err := l.JobAccount("old", ts(7200), t1); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("job that finished before Begin(): %v", err)
	}
	forgotten(t, l, v, t1, ts(4*3600))
}

// A view ahead of Now() starts where the buckets would start at its time,
// and a Reset inside the oldest bucket clamps the start to itself.
func TestBucketsViewAheadAndReset(t *testing.T) {
	l := mustNew(t, Config{Capacity: 8, History: Buckets(3, 100*time.Second)})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(t0, "j", "t", 8, 1))
	do(t, l, l.Start(t0, "j"))
	do(t, l, l.Advance(ts(250)))
	if got := l.Begin(); !got.Equal(t0) {
		t.Fatalf("Begin() at 250 s = %v, want t0", got)
	}
	// at 450 s the buckets are [200, 300), [300, 400), [400, 450)
	a, _ := l.View(ts(450)).TenantAccount("t")
	wantAccount(t, "view at 450 s", a, 8*250, 8*250)
	do(t, l, l.Reset(ts(260)))
	a, _ = l.View(ts(350)).TenantAccount("t") // [max(260, 100), 350)
	wantAccount(t, "after reset", a, 8*90, 8*90)
}

func TestBucketsBoundMemory(t *testing.T) {
	l := windowedTimeline(t, Buckets(4, 25*time.Second))
	// at 9999 s the window is [9900, 9999): the job ran in 50 of those 99 s
	if got := l.Begin(); !got.Equal(ts(9900)) {
		t.Fatalf("Begin() = %v, want 9900 s", got)
	}
	wantAccount(t, "the buckets", tenantAcct(t, l, "t", ts(9900), ts(9999)), 8*50, 8*99)
}

func TestBucketsString(t *testing.T) {
	h := Buckets(24, time.Hour)
	if got, want := h.String(), "24 buckets of 1h0m0s"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	if n, w := h.Bucketed(); n != 24 || w != time.Hour || h.Window() != 0 {
		t.Fatalf("Bucketed() = %d, %v; Window() = %v", n, w, h.Window())
	}
	if n, w := TrailingWindow(time.Hour).Bucketed(); n != 0 || w != 0 {
		t.Fatalf("a trailing window's Bucketed() = %d, %v", n, w)
	}
}

// With half-life H a constant rate r accrues r·(1 − e^(−λT))/λ over T and
// service h before the end of the window counts half.
func TestHalfLifeDecay(t *testing.T) {
	const h = 3600.0
	lam := math.Ln2 / h
	l := mustNew(t, Config{Capacity: 8, History: HalfLife(time.Hour)})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(t0, "j", "t", 8, 1))
	do(t, l, l.Start(t0, "j"))
	do(t, l, l.Stop(ts(h), "j")) // still active: fair share keeps accruing
	t2 := ts(2 * h)
	do(t, l, l.Advance(t2))
	// alloc: ∫_0^H 8 e^(−λ(2H−τ)) dτ = 8/λ·(1/2 − 1/4) = 2/λ
	// fair:  ∫_0^2H 8 e^(−λ(2H−τ)) dτ = 8/λ·(1 − 1/4) = 6/λ
	a := tenantAcct(t, l, "t", t0, t2)
	wantAccount(t, "decayed", a, 2/lam, 6/lam)
	if !near(float64(a.Rho), 1.0/3) {
		t.Fatalf("rho %v, want 1/3", a.Rho)
	}
	// A window's account is decayed to its own end: [0, H) alone is 4/λ.
	wantAccount(t, "first hour", tenantAcct(t, l, "t", t0, ts(h)), 4/lam, 4/lam)
	// Unbounded history would say 8H / 16H = 1/2: decay forgets the running hour faster.
	v := l.View(t2)
	va, _ := v.TenantAccount("t")
	if va != a {
		t.Fatalf("view %+v, account %+v", va, a)
	}
	// Long histories stay finite: 10 years of events at one per day.
	for d := 1; d <= 3650; d++ {
		if err := l.Start(ts(2*h+float64(d)*86400), "j"); err != nil {
			t.Fatal(err)
		}
		if err := l.Stop(ts(2*h+float64(d)*86400+h), "j"); err != nil {
			t.Fatal(err)
		}
	}
	end := ts(2*h + 3651*86400)
	a = tenantAcct(t, l, "t", t0, end)
	if math.IsInf(float64(a.Alloc), 0) || math.IsNaN(float64(a.Alloc)) || a.FairShare > 8/GPUSeconds(lam)*(1+1e-9) {
		t.Fatalf("decayed account after 10 years: %+v", a)
	}
	do(t, l, nil)
}

func TestResetStartsHistoryAnew(t *testing.T) {
	l := mustNew(t, Config{Capacity: 8})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(t0, "done", "t", 8, 1))
	do(t, l, l.Start(t0, "done"))
	do(t, l, l.Finish(ts(10), "done", Completed))
	do(t, l, l.Submit(ts(10), "run", "t", 4, 1))
	do(t, l, l.Start(ts(10), "run"))
	do(t, l, l.Reset(ts(20)))
	if !l.Begin().Equal(ts(20)) {
		t.Fatalf("Begin() = %v", l.Begin())
	}
	if _, err := l.TenantAccount("t", t0, ts(30)); !errors.Is(err, ErrOutOfHistory) {
		t.Fatalf("window before reset: %v", err)
	}
	if _, err := l.JobAccount("done", ts(20), ts(30)); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("job finished before reset: %v", err)
	}
	v := l.View(ts(30))
	a, _ := v.TenantAccount("t")
	wantAccount(t, "after reset", a, 40, 40)
	ja, _ := v.JobAccount("run")
	wantAccount(t, "running job after reset", ja, 40, 40)
	do(t, l, l.Submit(ts(30), "done", "t", 1, 1)) // id is free again
}

// forgotten checks, at t1, that job "old" (finished before Begin()) is
// gone from view v and from a batch (which stops there, after "new"), and
// that its id is free again: resubmitted at t1, it runs up to until.
func forgotten(t *testing.T, l *Ledger, v View, t1, until time.Time) {
	t.Helper()
	if _, ok := v.JobAccount("old"); ok {
		t.Fatal("view still reports a forgotten job")
	}
	want, _ := v.JobAccount("new")
	if got, ok := v.AppendJobAccounts(nil, []JobID{"new", "old", "new"}); ok || len(got) != 1 || got[0] != want {
		t.Fatalf("AppendJobAccounts(new, old, new) = %v, %v; want [%v], false", got, ok, want)
	}
	do(t, l, l.Submit(t1, "old", "t", 1, 1))
	wantAccount(t, "reused id", jobAcct(t, l, "old", t1, until), 0, 3600)
}

// oldAndNew is tenant t under h on 8 GPUs: job old (4 GPUs) runs over
// [0, 600 s) and finishes, then job new (2 GPUs) runs from 600 s.
func oldAndNew(t *testing.T, h History) *Ledger {
	t.Helper()
	l := mustNew(t, Config{Capacity: 8, History: h})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(t0, "old", "t", 4, 1))
	do(t, l, l.Start(t0, "old"))
	do(t, l, l.Finish(ts(600), "old", Completed))
	do(t, l, l.Submit(ts(600), "new", "t", 2, 1))
	do(t, l, l.Start(ts(600), "new"))
	return l
}
