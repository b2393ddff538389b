package ledger

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)

// ts returns t0 plus s seconds.
func ts(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// mins returns t0 plus m minutes.
func mins(m float64) time.Time { return ts(m * 60) }

func mustNew(t testing.TB, cfg Config) *Ledger {
	t.Helper()
	if cfg.Start.IsZero() {
		cfg.Start = t0
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return l
}

// do applies an event that must succeed and verifies the invariants.
func do(t testing.TB, l *Ledger, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

func wantAccount(t testing.TB, what string, got Account, alloc, fair float64) {
	t.Helper()
	if !near(float64(got.Alloc), alloc) || !near(float64(got.FairShare), fair) {
		t.Fatalf("%s: got alloc %v fair %v, want %v / %v", what, got.Alloc, got.FairShare, alloc, fair)
	}
	if want := Ratio(GPUSeconds(alloc), GPUSeconds(fair)); !near(float64(got.Rho), float64(want)) && !(got.Rho.IsInf() && want.IsInf()) {
		t.Fatalf("%s: rho %v, want %v", what, got.Rho, want)
	}
}

func tenantAcct(t testing.TB, l *Ledger, id TenantID, from, to time.Time) Account {
	t.Helper()
	a, err := l.TenantAccount(id, from, to)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func jobAcct(t testing.TB, l *Ledger, id JobID, from, to time.Time) Account {
	t.Helper()
	a, err := l.JobAccount(id, from, to)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// §六: an 8-GPU cluster with two equal-weight active jobs needing 1 and 8
// GPUs. The weighted share of each is 4 GPUs, but the 1-GPU job is owed only
// 1 GPU per second (the min with its demand); the 8-GPU job is owed 4.
func TestPaperSection6EightGPUExample(t *testing.T) {
	for _, mode := range []Mode{DemandAware, QuotaShare} {
		t.Run(mode.String(), func(t *testing.T) {
			l := mustNew(t, Config{Mode: mode, Capacity: 8})
			do(t, l, l.AddTenant(t0, "only", 1))
			do(t, l, l.Submit(t0, "small", "only", 1, 1))
			do(t, l, l.Submit(t0, "big", "only", 8, 1))
			do(t, l, l.Start(t0, "big"))
			t1 := ts(3600)
			do(t, l, l.Advance(t1))
			v := l.View(t1)
			if r, _ := v.JobFairRate("small"); !near(r, 1) {
				t.Fatalf("small fair rate %v, want 1", r)
			}
			if r, _ := v.JobFairRate("big"); !near(r, 4) {
				t.Fatalf("big fair rate %v, want 4", r)
			}
			wantAccount(t, "small", jobAcct(t, l, "small", t0, t1), 0, 3600)
			wantAccount(t, "big", jobAcct(t, l, "big", t0, t1), 8*3600, 4*3600)
			// Tenant: Eq. 8 min(9, 8) = 8; Eq. 16 quota 8.
			wantAccount(t, "tenant", tenantAcct(t, l, "only", t0, t1), 8*3600, 8*3600)
		})
	}
}

// §五 and §十八.9: 6 GPUs; Job1 needs 6, Job2 and Job3 need 3.
// Finish-time rotation over 20 minutes gives 60/30/30 GPU·min although the
// fair shares are 40/40/40; the LTGF schedule (Job1 10 min, then Job2 and
// Job3 together 20 min) gives 60/60/60 GPU·min over 30 minutes, ρ = 1 each.
func TestPaperSection5SixGPUCounterexample(t *testing.T) {
	tests := map[string]struct {
		end                  float64 // minutes
		small                float64 // minutes Job2 and Job3 run, from minute 10
		alloc1, alloc2       float64 // GPU·min
		fairEach, rho1, rho2 float64
	}{
		"finish-time rotation over 20 minutes gives 60/30/30": {20, 10, 60, 30, 40, 1.5, 0.75},
		"LTGF over 30 minutes gives 60/60/60":                 {30, 20, 60, 60, 60, 1, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := mustNew(t, Config{Capacity: 6})
			do(t, l, l.AddTenant(t0, "t", 1))
			for _, j := range []struct {
				id JobID
				d  GPUs
			}{{"job1", 6}, {"job2", 3}, {"job3", 3}} {
				do(t, l, l.Submit(t0, j.id, "t", j.d, 1))
			}
			do(t, l, l.Start(mins(0), "job1"))
			do(t, l, l.Stop(mins(10), "job1"))
			do(t, l, l.Start(mins(10), "job2"))
			do(t, l, l.Start(mins(10), "job3"))
			do(t, l, l.Stop(mins(10+tc.small), "job2"))
			do(t, l, l.Stop(mins(10+tc.small), "job3"))
			end := mins(tc.end)
			do(t, l, l.Advance(end))
			gm := func(a float64) float64 { return a * 60 } // GPU·min → GPU·s
			a1 := jobAcct(t, l, "job1", t0, end)
			a2 := jobAcct(t, l, "job2", t0, end)
			a3 := jobAcct(t, l, "job3", t0, end)
			wantAccount(t, "job1", a1, gm(tc.alloc1), gm(tc.fairEach))
			wantAccount(t, "job2", a2, gm(tc.alloc2), gm(tc.fairEach))
			wantAccount(t, "job3", a3, gm(tc.alloc2), gm(tc.fairEach))
			if !near(float64(a1.Rho), tc.rho1) || !near(float64(a2.Rho), tc.rho2) {
				t.Fatalf("rho %v %v, want %v %v", a1.Rho, a2.Rho, tc.rho1, tc.rho2)
			}
		})
	}
}

// §十一: two equal-weight tenants on 16 GPUs, quota 8 each. After 9,000 s
// both are owed 72,000 GPU·s; A received 54,000 and B 72,000, so
// ρ_A = 0.75 and ρ_B = 1.00 (under Eq. 16, and under Eq. 8 while both have
// at least 8 GPUs of demand).
func TestPaperSection11TenantRatios(t *testing.T) {
	for _, mode := range []Mode{QuotaShare, DemandAware} {
		t.Run(mode.String(), func(t *testing.T) {
			l := mustNew(t, Config{Mode: mode, Capacity: 16})
			do(t, l, l.AddTenant(t0, "A", 1))
			do(t, l, l.AddTenant(t0, "B", 1))
			do(t, l, l.Submit(t0, "a0", "A", 6, 1))
			do(t, l, l.Submit(t0, "a1", "A", 8, 1))
			do(t, l, l.Submit(t0, "b0", "B", 8, 1))
			do(t, l, l.Start(t0, "a0"))
			do(t, l, l.Start(t0, "b0"))
			t1 := ts(9000)
			do(t, l, l.Advance(t1))
			v := l.View(t1)
			a, _ := v.TenantAccount("A")
			b, _ := v.TenantAccount("B")
			wantAccount(t, "A", a, 54000, 72000)
			wantAccount(t, "B", b, 72000, 72000)
			if a.Rho != 0.75 || b.Rho != 1 {
				t.Fatalf("ρ_A = %v, ρ_B = %v; want 0.75 and 1.00", a.Rho, b.Rho)
			}
			c, err := l.ClusterAccount(t0, t1)
			do(t, l, err)
			if !near(float64(c.Capacity), 16*9000) || !near(float64(c.Allocated), 14*9000) || !near(float64(c.Idle), 2*9000) {
				t.Fatalf("cluster %+v", c)
			}
		})
	}
}

// Eq. 8 against Eq. 16: a tenant with no work is owed nothing under Eq. 8 and
// its quota under Eq. 16.
func TestModesDifferOnIdleTenant(t *testing.T) {
	for _, tc := range []struct {
		mode     Mode
		idleFair float64
	}{{DemandAware, 0}, {QuotaShare, 4 * 100}} {
		l := mustNew(t, Config{Mode: tc.mode, Capacity: 8})
		do(t, l, l.AddTenant(t0, "busy", 1))
		do(t, l, l.AddTenant(t0, "idle", 1))
		do(t, l, l.Submit(t0, "j", "busy", 8, 1))
		do(t, l, l.Start(t0, "j"))
		wantAccount(t, tc.mode.String()+" idle", tenantAcct(t, l, "idle", t0, ts(100)), 0, tc.idleFair)
		wantAccount(t, tc.mode.String()+" busy", tenantAcct(t, l, "busy", t0, ts(100)), 800, 400)
	}
}

func TestWeightsSplitQuotaAndJobShares(t *testing.T) {
	l := mustNew(t, Config{Mode: QuotaShare, Capacity: 12})
	do(t, l, l.AddTenant(t0, "a", 1))
	do(t, l, l.AddTenant(t0, "b", 2)) // quota 8
	do(t, l, l.Submit(t0, "b1", "b", 8, 3))
	do(t, l, l.Submit(t0, "b2", "b", 8, 1))
	// x = 8/4 = 2; b1 owed min(8, 3·2) = 6, b2 owed min(8, 2) = 2.
	v := l.View(t0)
	if r, _ := v.JobFairRate("b1"); !near(r, 6) {
		t.Fatalf("b1 rate %v", r)
	}
	if r, _ := v.JobFairRate("b2"); !near(r, 2) {
		t.Fatalf("b2 rate %v", r)
	}
	// weight change mid-window splits it exactly: from 10 s b2 has weight 3.
	do(t, l, l.SetJobWeight(ts(10), "b2", 3))
	// x = 8/6; both owed 4.
	wantAccount(t, "b2", jobAcct(t, l, "b2", t0, ts(20)), 0, 2*10+4*10)
	wantAccount(t, "b1", jobAcct(t, l, "b1", t0, ts(20)), 0, 6*10+4*10)
	// tenant weight change: a gets weight 2, quotas 6/6 from 20 s.
	do(t, l, l.SetTenantWeight(ts(20), "a", 2))
	wantAccount(t, "b", tenantAcct(t, l, "b", t0, ts(30)), 0, 8*20+6*10)
	wantAccount(t, "a", tenantAcct(t, l, "a", ts(10), ts(30)), 0, 4*10+6*10)
	// capacity change mid-window: 24 GPUs from 30 s.
	do(t, l, l.SetCapacity(ts(30), 24))
	wantAccount(t, "a", tenantAcct(t, l, "a", ts(25), ts(35)), 0, 6*5+12*5)
}

// A job submitted and finished in the same instant has nothing owed and
// nothing received: ρ = 1.
func TestZeroLengthJobIsFair(t *testing.T) {
	l := mustNew(t, Config{Capacity: 4})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(ts(5), "j", "t", 2, 1))
	do(t, l, l.Start(ts(5), "j"))
	do(t, l, l.Finish(ts(5), "j", Completed))
	a := jobAcct(t, l, "j", t0, ts(100))
	wantAccount(t, "j", a, 0, 0)
	if a.Rho != 1 {
		t.Fatalf("rho %v, want 1", a.Rho)
	}
	wantAccount(t, "tenant", tenantAcct(t, l, "t", t0, ts(100)), 0, 0)
}

// Events at one instant apply in call order; only the last state at an
// instant counts for the interval that follows it.
func TestEqualTimestampsApplyInCallOrder(t *testing.T) {
	l := mustNew(t, Config{Capacity: 4})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(ts(1), "j", "t", 2, 1))
	do(t, l, l.Start(ts(1), "j"))
	do(t, l, l.Stop(ts(1), "j"))
	do(t, l, l.Start(ts(1), "j"))
	if err := l.Start(ts(1), "j"); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("second start at same instant: %v", err)
	}
	do(t, l, l.Finish(ts(11), "j", Failed))
	wantAccount(t, "j", jobAcct(t, l, "j", t0, ts(20)), 20, 20)
}

func TestQueriesBeyondNowExtrapolateWithoutMutating(t *testing.T) {
	l := mustNew(t, Config{Capacity: 4})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(t0, "j", "t", 2, 1))
	do(t, l, l.Start(t0, "j"))
	before, _ := l.MarshalBinary()
	wantAccount(t, "future", tenantAcct(t, l, "t", t0, ts(1000)), 2000, 2000)
	after, _ := l.MarshalBinary()
	if string(before) != string(after) || !l.Now().Equal(t0) {
		t.Fatal("a query changed the ledger")
	}
}

