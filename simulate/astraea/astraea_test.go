package astraea

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/trace"
	"pgregory.net/rapid"
)

// workedExample builds the paper's worked example (section 11 of the notes):
// 2 nodes × 8 GPUs, tenants A and B with equal quotas, 9000 s of history in
// which A received aSeconds × 8 GPUs and B 8 GPUs throughout; A1 (8 GPUs), A2
// (4) and B1 (8) wait, never having run.
func workedExample(t *testing.T, mode ledger.Mode, aSeconds int) *simulate.State {
	l, err := ledger.New(ledger.Config{Mode: mode, Capacity: 16, Start: t0})
	must(t, err)
	must(t, l.AddTenant(t0, "A", 1))
	must(t, l.AddTenant(t0, "B", 1))
	must(t, l.Submit(t0, "a0", "A", 8, 1))
	must(t, l.Submit(t0, "b0", "B", 8, 1))
	jobs := []trace.Job{tj("A1", "A", 8, 0, 5000), tj("A2", "A", 4, 0, 5000), tj("B1", "B", 8, 0, 5000)}
	for _, j := range jobs {
		must(t, l.Submit(t0, ledger.JobID(j.ID), ledger.TenantID(j.Tenant), ledger.GPUs(j.GPUs), 1))
	}
	must(t, l.Start(t0, "a0"))
	must(t, l.Start(t0, "b0"))
	must(t, l.Finish(ts(aSeconds), "a0", ledger.Completed))
	must(t, l.Finish(ts(9000), "b0", ledger.Completed))
	c, err := placement.NewCluster([]placement.Node{{ID: "n1", GPUs: 8}, {ID: "n2", GPUs: 8}})
	must(t, err)
	s := &simulate.State{
		Now: ts(9000), Interval: simulate.DefaultInterval, Lease: simulate.DefaultLease, Cluster: c,
		Accounts: l.View(ts(9000)), Quotas: map[string]float64{"A": 0.5, "B": 0.5}, Capacity: 16,
	}
	for i := range jobs {
		s.Pending = append(s.Pending, &simulate.JobState{Job: jobs[i], Remaining: jobs[i].Duration})
	}
	s.PendingDemands = []int{4, 8}
	return s
}

func granted(d simulate.Decision) []string {
	var out []string
	for _, g := range d.Grants {
		out = append(out, g.Job)
	}
	return out
}

func TestAstraeaWorkedExample(t *testing.T) {
	tests := []struct {
		name     string
		opts     func(*Options)
		aSeconds int
		want     []string
	}{
		{
			// ρ_A = 54,000 / 72,000 = 0.75 < ρ_B = 1: A1 (0.85 after its
			// pre-credit), then A2 (0.90); B1's 8 GPUs no longer fit.
			name: "the paper's example serves A twice and leaves B1 waiting",
			// A held 8 GPUs for 6750 s = 54,000 GPU·s.
			aSeconds: 6750,
			want:     []string{"A1", "A2"},
		},
		{
			// ρ_A = 68,400 / 72,000 = 0.95; after A1's pre-credit of 7,200
			// it is 1.05 > ρ_B, so B1 goes next and fills the cluster.
			name:     "the pre-credit hands the next turn to B",
			aSeconds: 8550,
			want:     []string{"A1", "B1"},
		},
		{
			name:     "without pre-credit A keeps its turn",
			opts:     func(o *Options) { o.NoPreCredit = true },
			aSeconds: 8550,
			want:     []string{"A1", "A2"},
		},
		{
			// One level: all three are new jobs of equal rank, taken in
			// submission order (then id): A1, A2; B1 does not fit.
			name:     "a single level ignores the tenant accounts",
			opts:     func(o *Options) { o.SingleLevel = true },
			aSeconds: 8550,
			want:     []string{"A1", "A2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			if tt.opts != nil {
				tt.opts(&o)
			}
			p, err := New(o)
			must(t, err)
			s := workedExample(t, ledger.QuotaShare, tt.aSeconds)
			d, err := p.Schedule(s)
			must(t, err)
			if got := granted(d); !slices.Equal(got, tt.want) {
				t.Fatalf("grants %v, want %v", got, tt.want)
			}
			for _, g := range d.Grants {
				if g.Placement.Nodes() != 1 || g.Lease != simulate.DefaultLease || g.Renew {
					t.Errorf("grant %+v: want a fresh lease on one node", g)
				}
			}
		})
	}
}

