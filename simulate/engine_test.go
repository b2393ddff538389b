package simulate

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/lease"
	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate/metrics"
	"github.com/astraea-sched/astraea/simulate/trace"
)

func src(jobs ...trace.Job) trace.Source { return trace.FromJobs(jobs) }

var t0 = time.Date(2020, 9, 7, 0, 0, 0, 0, time.UTC)

func sec(n int) time.Duration { return time.Duration(n) * time.Second }
func ts(n int) time.Time      { return t0.Add(sec(n)) }

func tj(id, tenant string, gpus int, submit, dur int) trace.Job {
	return trace.Job{ID: id, Tenant: tenant, GPUs: gpus, Submit: ts(submit), Duration: sec(dur)}
}

// greedy is a test policy: it grants pending jobs in (Submit, ID) order while
// they fit, with the configured lease; it renews expiring jobs if renew is set.
type greedy struct {
	lease time.Duration
	renew bool
}

func (g *greedy) Name() string { return "greedy" }

func (g *greedy) Schedule(s *State) (Decision, error) {
	var d Decision
	for _, r := range s.Running {
		if g.renew && !r.LeaseEnd.IsZero() && !r.LeaseEnd.After(s.Now) {
			d.Grants = append(d.Grants, Grant{Job: r.Job.ID, Lease: g.lease, Renew: true})
		}
	}
	err := grantFitting(&d, s.Cluster.Clone(), s.Pending, g.lease)
	return d, err
}

// grantFitting grants the pending jobs, in order, that fit on c, allocating
// each on c.
func grantFitting(d *Decision, c *placement.Cluster, pending []*JobState, lease time.Duration) error {
	for _, p := range pending {
		pl, err := c.Place(p.Job.GPUs)
		if err != nil {
			continue
		}
		if err := c.Allocate(p.Job.ID, pl); err != nil {
			return err
		}
		d.Grants = append(d.Grants, Grant{Job: p.Job.ID, Placement: pl, Lease: lease})
	}
	return nil
}

func testConfig(nodes, gpn int, tenants ...string) Config {
	q := map[string]float64{}
	for _, t := range tenants {
		q[t] = 1
	}
	cfg := DefaultConfig(nodes, gpn, q)
	cfg.Check = true
	cfg.CheckEvery = 1
	// The hand-computed timelines below charge checkpoints only where a
	// lease is not renewed; the renewal checkpoint has its own cases.
	cfg.CheckpointOnRenew = false
	return cfg
}