// Like x/time/rate's TestLimiterJumpBackwards: a ledger never clamps a late
// event; it rejects it and stays as it was.
func TestLedgerJumpBackwards(t *testing.T) {
	l := mustNew(t, Config{Capacity: 4})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(ts(10), "j", "t", 2, 1))
	before, _ := l.MarshalBinary()
	calls := map[string]error{
		"advance":       l.Advance(ts(9)),
		"start":         l.Start(ts(9), "j"),
		"submit":        l.Submit(ts(9), "k", "t", 1, 1),
		"capacity":      l.SetCapacity(ts(9), 8),
		"before start":  l.Advance(t0.Add(-time.Nanosecond)),
		"add tenant":    l.AddTenant(ts(9.999999999), "u", 1),
		"finish":        l.Finish(ts(0), "j", Completed),
		"reset":         l.Reset(ts(5)),
		"tenant weight": l.SetTenantWeight(ts(1), "t", 2),
		"remove tenant": l.RemoveTenant(ts(1), "t"),
		"job weight":    l.SetJobWeight(ts(1), "j", 2),
		"stop":          l.Stop(ts(1), "j"),
	}
	for name, err := range calls {
		var le *Error
		if !errors.Is(err, ErrTimeBackwards) || !errors.As(err, &le) || le.At.IsZero() {
			t.Fatalf("%s: got %v, want ErrTimeBackwards with the time", name, err)
		}
	}
	after, _ := l.MarshalBinary()
	if string(before) != string(after) {
		t.Fatal("rejected events changed the ledger")
	}
	do(t, l, l.Advance(ts(10))) // equal time is fine
}

