package simulate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate/metrics"
	"github.com/astraea-sched/astraea/simulate/trace"
	"pgregory.net/rapid"
)

// attempt is one grant of a placed policy: GPUs per node, in node order,
// and the lease (0: none).
type attempt struct {
	gpus  []int
	lease time.Duration
}

// placed is a test policy that grants each pending job, at the first tick
// at which its GPUs are free, the placement of its next attempt (the
// attempt after its preemptions so far, the last one again once they run
// out), and renews expiring jobs when renew is set. GPUs are taken lowest
// first on nodes "node-0000", "node-0001", ...
type placed struct {
	attempts map[string][]attempt
	renew    time.Duration
}

func (p *placed) Name() string { return "placed" }

func (p *placed) Schedule(s *State) (Decision, error) {
	var d Decision
	if p.renew > 0 {
		for _, r := range s.Expiring {
			d.Grants = append(d.Grants, Grant{Job: r.Job.ID, Lease: p.renew, Renew: true})
		}
	}
	c := s.Cluster.Clone()
	for _, js := range s.Pending {
		as := p.attempts[js.Job.ID]
		a := as[min(js.Preemptions, len(as)-1)]
		pl, ok := slotsOn(c, a.gpus)
		if !ok {
			continue
		}
		if err := c.Allocate(js.Job.ID, pl); err != nil {
			return d, err
		}
		d.Grants = append(d.Grants, Grant{Job: js.Job.ID, Placement: pl, Lease: a.lease})
	}
	return d, nil
}

// slotsOn is the placement of gpus[i] GPUs on node i (none where 0), the
// lowest free ones; ok is false when a node has too few free.
func slotsOn(c *placement.Cluster, gpus []int) (placement.Placement, bool) {
	var p placement.Placement
	for i, n := range gpus {
		if n == 0 {
			continue
		}
		id := fmt.Sprintf("node-%04d", i)
		info, ok := c.Node(id)
		if !ok || info.Free < n {
			return p, false
		}
		held := map[int]bool{}
		for _, pl := range c.Allocations() {
			for _, s := range pl.Slots {
				if s.Node == id {
					for _, g := range s.GPUs {
						held[g] = true
					}
				}
			}
		}
		var gs []int
		for g := 0; len(gs) < n; g++ {
			if !held[g] {
				gs = append(gs, g)
			}
		}
		p.Slots = append(p.Slots, placement.Slot{Node: id, GPUs: gs})
	}
	return p, true
}

