package simulate

import (
	"errors"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/simulate/metrics"
)

func TestTickPhaseShiftsTheTickGrid(t *testing.T) {
	// One job submitted at t0 + 1 s on an idle cluster starts at the first
	// tick at or after its submission: t0 + 10 s with phase 0, t0 + 3 s
	// with phase 3 s, t0 + 1 s with phase 1 s (a tick at the submission).
	for _, c := range []struct {
		name  string
		phase time.Duration
		start time.Time
	}{
		{"phase 0 puts ticks at Start plus multiples of the interval", 0, ts(10)},
		{"phase 3 s moves every tick 3 s later", sec(3), ts(3)},
		{"a tick at the submission itself serves the job at once", sec(1), ts(1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(1, 8, "x")
			cfg.Start = t0
			cfg.TickPhase = c.phase
			r := mustRun(t, cfg, src(tj("a", "x", 8, 1, 100)), &greedy{lease: time.Hour})
			if got := r.Run.Jobs[0].FirstStart; !got.Equal(c.start) {
				t.Errorf("first start %v, want %v", got.Sub(t0), c.start.Sub(t0))
			}
		})
	}
}

func TestTickPhaseMustLieInsideTheInterval(t *testing.T) {
	for _, ph := range []time.Duration{-time.Second, 10 * time.Second, time.Hour} {
		cfg := testConfig(1, 8, "x")
		cfg.TickPhase = ph
		if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("TickPhase %v: error %v, want ErrConfig", ph, err)
		}
	}
}

func TestDropOverQuotaExcludesAndCountsJobsLargerThanTheirQuota(t *testing.T) {
	// 2 × 8 GPUs, tenants x (weight 3) and y (weight 1): quotas 12 and 4.
	cfg := testConfig(2, 8, "x", "y")
	cfg.Quotas = map[string]float64{"x": 3, "y": 1}
	jobs := src(tj("a", "x", 12, 0, 10), tj("b", "y", 5, 0, 10), tj("c", "y", 4, 0, 10), tj("d", "x", 17, 0, 10))
	t.Run("by default they run and borrow", func(t *testing.T) {
		r := mustRun(t, cfg, src(tj("a", "x", 12, 0, 10), tj("b", "y", 5, 0, 10), tj("c", "y", 4, 0, 10), tj("d", "x", 17, 0, 10)), &greedy{})
		if len(r.Run.Jobs) != 3 || r.Run.Excluded[ExcludedTooLarge] != 1 || len(r.Run.Excluded) != 1 {
			t.Fatalf("%d jobs ran, excluded %v; want 3 and one too large", len(r.Run.Jobs), r.Run.Excluded)
		}
	})
	t.Run("with DropOverQuota they are excluded with their reason", func(t *testing.T) {
		cfg := cfg
		cfg.DropOverQuota = true
		r := mustRun(t, cfg, jobs, &greedy{})
		if len(r.Run.Jobs) != 2 {
			t.Errorf("%d jobs ran, want a and c", len(r.Run.Jobs))
		}
		want := map[string]string{"b": ExcludedOverQuota, "d": ExcludedTooLarge}
		for _, x := range r.Excluded {
			if want[x.ID] != x.Reason {
				t.Errorf("job %s excluded for %q, want %q", x.ID, x.Reason, want[x.ID])
			}
			delete(want, x.ID)
		}
		if len(want) > 0 || r.Stats.Excluded != 2 {
			t.Errorf("not excluded: %v; stats %d", want, r.Stats.Excluded)
		}
		if r.Run.Excluded[ExcludedOverQuota] != 1 || r.Run.Excluded[ExcludedTooLarge] != 1 {
			t.Errorf("run excluded %v", r.Run.Excluded)
		}
	})
	t.Run("a demand equal to the quota runs", func(t *testing.T) {
		cfg := cfg
		cfg.DropOverQuota = true
		r := mustRun(t, cfg, src(tj("a", "y", 4, 0, 10)), &greedy{})
		if len(r.Run.Jobs) != 1 || len(r.Excluded) != 0 {
			t.Errorf("%d jobs ran, excluded %v; want the job to run", len(r.Run.Jobs), r.Excluded)
		}
	})
}