func TestBadEventsAreTypedAndLeaveLedgerUnchanged(t *testing.T) {
	l := mustNew(t, Config{Capacity: 4})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(t0, "j", "t", 2, 1))
	do(t, l, l.Submit(t0, "done", "t", 1, 1))
	do(t, l, l.Finish(t0, "done", Cancelled))
	do(t, l, l.Start(t0, "j"))
	t1 := ts(1)
	tests := map[string]struct {
		err  error
		want error
	}{
		"unknown tenant on submit":      {l.Submit(t1, "x", "nobody", 1, 1), ErrUnknownTenant},
		"duplicate job":                 {l.Submit(t1, "j", "t", 1, 1), ErrDuplicateJob},
		"duplicate finished job":        {l.Submit(t1, "done", "t", 1, 1), ErrDuplicateJob},
		"zero demand":                   {l.Submit(t1, "x", "t", 0, 1), ErrInvalidValue},
		"negative demand":               {l.Submit(t1, "x", "t", -2, 1), ErrInvalidValue},
		"zero job weight":               {l.Submit(t1, "x", "t", 1, 0), ErrInvalidValue},
		"NaN job weight":                {l.Submit(t1, "x", "t", 1, math.NaN()), ErrInvalidValue},
		"Inf job weight":                {l.Submit(t1, "x", "t", 1, math.Inf(1)), ErrInvalidValue},
		"double start":                  {l.Start(t1, "j"), ErrInvalidTransition},
		"stop of pending job":           {l.Stop(t1, "done"), ErrInvalidTransition},
		"finish of finished job":        {l.Finish(t1, "done", Completed), ErrInvalidTransition},
		"start of finished job":         {l.Start(t1, "done"), ErrInvalidTransition},
		"weight of finished job":        {l.SetJobWeight(t1, "done", 2), ErrInvalidTransition},
		"unknown job start":             {l.Start(t1, "nope"), ErrUnknownJob},
		"invalid final state":           {l.Finish(t1, "j", FinalState(0)), ErrInvalidValue},
		"negative job weight":           {l.SetJobWeight(t1, "j", -1), ErrInvalidValue},
		"duplicate tenant":              {l.AddTenant(t1, "t", 1), ErrDuplicateTenant},
		"NaN tenant weight":             {l.AddTenant(t1, "u", math.NaN()), ErrInvalidValue},
		"zero tenant weight":            {l.SetTenantWeight(t1, "t", 0), ErrInvalidValue},
		"weight of unknown tenant":      {l.SetTenantWeight(t1, "u", 1), ErrUnknownTenant},
		"remove busy tenant":            {l.RemoveTenant(t1, "t"), ErrTenantBusy},
		"remove unknown tenant":         {l.RemoveTenant(t1, "u"), ErrUnknownTenant},
		"negative capacity":             {l.SetCapacity(t1, -1), ErrInvalidValue},
		"time beyond the representable": {l.Advance(t0.AddDate(300, 0, 0)), ErrInvalidValue},
		"huge demand":                   {l.Submit(t1, "x", "t", MaxGPUs+1, 1), ErrInvalidValue},
		"huge capacity":                 {l.SetCapacity(t1, MaxGPUs+1), ErrInvalidValue},
	}
	before, _ := l.MarshalBinary()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if !errors.Is(tc.err, tc.want) {
				t.Fatalf("got %v, want %v", tc.err, tc.want)
			}
			var le *Error
			if !errors.As(tc.err, &le) || le.Op == "" {
				t.Fatalf("%v is not a *Error with an Op", tc.err)
			}
		})
	}
	after, _ := l.MarshalBinary()
	if string(before) != string(after) {
		t.Fatal("rejected events changed the ledger")
	}
	do(t, l, nil)
}