func mustRun(t *testing.T, cfg Config, s trace.Source, p Policy) *Result {
	t.Helper()
	r, err := Run(cfg, s, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func jobByID(t *testing.T, r *Result, id string) metrics.JobRecord {
	t.Helper()
	for _, j := range r.Run.Jobs {
		if j.ID == id {
			return j
		}
	}
	t.Fatalf("job %s not in the result", id)
	return metrics.JobRecord{}
}

func TestRunTimeline(t *testing.T) {
	type want struct {
		id           string
		start, end   int
		held         int
		preemptions  int
		rhoLessThan1 bool
	}
	tests := []struct {
		name   string
		cfg    func(*Config)
		policy Policy
		jobs   []trace.Job
		want   []want
	}{
		{
			name:   "a lone job starts at the first tick and ends after its duration",
			policy: &greedy{},
			jobs:   []trace.Job{tj("a", "x", 2, 0, 100)},
			want:   []want{{id: "a", start: 0, end: 100, held: 100}},
		},
		{
			name:   "a job submitted between ticks waits for the next tick",
			policy: &greedy{},
			jobs:   []trace.Job{tj("a", "x", 2, 0, 5), tj("b", "x", 2, 13, 7)},
			want: []want{
				{id: "a", start: 0, end: 5, held: 5},
				{id: "b", start: 20, end: 27, held: 7, rhoLessThan1: true},
			},
		},
		{
			name:   "a completion mid-lease releases at once and the waiting job starts at the next tick",
			policy: &greedy{lease: 900 * time.Second, renew: true},
			jobs:   []trace.Job{tj("a", "x", 8, 0, 123), tj("b", "x", 8, 1, 50)},
			want: []want{
				{id: "a", start: 0, end: 123, held: 123},
				{id: "b", start: 130, end: 180, held: 50, rhoLessThan1: true},
			},
		},
		{
			name:   "renewed leases cost nothing",
			policy: &greedy{lease: 900 * time.Second, renew: true},
			jobs:   []trace.Job{tj("a", "x", 8, 0, 2000)},
			want:   []want{{id: "a", start: 0, end: 2000, held: 2000}},
		},
		{
			// Lease ends at 900: checkpoint until 910, resumed at the
			// 910 tick, cold start until 940, then 1100 s of work left;
			// the second lease ends at 1810 with 870 s done: checkpoint
			// to 1820, resume, cold start to 1850, 230 s left → 2080.
			name:   "an unrenewed lease costs a checkpoint and the resume a cold start",
			policy: &greedy{lease: 900 * time.Second},
			jobs:   []trace.Job{tj("a", "x", 8, 0, 2000)},
			want:   []want{{id: "a", start: 0, end: 2080, held: 2080, preemptions: 2}},
		},
		{
			name: "zero overheads make preemption free",
			cfg: func(c *Config) {
				c.Checkpoint, c.ColdStart = 0, 0
			},
			policy: &greedy{lease: 900 * time.Second},
			jobs:   []trace.Job{tj("a", "x", 8, 0, 2000)},
			// Suspended at 900 and 1810, resumed at the next ticks.
			want: []want{{id: "a", start: 0, end: 2020, held: 2000, preemptions: 2, rhoLessThan1: true}},
		},
		{
			// Renewal flush: 10 s pause at 900 and at 1800 → 2020.
			name:   "checkpoint on renew pauses the job in place",
			cfg:    func(c *Config) { c.CheckpointOnRenew = true },
			policy: &greedy{lease: 900 * time.Second, renew: true},
			jobs:   []trace.Job{tj("a", "x", 8, 0, 2000)},
			want:   []want{{id: "a", start: 0, end: 2020, held: 2020}},
		},
		{
			name:   "a zero-length job ends at its start",
			policy: &greedy{},
			jobs:   []trace.Job{tj("a", "x", 1, 0, 0), tj("b", "x", 1, 3, 0)},
			want:   []want{{id: "a", start: 0, end: 0}, {id: "b", start: 10, end: 10, rhoLessThan1: true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(1, 8, "x")
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			r := mustRun(t, cfg, src(tt.jobs...), tt.policy)
			if len(r.Run.Jobs) != len(tt.jobs) {
				t.Fatalf("%d job records, want %d", len(r.Run.Jobs), len(tt.jobs))
			}
			for _, w := range tt.want {
				j := jobByID(t, r, w.id)
				if got := j.FirstStart.Sub(t0); got != sec(w.start) {
					t.Errorf("%s first start %v, want %v", w.id, got, sec(w.start))
				}
				if got := j.End.Sub(t0); got != sec(w.end) {
					t.Errorf("%s end %v, want %v", w.id, got, sec(w.end))
				}
				if j.Held != sec(w.held) {
					t.Errorf("%s held %v, want %v", w.id, j.Held, sec(w.held))
				}
				if j.Preemptions != w.preemptions {
					t.Errorf("%s preemptions %d, want %d", w.id, j.Preemptions, w.preemptions)
				}
				if got := float64(j.Rho) < 1-1e-9; got != w.rhoLessThan1 && j.End.After(j.Submit) {
					t.Errorf("%s ρ = %v, want ρ < 1: %v", w.id, j.Rho, w.rhoLessThan1)
				}
			}
		})
	}
}

func TestRunReleaseBarrier(t *testing.T) {
	// b arrives while a holds the whole cluster; a's lease ends at 900 and
	// is not renewed. b is granted at the 900 tick with a's GPUs but starts
	// only when a's checkpoint completes at 910.
	p := &preemptFor{}
	cfg := testConfig(1, 8, "x")
	r := mustRun(t, cfg, src(tj("a", "x", 8, 0, 2000), tj("b", "x", 8, 5, 100)), p)
	b := jobByID(t, r, "b")
	if got := b.FirstStart.Sub(t0); got != sec(910) {
		t.Errorf("b starts at %v, want 910s (after a's checkpoint)", got)
	}
	a := jobByID(t, r, "a")
	// a: 900 s work, checkpoint to 910; b runs 910–1010; a resumes at the
	// 1010 tick, cold start to 1040, 1100 s left → 2140.
	if got := a.End.Sub(t0); got != sec(2140) {
		t.Errorf("a ends at %v, want 2140s", got)
	}
	for _, u := range r.Run.Util {
		if u.Used > u.Capacity {
			t.Fatalf("util point %+v holds more than capacity", u)
		}
	}
	if r.Stats.ColdStarts != 1 || r.Stats.Preemptions != 1 {
		t.Errorf("stats %+v, want 1 cold start and 1 preemption", r.Stats)
	}
}

// preemptFor lets expiring jobs lapse when someone waits, otherwise renews;
// it grants pending jobs in order while they fit after the lapses.
type preemptFor struct{}

func (preemptFor) Name() string { return "preempt-for-waiting" }

func (preemptFor) Schedule(s *State) (Decision, error) {
	var d Decision
	c := s.Cluster.Clone()
	for _, r := range s.Running {
		if r.LeaseEnd.IsZero() || r.LeaseEnd.After(s.Now) {
			continue
		}
		if len(s.Pending) > 0 {
			if _, err := c.Release(r.Job.ID); err != nil {
				return d, err
			}
			continue
		}
		d.Grants = append(d.Grants, Grant{Job: r.Job.ID, Renew: true, Lease: s.Lease})
	}
	err := grantFitting(&d, c, s.Pending, s.Lease)
	return d, err
}

func TestRunExcludesJobsLargerThanTheCluster(t *testing.T) {
	r := mustRun(t, testConfig(2, 8, "x"), src(tj("a", "x", 17, 0, 10), tj("b", "x", 16, 0, 10)), &greedy{})
	if r.Stats.Excluded != 1 || len(r.Excluded) != 1 || r.Excluded[0].ID != "a" {
		t.Fatalf("excluded %+v (stats %d), want job a", r.Excluded, r.Stats.Excluded)
	}
	if r.Run.Excluded[ExcludedTooLarge] != 1 {
		t.Errorf("run excluded %v", r.Run.Excluded)
	}
	if len(r.Run.Jobs) != 1 {
		t.Errorf("%d jobs ran, want 1", len(r.Run.Jobs))
	}
}

func TestRunSkipsIdleTicks(t *testing.T) {
	// Two one-minute jobs a year apart: the engine must not step through
	// the 3 million ticks in between.
	year := 365 * 24 * 3600
	r := mustRun(t, testConfig(1, 8, "x"), src(tj("a", "x", 1, 0, 60), tj("b", "x", 1, year, 60)), &greedy{})
	if r.Stats.Ticks > 10 {
		t.Errorf("%d ticks for two jobs", r.Stats.Ticks)
	}
	if got := jobByID(t, r, "b").End.Sub(t0); got != sec(year+60) {
		t.Errorf("b ends at %v", got)
	}
}

func TestRunTenantIntervals(t *testing.T) {
	cfg := testConfig(1, 8, "x", "y")
	cfg.Intervals = []time.Duration{time.Hour}
	// x runs 8 GPUs for 2 h, y submits 1 h in and waits; y's 1 h interval
	// accounts show loss, x's show more than its share.
	r := mustRun(t, cfg, src(tj("a", "x", 8, 0, 7200), tj("b", "y", 8, 3600, 60)), &greedy{})
	if len(r.Run.Tenants) != 4 {
		t.Fatalf("%d tenant intervals, want 2 tenants × 2 whole hours before the last submission: %+v", len(r.Run.Tenants), r.Run.Tenants)
	}
	for _, ti := range r.Run.Tenants {
		if ti.To.Sub(ti.From) != time.Hour {
			t.Errorf("interval %+v is not one hour", ti)
		}
		switch ti.Tenant {
		case "x":
			if float64(ti.Account.Rho) <= 1 {
				t.Errorf("x over %v: ρ %v, want > 1 (it borrows y's quota)", ti.From, ti.Account.Rho)
			}
		case "y":
			if float64(ti.Account.Rho) >= 1 {
				t.Errorf("y over %v: ρ %v, want < 1", ti.From, ti.Account.Rho)
			}
		}
	}
	if len(r.Run.TenantTotals) != 2 {
		t.Errorf("tenant totals %v", r.Run.TenantTotals)
	}
}

func TestRunUtilization(t *testing.T) {
	r := mustRun(t, testConfig(1, 8, "x"), src(tj("a", "x", 2, 0, 100), tj("b", "x", 4, 0, 50)), &greedy{})
	want := []metrics.UtilPoint{{At: ts(0), Used: 6, Capacity: 8}, {At: ts(50), Used: 2, Capacity: 8}, {At: ts(100), Used: 0, Capacity: 8}}
	if len(r.Run.Util) != len(want) {
		t.Fatalf("util %+v, want %+v", r.Run.Util, want)
	}
	for i := range want {
		if !r.Run.Util[i].At.Equal(want[i].At) || r.Run.Util[i].Used != want[i].Used {
			t.Errorf("util[%d] = %+v, want %+v", i, r.Run.Util[i], want[i])
		}
	}
}

// badPolicy returns a fixed decision.
type badPolicy struct{ d Decision }

func (badPolicy) Name() string                        { return "bad" }
func (b badPolicy) Schedule(*State) (Decision, error) { return b.d, nil }

// grabbingPolicy allocates the first pending job on the engine's cluster
// instead of granting it.
type grabbingPolicy struct{}

func (grabbingPolicy) Name() string { return "grabbing" }
func (grabbingPolicy) Schedule(s *State) (Decision, error) {
	if len(s.Pending) > 0 {
		if q, err := s.Cluster.Place(s.Pending[0].Job.GPUs); err == nil {
			_ = s.Cluster.Allocate(s.Pending[0].Job.ID, q)
		}
	}
	return Decision{}, nil
}

func TestRunRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		jobs []trace.Job
		pol  Policy
		want error
	}{
		{"a grant of an unknown job", []trace.Job{tj("a", "x", 1, 0, 1)}, badPolicy{Decision{Grants: []Grant{{Job: "zz"}}}}, ErrBadDecision},
		{"a preemption of a pending job", []trace.Job{tj("a", "x", 1, 0, 1)}, badPolicy{Decision{Preempt: []string{"a"}}}, ErrBadDecision},
		{"a renewal of a pending job", []trace.Job{tj("a", "x", 1, 0, 1)}, badPolicy{Decision{Grants: []Grant{{Job: "a", Renew: true}}}}, ErrBadDecision},
		{"a policy that never schedules", []trace.Job{tj("a", "x", 1, 0, 1)}, badPolicy{}, ErrStalled},
		{"a policy that changes the cluster", []trace.Job{tj("a", "x", 1, 0, 1)}, grabbingPolicy{}, ErrBadDecision},
		{"a tenant without quota", []trace.Job{tj("a", "nobody", 1, 0, 1)}, &greedy{}, ErrUnknownTenant},
		{"a job without GPUs", []trace.Job{tj("a", "x", 0, 0, 1)}, &greedy{}, ErrBadJob},
		{"a duplicate job id", []trace.Job{tj("a", "x", 1, 0, 100), tj("a", "x", 1, 1, 1)}, &greedy{}, ErrBadJob},
		{"jobs out of order", []trace.Job{tj("a", "x", 1, 10, 1), tj("b", "x", 1, 5, 1)}, &greedy{}, ErrUnsorted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(testConfig(1, 8, "x"), src(tt.jobs...), tt.pol)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	for name, mut := range map[string]func(*Config){
		"no nodes":                        func(c *Config) { c.NodeCount = 0 },
		"zero interval":                   func(c *Config) { c.Interval = 0 },
		"negative cold":                   func(c *Config) { c.ColdStart = -1 },
		"checkpoint above MaxSpan":        func(c *Config) { c.Checkpoint = lease.MaxSpan + 1 },
		"iteration above MaxSpan":         func(c *Config) { c.Iteration = lease.MaxSpan + 1 },
		"no quotas":                       func(c *Config) { c.Quotas = nil },
		"zero weight":                     func(c *Config) { c.Quotas = map[string]float64{"x": 0} },
		"negative interval":               func(c *Config) { c.Intervals = []time.Duration{-time.Hour} },
		"lease within cold start":         func(c *Config) { c.Lease, c.ColdStart = time.Minute, time.Minute },
		"default lease within cold start": func(c *Config) { c.Lease, c.ColdStart = 0, DefaultLease },
		"unknown admission":               func(c *Config) { c.Admit = AdmitAtTick + 1 },
		"lease within renewal checkpoint": func(c *Config) {
			c.Lease, c.Checkpoint, c.CheckpointOnRenew = 5*time.Second, 5*time.Second, true
		},
		"two nodes with one id": func(c *Config) {
			c.Nodes = []placement.Node{{ID: "n", GPUs: 8}, {ID: "n", GPUs: 8}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(1, 8, "x")
			mut(&cfg)
			_, err := Run(cfg, src(tj("a", "x", 1, 0, 1)), &greedy{})
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error %v, want ErrConfig", err)
			}
			// Validate finds the same fault without a run.
			if v := cfg.Validate(); v == nil || v.Error() != err.Error() {
				t.Fatalf("Validate = %v, Run's error %v", v, err)
			}
		})
	}
	if err := testConfig(1, 8, "x").Validate(); err != nil {
		t.Fatalf("a good config: Validate = %v", err)
	}
}

func TestRunMetricsLedgerMode(t *testing.T) {
	// Under Eq. 8 a tenant without demand is owed nothing, so y's idle
	// hour is not a loss; under Eq. 16 it is.
	for _, tc := range []struct {
		mode  ledger.Mode
		yLoss bool
	}{{ledger.DemandAware, false}, {ledger.QuotaShare, true}} {
		cfg := testConfig(1, 8, "x", "y")
		cfg.Metrics = tc.mode
		cfg.Intervals = []time.Duration{time.Hour}
		r := mustRun(t, cfg, src(tj("a", "x", 8, 0, 3600), tj("b", "x", 1, 3600, 1)), &greedy{})
		for _, ti := range r.Run.Tenants {
			if ti.Tenant == "y" && (float64(ti.Account.Rho) < 1) != tc.yLoss {
				t.Errorf("mode %v: y's ρ %v, loss want %v", tc.mode, ti.Account.Rho, tc.yLoss)
			}
		}
	}
}

// lateStarter grants nothing before its wakeup time, then behaves as greedy.
type lateStarter struct {
	greedy
	at time.Time
}

func (l *lateStarter) Schedule(s *State) (Decision, error) {
	if s.Now.Before(l.at) {
		return Decision{}, nil
	}
	return l.greedy.Schedule(s)
}

func (l *lateStarter) NextWakeup(s *State) time.Time {
	if s.Now.Before(l.at) {
		return l.at
	}
	return time.Time{}
}

func TestRunCallsAWakerWhenNothingElseHappens(t *testing.T) {
	// Nothing happens between the submission and 95 s; the policy asks to
	// be called then, and the engine rounds that up to the 100 s tick.
	p := &lateStarter{at: ts(95)}
	r := mustRun(t, testConfig(1, 8, "x"), src(tj("a", "x", 1, 0, 10)), p)
	if got := jobByID(t, r, "a").FirstStart.Sub(t0); got != sec(100) {
		t.Fatalf("a starts at %v, want 100s", got)
	}
	if r.Stats.Ticks != 3 {
		t.Errorf("%d ticks, want 3 (the submission, the wakeup, the completion)", r.Stats.Ticks)
	}
}

func TestRunAdmission(t *testing.T) {
	// One tenant owning the whole 8-GPU node, ticks every 10 s from the
	// first submission (job a, at 0). A job is owed
	// min(demand, 8 × its share of the active weight) from the moment it
	// enters the ledger; ρ_job = held ÷ owed.
	for _, tc := range []struct {
		name          string
		jobs          []trace.Job
		id            string
		start, end    int
		submit, admit ledger.Rho // ρ_job under AdmitOnSubmit and AdmitAtTick
	}{
		{
			name:  "a job started at the tick after its submission",
			jobs:  []trace.Job{tj("a", "x", 1, 0, 5), tj("b", "x", 2, 13, 7)},
			id:    "b",
			start: 20, end: 27,
			submit: 7.0 / 14, admit: 1,
		},
		{
			name:  "a job submitted on a tick",
			jobs:  []trace.Job{tj("a", "x", 1, 0, 5), tj("b", "x", 2, 20, 7)},
			id:    "b",
			start: 20, end: 27,
			submit: 1, admit: 1,
		},
		{
			// b waits for a, which ends at 25, starts at the 30 tick and
			// holds 8 GPUs for 10 s. It is owed 4 GPUs while a is active
			// (the tenant's 8 split by weight), then 8: from 13 that is
			// 4×12 + 8×15 = 168, from the 20 tick 4×5 + 8×15 = 140.
			name:  "a job that waits a tick after its admission",
			jobs:  []trace.Job{tj("a", "x", 8, 0, 25), tj("b", "x", 8, 13, 10)},
			id:    "b",
			start: 30, end: 40,
			submit: 80.0 / 168, admit: 80.0 / 140,
		},
	} {
		for _, adm := range []Admission{AdmitOnSubmit, AdmitAtTick} {
			t.Run(tc.name+"/"+adm.String(), func(t *testing.T) {
				cfg := testConfig(1, 8, "x")
				cfg.Admit = adm
				r := mustRun(t, cfg, src(tc.jobs...), &greedy{})
				j := jobByID(t, r, tc.id)
				if got := j.FirstStart.Sub(t0); got != sec(tc.start) {
					t.Errorf("first start %v, want %v", got, sec(tc.start))
				}
				if got := j.End.Sub(t0); got != sec(tc.end) {
					t.Errorf("end %v, want %v", got, sec(tc.end))
				}
				// Queueing counts from the submission either way.
				if want := sec(tc.start) - j.Submit.Sub(t0); j.Queueing() != want {
					t.Errorf("queueing %v, want %v", j.Queueing(), want)
				}
				want := tc.submit
				if adm == AdmitAtTick {
					want = tc.admit
				}
				if math.Abs(float64(j.Rho-want)) > 1e-12 {
					t.Errorf("ρ_job = %v, want %v", j.Rho, want)
				}
			})
		}
	}
}

func TestAdmissionStrings(t *testing.T) {
	for _, a := range []Admission{AdmitOnSubmit, AdmitAtTick} {
		got, err := ParseAdmission(a.String())
		if err != nil || got != a {
			t.Errorf("ParseAdmission(%q) = %v, %v; want %v", a.String(), got, err, a)
		}
	}
	if _, err := ParseAdmission("arrival"); !errors.Is(err, ErrConfig) {
		t.Errorf("ParseAdmission(arrival): error %v, want ErrConfig", err)
	}
	if got := Admission(7).String(); got != "Admission(7)" {
		t.Errorf("Admission(7).String() = %q", got)
	}
}

// FuzzParseAdmission checks the -admit parser on any text: it accepts
// exactly the names String gives, and rejects the rest with ErrConfig.
func FuzzParseAdmission(f *testing.F) {
	for _, s := range []string{"submit", "tick", "", "Tick", " submit", "submit\x00", "arrival", "Admission(7)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAdmission(s)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("ParseAdmission(%q): error %v does not match ErrConfig", s, err)
			}
			if s == AdmitOnSubmit.String() || s == AdmitAtTick.String() {
				t.Fatalf("ParseAdmission(%q) rejects a name String gives: %v", s, err)
			}
			return
		}
		if a.String() != s {
			t.Fatalf("ParseAdmission(%q) = %v, whose name is %q", s, a, a.String())
		}
	})
}