func TestTenantIntervalsCarryBothEquations(t *testing.T) {
	// 1 × 8 GPUs, tenants x and y of equal weight (quota 4 each). x runs
	// an 8-GPU job for the first hour; y submits nothing. Over [0, 1 h):
	//   Eq. 16: x owed 4 GPU·h, received 8 (ρ 2); y owed 4, received 0
	//   (ρ 0, a loss, but y had no demand: idle).
	//   Eq. 8:  x owed min(8, 4) = 4, ρ 2; y owed min(0, 4) = 0, ρ = 1.
	cfg := testConfig(1, 8, "x", "y")
	cfg.Start = t0
	cfg.Intervals = []time.Duration{time.Hour}
	r := mustRun(t, cfg, src(tj("a", "x", 8, 0, 3600)), &greedy{lease: 2 * time.Hour})
	if !r.Run.BothModes {
		t.Fatal("Run.BothModes is false")
	}
	got := map[string]metrics.TenantInterval{}
	for _, ti := range r.Run.Tenants {
		if ti.From.Equal(t0) {
			got[ti.Tenant] = ti
		}
	}
	const h = 3600
	for _, c := range []struct {
		tenant    string
		eq8, eq16 ledger.Account
	}{
		{"x", ledger.Account{Alloc: 8 * h, FairShare: 4 * h}, ledger.Account{Alloc: 8 * h, FairShare: 4 * h}},
		{"y", ledger.Account{Alloc: 0, FairShare: 0}, ledger.Account{Alloc: 0, FairShare: 4 * h}},
	} {
		ti := got[c.tenant]
		if ti.Eq8.Alloc != c.eq8.Alloc || ti.Eq8.FairShare != c.eq8.FairShare {
			t.Errorf("%s Eq. 8 account %+v, want %+v", c.tenant, ti.Eq8, c.eq8)
		}
		if ti.Eq16.Alloc != c.eq16.Alloc || ti.Eq16.FairShare != c.eq16.FairShare {
			t.Errorf("%s Eq. 16 account %+v, want %+v", c.tenant, ti.Eq16, c.eq16)
		}
		if ti.Account != ti.Eq16 {
			t.Errorf("%s reporting account %+v, want the Eq. 16 one (Config.Metrics)", c.tenant, ti.Account)
		}
	}
	s := metrics.Summarize(r.Run, metrics.SummaryConfig{Intervals: []time.Duration{time.Hour}})
	e8, e16 := s.TenantLossEq8[0], s.TenantLossEq16[0]
	if e8.Pairs != 2 || e8.Loss != 0 || e8.Idle != 1 {
		t.Errorf("Eq. 8 loss %+v, want 2 pairs, no loss, 1 idle", e8)
	}
	if e16.Pairs != 2 || e16.Loss != 1 || e16.IdleLoss != 1 || e16.ShareBusy != 0 || e16.Share != 0.5 {
		t.Errorf("Eq. 16 loss %+v, want 2 pairs, 1 loss that was idle, share 0.5, busy share 0", e16)
	}
}

func TestJobRecordsSplitTheOverhead(t *testing.T) {
	// preemptFor suspends a at its first lease end (60 s) for b; a then
	// checkpoints 10 s and, once b is done, resumes with a 30 s cold start.
	cfg := testConfig(1, 8, "x")
	cfg.Lease = time.Minute
	r := mustRun(t, cfg, src(tj("a", "x", 8, 0, 120), tj("b", "x", 8, 5, 30)), preemptFor{})
	var a metrics.JobRecord
	for _, j := range r.Run.Jobs {
		if j.ID == "a" {
			a = j
		}
	}
	if a.Checkpoint != 10*time.Second || a.ColdStart != 30*time.Second || a.Lost != 0 {
		t.Fatalf("a's overhead: checkpoint %v, cold start %v, lost %v; want 10s, 30s, 0", a.Checkpoint, a.ColdStart, a.Lost)
	}
	if a.Held-a.Run != a.Checkpoint+a.ColdStart+a.Lost {
		t.Errorf("held %v − run %v is not the overhead's sum", a.Held, a.Run)
	}
	s := metrics.Summarize(r.Run, metrics.DefaultSummaryConfig())
	var total time.Duration
	for _, j := range r.Run.Jobs {
		total += j.JCT()
	}
	want := (40 * time.Second).Seconds() / total.Seconds()
	if d := s.Overhead.Direct - want; d > 1e-12 || d < -1e-12 {
		t.Errorf("direct overhead %v, want 40 s ÷ Σ JCT %v = %v", s.Overhead.Direct, total, want)
	}
	if s.Overhead.Checkpoint+s.Overhead.ColdStart+s.Overhead.Lost != s.Overhead.Direct {
		t.Errorf("overhead parts %+v do not add up", s.Overhead)
	}
}