func TestQueryErrors(t *testing.T) {
	l := mustNew(t, Config{Capacity: 4})
	do(t, l, l.AddTenant(ts(10), "t", 1))
	if _, err := l.TenantAccount("t", ts(5), ts(1)); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("from > to: %v", err)
	}
	if _, err := l.TenantAccount("t", ts(-1), ts(1)); !errors.Is(err, ErrOutOfHistory) {
		t.Fatalf("before begin: %v", err)
	}
	if _, err := l.TenantAccount("x", t0, ts(1)); !errors.Is(err, ErrUnknownTenant) {
		t.Fatalf("unknown tenant: %v", err)
	}
	if _, err := l.JobAccount("x", t0, ts(1)); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("unknown job: %v", err)
	}
	if _, err := l.ClusterAccount(ts(2), ts(1)); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("cluster from > to: %v", err)
	}
	a := tenantAcct(t, l, "t", ts(3), ts(3))
	wantAccount(t, "empty window", a, 0, 0)
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := map[string]Config{
		"negative capacity":    {Capacity: -1},
		"zero trailing window": {History: TrailingWindow(0)},
		"negative window":      {History: TrailingWindow(-time.Hour)},
		"no buckets":           {History: Buckets(0, time.Hour)},
		"negative buckets":     {History: Buckets(-1, time.Hour)},
		"zero bucket width":    {History: Buckets(24, 0)},
		"negative width":       {History: Buckets(24, -time.Hour)},
		"buckets overflowing":  {History: Buckets(math.MaxInt64/int(time.Hour)+1, time.Hour)},
		"zero half-life":       {History: HalfLife(0)},
		"negative half-life":   {History: HalfLife(-time.Second)},
		"unknown mode":         {Mode: Mode(7)},
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := New(cfg); !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want ErrConfig", err)
			}
		})
	}
}