func TestAstraeaRenewsInPlaceOrLetsTheLeaseLapse(t *testing.T) {
	// x holds the whole 8-GPU cluster with a long job; y's job arrives at
	// 100 s. At the first lease end (900 s) y has the lower ρ and takes the
	// cluster: x's job is checkpointed (until 910) and y starts at 910.
	p, err := New(DefaultOptions())
	must(t, err)
	cfg := testConfig(1, 8, "x", "y")
	r := mustRun(t, cfg, src(tj("long", "x", 8, 0, 3000), tj("short", "y", 8, 100, 60)), p)
	short := jobByID(t, r, "short")
	if got := short.FirstStart.Sub(t0); got != sec(910) {
		t.Errorf("y's job starts at %v, want 910s", got)
	}
	long := jobByID(t, r, "long")
	if long.Preemptions != 1 {
		t.Errorf("x's job preempted %d times, want 1", long.Preemptions)
	}
	// long: 900 s done; resumes at the 970 tick (short ends at 970), cold
	// start to 1000, 2100 s left → 3100.
	if got := long.End.Sub(t0); got != sec(3100) {
		t.Errorf("x's job ends at %v, want 3100s", got)
	}
	// Alone, a job is renewed at every lease end and never preempted.
	r = mustRun(t, cfg, src(tj("long", "x", 8, 0, 3000)), p)
	if r.Stats.Renewals != 3 || r.Stats.Preemptions != 0 || jobByID(t, r, "long").End.Sub(t0) != sec(3000) {
		t.Errorf("alone: %+v", r.Stats)
	}
}

func TestAstraeaPolicies(t *testing.T) {
	m := Policies()
	want := []string{"astraea", "astraea-eq8", "astraea-nocredit", "astraea-reserve", "astraea-single"}
	if got := simulate.PolicyNames(m); !slices.Equal(got, want) {
		t.Fatalf("policies %v, want %v", got, want)
	}
	for _, name := range want {
		p, err := m[name]()
		must(t, err)
		if p.Name() != name {
			t.Errorf("policy %q is named %q", name, p.Name())
		}
	}
	p, _ := m["astraea-eq8"]()
	if p.(simulate.AccountsModer).AccountsMode() != ledger.DemandAware {
		t.Error("astraea-eq8 does not ask for Eq. 8 accounts")
	}
}

// TestPropertyShortcutsMatchExhaustive runs every variant of the policy,
// under each placement mode and new-job order, with accounts that remember
// everything, a trailing window or fixed buckets, and capped or split job
// shares, on random workloads with
// the engine's shortcuts (the policy's Traits) and without them
// (simulate.Config.Exhaustive): the runs must be identical.
func TestPropertyShortcutsMatchExhaustive(t *testing.T) {
	for _, m := range []placement.Mode{placement.Strict, placement.FewestNodes, placement.FirstFit} {
		for _, nj := range []NewJobOrder{FIFO, Smallest} {
			t.Run(m.String()+"/"+nj.String(), func(t *testing.T) {
				rapid.Check(t, func(t *rapid.T) {
					cfg, jobs := genVariedWorkload(t)
					cfg.Placement = m
					switch rapid.IntRange(0, 2).Draw(t, "windowed accounts") {
					case 1:
						cfg.History = ledger.TrailingWindow(sec(rapid.SampledFrom([]int{60, 600, 3600}).Draw(t, "window")))
					case 2:
						cfg.History = ledger.Buckets(rapid.IntRange(1, 24).Draw(t, "buckets"), sec(rapid.SampledFrom([]int{60, 600, 3600}).Draw(t, "bucket")))
					}
					if rapid.Bool().Draw(t, "split job shares") {
						cfg.JobShare = ledger.SplitJobShare
					}
					o := DefaultOptions()
					o.NewJobs = nj
					v := rapid.SampledFrom(Variants(o)).Draw(t, "variant")
					if v.ReserveAfter > 0 {
						v.ReserveAfter = sec(rapid.SampledFrom([]int{1, 30, 300}).Draw(t, "reserveAfter"))
					}
					_, err := simulate.CompareExhaustive(cfg, func() trace.Source { return src(jobs...) },
						func() (simulate.Policy, error) { return New(v) })
					if err != nil {
						t.Fatal(err)
					}
				})
			})
		}
	}
}

// TestParseNewJobOrder: every order reads back from its name; another
// name is ErrConfig quoting it.
func TestParseNewJobOrder(t *testing.T) {
	for _, o := range []NewJobOrder{FIFO, Smallest} {
		if got, err := ParseNewJobOrder(o.String()); err != nil || got != o {
			t.Errorf("ParseNewJobOrder(%q) = %v, %v; want %v", o.String(), got, err, o)
		}
	}
	if _, err := ParseNewJobOrder("largest"); !errors.Is(err, simulate.ErrConfig) || !strings.Contains(err.Error(), `"largest"`) {
		t.Errorf(`ParseNewJobOrder("largest") = %v, want ErrConfig quoting it`, err)
	}
}