// roomChecker is greedy with leases, declaring RenewsWhenNothingFits (which
// greedy honours: it renews every expiring job and grants what fits), and
// checks at every call that State.ExpiringRoom is the room of the cluster
// with the expiring jobs let go, as a State built by hand gives it.
type roomChecker struct {
	greedy
	t      *testing.T
	calls  int
	seenIn int // calls with expiring jobs
}

func (r *roomChecker) Traits() Traits { return Traits{RenewsWhenNothingFits: true} }

func (r *roomChecker) Schedule(s *State) (Decision, error) {
	r.calls++
	if len(s.Expiring) > 0 {
		r.seenIn++
	}
	got, err := s.ExpiringRoom()
	if err != nil {
		return Decision{}, err
	}
	again, _ := s.ExpiringRoom()
	byHand := &State{Cluster: s.Cluster, Expiring: s.Expiring}
	want, err := byHand.ExpiringRoom()
	if err != nil {
		return Decision{}, err
	}
	if again != got || got.Free() != want.Free() {
		r.t.Errorf("at %v: room %p free %d (again %p), by hand free %d", s.Now, got, got.Free(), again, want.Free())
	}
	for d := 1; d <= s.Capacity; d++ {
		if got.Gangs(d) != want.Gangs(d) {
			r.t.Errorf("at %v: %d gangs of %d, by hand %d", s.Now, got.Gangs(d), d, want.Gangs(d))
		}
	}
	return r.greedy.Schedule(s)
}

// The engine fills State.ExpiringRoom once a tick, for its own check and
// the policy's, and it is the room of that tick's expiring jobs.
func TestStateExpiringRoomIsTheTicks(t *testing.T) {
	cfg := testConfig(2, 4, "x")
	cfg.Lease = 120 * time.Second
	p := &roomChecker{greedy: greedy{lease: cfg.Lease, renew: true}, t: t}
	jobs := []trace.Job{tj("a", "x", 4, 0, 400), tj("b", "x", 2, 0, 400), tj("c", "x", 4, 5, 300), tj("d", "x", 3, 50, 200)}
	if _, err := Run(cfg, src(jobs...), p); err != nil {
		t.Fatal(err)
	}
	if p.seenIn == 0 {
		t.Fatalf("%d calls, none with expiring jobs: the test shows nothing", p.calls)
	}
}