func TestRemovedTenantStaysQueryable(t *testing.T) {
	l := mustNew(t, Config{Mode: QuotaShare, Capacity: 8})
	do(t, l, l.AddTenant(t0, "a", 1))
	do(t, l, l.AddTenant(t0, "b", 1))
	do(t, l, l.RemoveTenant(ts(10), "b"))
	wantAccount(t, "b", tenantAcct(t, l, "b", t0, ts(20)), 0, 40)
	wantAccount(t, "a", tenantAcct(t, l, "a", t0, ts(20)), 0, 40+80)
	if err := l.Submit(ts(11), "j", "b", 1, 1); !errors.Is(err, ErrUnknownTenant) {
		t.Fatalf("submit to removed tenant: %v", err)
	}
	do(t, l, l.AddTenant(ts(20), "b", 3)) // comes back with its past
	wantAccount(t, "b again", tenantAcct(t, l, "b", t0, ts(30)), 0, 40+60)
}

func TestFinishedJobStaysQueryable(t *testing.T) {
	l := mustNew(t, Config{Capacity: 8})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(t0, "a", "t", 4, 1))
	do(t, l, l.Submit(t0, "b", "t", 4, 1))
	do(t, l, l.Start(t0, "a"))
	do(t, l, l.Finish(ts(10), "a", Completed))
	do(t, l, l.Finish(ts(20), "b", Completed))
	do(t, l, l.Submit(ts(30), "c", "t", 4, 1)) // same θ as a and b: a fresh group
	do(t, l, l.Advance(ts(40)))
	wantAccount(t, "a", jobAcct(t, l, "a", t0, ts(40)), 40, 40)
	wantAccount(t, "a part", jobAcct(t, l, "a", ts(5), ts(40)), 20, 20)
	wantAccount(t, "b", jobAcct(t, l, "b", t0, ts(40)), 0, 40+40)
	wantAccount(t, "c", jobAcct(t, l, "c", t0, ts(40)), 0, 40)
}