// TestSpreadSlowdownTimelines: hand-computed runs of one job with a spread
// slowdown (checkpoint 10 s, cold start 30 s, renewals without a
// checkpoint unless stated, nodes of 8 GPUs), the same with the engine's
// shortcuts and without.
func TestSpreadSlowdownTimelines(t *testing.T) {
	spread16 := []int{4, 4, 8} // 16 GPUs on 3 nodes, 2 would do
	tests := map[string]struct {
		gpus     int
		attempts []attempt
		renew    time.Duration
		slow     float64
		ckptRen  bool
		iter     time.Duration
		// end, and the job record's overheads, in seconds
		end, held, ckpt, cold, lost, spread int
	}{
		// 1000 s of work at half rate: 2000 s.
		"a 16-GPU gang on 3 nodes runs at half rate": {
			gpus: 16, attempts: []attempt{{spread16, 0}}, slow: 0.5,
			end: 2000, held: 2000, spread: 1000,
		},
		"a 16-GPU gang on its 2 nodes runs at full rate": {
			gpus: 16, attempts: []attempt{{[]int{8, 8}, 0}}, slow: 0.5,
			end: 1000, held: 1000,
		},
		"without a slowdown a spread gang runs at full rate": {
			gpus: 16, attempts: []attempt{{spread16, 0}}, slow: 1,
			end: 1000, held: 1000,
		},
		"a zero slowdown is none": {
			gpus: 16, attempts: []attempt{{spread16, 0}}, slow: 0,
			end: 1000, held: 1000,
		},
		// 2000 s of running time, leases renewed at 600, 1200 and 1800 s,
		// each pausing it 10 s: 600 + 590 + 590 + 220 s of running.
		"a renewal keeps the placement and the rate": {
			gpus: 16, attempts: []attempt{{spread16, sec(600)}}, renew: sec(600), slow: 0.5, ckptRen: true,
			end: 2030, held: 2030, ckpt: 30, spread: 1000,
		},
		// 0–600 s spread at half rate: 300 s of work; checkpoint to 610 s;
		// resumed on one node, cold start to 640 s, 700 s left at full
		// rate.
		"a resume on its minimum nodes restores the full rate": {
			gpus: 8, attempts: []attempt{{[]int{4, 4}, sec(600)}, {[]int{0, 0, 8}, 0}}, slow: 0.5,
			end: 1340, held: 1340, ckpt: 10, cold: 30, spread: 300,
		},
		// The same, the other way round: 600 s of work by 600 s, resumed
		// spread at 640 s with 400 s left at half rate.
		"a resume spread over more nodes slows the job down": {
			gpus: 8, attempts: []attempt{{[]int{0, 0, 8}, sec(600)}, {[]int{4, 4}, 0}}, slow: 0.5,
			end: 1440, held: 1440, ckpt: 10, cold: 30, spread: 400,
		},
		// 300 s of work at the preemption, of which 4 iterations of 70 s
		// (280 s) are kept and 20 s lost; 720 s left from 640 s.
		"a preemption loses the partial iteration of the slow stretch": {
			gpus: 8, attempts: []attempt{{[]int{4, 4}, sec(600)}, {[]int{0, 0, 8}, 0}}, slow: 0.5, iter: sec(70),
			end: 1360, held: 1360, ckpt: 10, cold: 30, lost: 20, spread: 300,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(3, 8, "x")
			cfg.SpreadSlowdown = tc.slow
			cfg.CheckpointOnRenew = tc.ckptRen
			cfg.Iteration = tc.iter
			jobs := []trace.Job{tj("a", "x", tc.gpus, 0, 1000)}
			// The same run without the engine's shortcuts, too.
			r, err := CompareExhaustive(cfg, func() trace.Source { return src(jobs...) }, func() (Policy, error) {
				return &placed{attempts: map[string][]attempt{"a": tc.attempts}, renew: tc.renew}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			a := jobByID(t, r, "a")
			got := [...]time.Duration{a.End.Sub(t0), a.Held, a.Checkpoint, a.ColdStart, a.Lost, a.Spread}
			want := [...]time.Duration{sec(tc.end), sec(tc.held), sec(tc.ckpt), sec(tc.cold), sec(tc.lost), sec(tc.spread)}
			if got != want {
				t.Errorf("end, held, checkpoint, cold start, lost, spread = %v, want %v", got, want)
			}
			if a.Held != a.Run+a.Checkpoint+a.ColdStart+a.Lost+a.Spread {
				t.Errorf("held %v is not run + overheads %+v", a.Held, a)
			}
			g := float64(tc.gpus)
			s := r.Stats
			if s.SpreadGPUSeconds != float64(tc.spread)*g || s.LostGPUSeconds != float64(tc.lost)*g ||
				s.OverheadGPUSeconds != float64(tc.ckpt+tc.cold+tc.lost+tc.spread)*g {
				t.Errorf("stats: spread %v, lost %v, overhead %v GPU·s", s.SpreadGPUSeconds, s.LostGPUSeconds, s.OverheadGPUSeconds)
			}
		})
	}
}

// TestSpreadSlowdownOutsideItsRangeIsRefused: a rate outside (0, 1] is
// ErrConfig naming the field, before anything runs.
func TestSpreadSlowdownOutsideItsRangeIsRefused(t *testing.T) {
	for _, s := range []float64{-0.5, 1.5, math.NaN(), math.Inf(1), math.Inf(-1)} {
		cfg := testConfig(1, 8, "x")
		cfg.SpreadSlowdown = s
		err := cfg.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(fmt.Sprint(err), "SpreadSlowdown") {
			t.Errorf("SpreadSlowdown %v: %v, want ErrConfig naming SpreadSlowdown", s, err)
		}
		if _, err := Run(cfg, src(tj("a", "x", 1, 0, 10)), &greedy{}); !errors.Is(err, ErrConfig) {
			t.Errorf("Run with SpreadSlowdown %v: %v, want ErrConfig", s, err)
		}
	}
}

// TestPropertySlowerNeverFinishesEarlier runs random jobs, each with its
// own two nodes so that no job waits for another's GPUs, under random
// sequences of placements, spread over both nodes or on one, through
// leases that are renewed or not: each job's placements and the times they
// begin depend only on its own progress (with several jobs, checkpoints
// are instant, so that none waits for another's release), so a lower
// spread rate never
// ends a job earlier, a rate of one is no slowdown at all, and every job's
// held time splits exactly into work and overheads.
func TestPropertySlowerNeverFinishesEarlier(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(t, "jobs")
		cfg := testConfig(2*n, 4, "x")
		// Leases long enough that even the slowest stretch does a whole
		// iteration after its overheads (≥ 265 s × 0.25), or a run that
		// always loses its partial iteration would never end.
		cfg.Lease = sec(rapid.SampledFrom([]int{300, 900}).Draw(t, "lease"))
		cfg.Checkpoint = sec(rapid.IntRange(0, 15).Draw(t, "ckpt"))
		if n > 1 {
			// A release in flight holds back every grant (the start
			// barrier): jobs would wait for each other's checkpoints.
			cfg.Checkpoint = 0
		}
		cfg.ColdStart = sec(rapid.IntRange(0, 20).Draw(t, "cold"))
		cfg.CheckpointOnRenew = rapid.Bool().Draw(t, "ckptOnRenew")
		cfg.Iteration = sec(rapid.SampledFrom([]int{0, 0, 7, 25}).Draw(t, "iteration"))
		renew := time.Duration(0)
		if rapid.Bool().Draw(t, "renew") {
			renew = cfg.Lease
		}
		attempts := map[string][]attempt{}
		var jobs []trace.Job
		for i := range n {
			id := fmt.Sprintf("j%d", i)
			g := rapid.IntRange(2, 4).Draw(t, "gpus")
			for k := range rapid.IntRange(1, 4).Draw(t, "attempts") {
				gpus := make([]int, 2*n)
				if rapid.Bool().Draw(t, fmt.Sprintf("spread%d", k)) {
					gpus[2*i], gpus[2*i+1] = g/2, g-g/2
				} else {
					gpus[2*i+rapid.IntRange(0, 1).Draw(t, "node")] = g
				}
				attempts[id] = append(attempts[id], attempt{gpus, cfg.Lease})
			}
			jobs = append(jobs, tj(id, "x", g, rapid.IntRange(0, 100).Draw(t, "submit"), rapid.IntRange(0, 2000).Draw(t, "dur")))
		}
		slices.SortStableFunc(jobs, func(a, b trace.Job) int { return a.Submit.Compare(b.Submit) })
		hi := rapid.SampledFrom([]float64{1, 0.9, 0.5}).Draw(t, "higher")
		lo := hi * rapid.SampledFrom([]float64{1, 0.8, 0.5}).Draw(t, "lower")
		run := func(s float64) *Result {
			c := cfg
			c.SpreadSlowdown = s
			r, err := Run(c, src(jobs...), &placed{attempts: attempts, renew: renew})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		none, fast, slow := run(0), run(hi), run(lo)
		if hi == 1 && (fmt.Sprint(fast.Run) != fmt.Sprint(none.Run) || fast.Stats != none.Stats) {
			t.Fatal("a rate of one differs from no slowdown")
		}
		for _, j := range jobs {
			f, s := jobIn(t, fast, j.ID), jobIn(t, slow, j.ID)
			if s.End.Before(f.End) {
				t.Fatalf("job %s ends at %v at rate %v, earlier than %v at rate %v", j.ID, s.End.Sub(t0), lo, f.End.Sub(t0), hi)
			}
			for _, x := range []struct {
				r    *Result
				rate float64
			}{{fast, hi}, {slow, lo}} {
				a := jobIn(t, x.r, j.ID)
				if a.Held != a.Run+a.Checkpoint+a.ColdStart+a.Lost+a.Spread {
					t.Fatalf("rate %v, job %s: held %v is not run + overheads %+v", x.rate, j.ID, a.Held, a)
				}
				if x.rate == 1 && a.Spread != 0 {
					t.Fatalf("rate %v, job %s: spread %v", x.rate, j.ID, a.Spread)
				}
			}
		}
	})
}

// jobIn is the record of job id in r.
func jobIn(t *rapid.T, r *Result, id string) metrics.JobRecord {
	for _, j := range r.Run.Jobs {
		if j.ID == id {
			return j
		}
	}
	t.Fatalf("job %s not in the result", id)
	return metrics.JobRecord{}
}