func TestWeightsOutsideTheRangeAreRefused(t *testing.T) {
	setups := map[string]func(l *Ledger, w float64) error{
		"AddTenant":       func(l *Ledger, w float64) error { return l.AddTenant(ts(1), "v", w) },
		"SetTenantWeight": func(l *Ledger, w float64) error { return l.SetTenantWeight(ts(1), "u", w) },
		"Submit":          func(l *Ledger, w float64) error { return l.Submit(ts(1), "y", "u", MaxGPUs, w) },
		"SetJobWeight":    func(l *Ledger, w float64) error { return l.SetJobWeight(ts(1), "x", w) },
	}
	weights := []struct {
		name string
		w    float64
		ok   bool
	}{
		{"the least weight", MinWeight, true},
		{"the largest weight", MaxWeight, true},
		{"zero", 0, false},
		{"a negative weight", -1, false},
		{"NaN", math.NaN(), false},
		{"+Inf", math.Inf(1), false},
		{"the least subnormal", 5e-324, false},
		{"half the least weight", MinWeight / 2, false},
		{"twice the largest weight", 2 * MaxWeight, false},
		{"the largest float", math.MaxFloat64, false},
	}
	for op, call := range setups {
		for _, tt := range weights {
			t.Run(op+" with "+tt.name, func(t *testing.T) {
				l := mustNew(t, Config{Capacity: 8})
				do(t, l, l.AddTenant(t0, "u", 1))
				do(t, l, l.Submit(t0, "x", "u", 1, 1))
				before, _ := l.MarshalBinary()
				err := call(l, tt.w)
				if tt.ok {
					do(t, l, err)
					return
				}
				if !errors.Is(err, ErrInvalidValue) {
					t.Fatalf("weight %v: %v, want ErrInvalidValue", tt.w, err)
				}
				if after, _ := l.MarshalBinary(); !bytes.Equal(after, before) {
					t.Fatal("a refused weight changed the ledger")
				}
			})
		}
	}
}

func TestInfoLookups(t *testing.T) {
	l := mustNew(t, Config{Capacity: 8})
	do(t, l, l.AddTenant(t0, "b", 1))
	do(t, l, l.AddTenant(t0, "a", 3))
	do(t, l, l.Submit(ts(1), "j", "a", 4, 1))
	do(t, l, l.Start(ts(2), "j"))
	var ids []TenantID
	for id := range l.Tenants() {
		ids = append(ids, id)
	}
	if len(ids) != 2 || ids[0] != "b" || ids[1] != "a" {
		t.Fatalf("Tenants() = %v, want registration order [b a]", ids)
	}
	ti, ok := l.Tenant("a")
	if !ok || ti.Quota != 6 || ti.FairRate != 4 || ti.Demand != 4 || ti.Alloc != 4 || ti.ActiveJobs != 1 {
		t.Fatalf("Tenant(a) = %+v", ti)
	}
	ji, ok := l.Job("j")
	if !ok || !ji.Running || !ji.Active || ji.FairRate != 4 || !ji.Submit.Equal(ts(1)) || !ji.Finish.IsZero() {
		t.Fatalf("Job(j) = %+v", ji)
	}
	do(t, l, l.Finish(ts(3), "j", Cancelled))
	ji, _ = l.Job("j")
	if ji.Active || ji.Running || ji.Final != Cancelled || !ji.Finish.Equal(ts(3)) || ji.FairRate != 0 {
		t.Fatalf("finished Job(j) = %+v", ji)
	}
	if _, ok := l.Job("x"); ok {
		t.Fatal("unknown job found")
	}
}

func TestEmptyIDsAreRefused(t *testing.T) {
	l, err := New(Config{Mode: QuotaShare, Capacity: 8, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AddTenant(t0, "x", 1); err != nil {
		t.Fatal(err)
	}
	before, _ := l.MarshalBinary()
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"a tenant with an empty id", func() error { return l.AddTenant(t0, "", 1) }},
		{"a tenant under a parent with an empty id", func() error { return l.AddTenantUnder(t0, "", "x", 1) }},
		{"a job with an empty id", func() error { return l.Submit(t0, "", "x", 1, 1) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("error %v, want ErrInvalidValue", err)
			}
			if after, _ := l.MarshalBinary(); !bytes.Equal(before, after) {
				t.Error("a refused call changed the ledger")
			}
		})
	}
}

func TestViewAt(t *testing.T) {
	l, err := New(Config{Capacity: 8, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(90 * time.Second)
	if got := l.View(at).At(); !got.Equal(at) {
		t.Fatalf("View(%v).At() = %v", at, got)
	}
	if got := (View{}).At(); !got.IsZero() {
		t.Fatalf("the zero View's At() = %v, want the zero time", got)
	}
}

func TestViewTenantParent(t *testing.T) {
	l, err := New(Config{Capacity: 8, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AddTenant(t0, "org", 1); err != nil {
		t.Fatal(err)
	}
	if err := l.AddTenantUnder(t0, "team", "org", 1); err != nil {
		t.Fatal(err)
	}
	v := l.View(t0)
	if p, ok := v.TenantParent("team"); !ok || p != "org" {
		t.Fatalf("TenantParent(team) = %q, %v", p, ok)
	}
	if p, ok := v.TenantParent("org"); !ok || p != "" {
		t.Fatalf("TenantParent(org) = %q, %v", p, ok)
	}
	if _, ok := v.TenantParent("nobody"); ok {
		t.Fatal("an unknown tenant has a parent")
	}
	if _, ok := (View{}).TenantParent("team"); ok {
		t.Fatal("the zero View knows a tenant")
	}
}
