package astraea

import (
	"fmt"
	"github.com/astraea-sched/astraea/simulate"
	"slices"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate/trace"
	"pgregory.net/rapid"
)

// starvingGang is a workload in which ASTRAEA's round starves a gang: tenant
// b's sixteen 1-GPU jobs fill both 8-GPU nodes, started a minute apart so
// that their leases end one at a time, and tenant a's 16-GPU job, submitted
// at 1,000 s, never fits what one lease end frees. a is the most
// under-served tenant at every round, so the round tries its gang first,
// sends a out of play, and renews b's job.
func starvingGang() (simulate.Config, []trace.Job) {
	cfg := testConfig(2, 8, "a", "b")
	var jobs []trace.Job
	for i := range 16 {
		jobs = append(jobs, tj(fmt.Sprintf("b%02d", i), "b", 1, 60*i, 10_000))
	}
	jobs = append(jobs, tj("gang", "a", 16, 1000, 1000))
	return cfg, jobs
}

func TestReserveServesAStarvingGang(t *testing.T) {
	cfg, jobs := starvingGang()
	plain, _ := New(DefaultOptions())
	r := mustRun(t, cfg, src(jobs...), plain)
	if got := jobByID(t, r, "gang").FirstStart.Sub(t0); got < sec(10_000) {
		t.Fatalf("without reservations the gang starts at %v; the workload no longer starves it", got)
	}

	o := DefaultOptions()
	o.Name, o.ReserveAfter = "astraea-reserve", 600*time.Second
	reserving, _ := New(o)
	r = mustRun(t, cfg, src(jobs...), reserving)
	// The gang is the blocked pick from the 1,000 s tick, reserved (both
	// nodes) at the first tick 600 s later, and b's jobs there are not
	// renewed: each goes at its lease end, within 900 s, after its 10 s
	// checkpoint. The gang starts at the tick after the last release.
	latest := sec(1000) + o.ReserveAfter + cfg.Interval + simulate.DefaultLease + cfg.Checkpoint + cfg.Interval
	g := jobByID(t, r, "gang")
	if got := g.FirstStart.Sub(t0); got > latest {
		t.Errorf("with reservations the gang starts at %v, want by %v", got, latest)
	}
	if r.Stats.Preemptions == 0 {
		t.Error("no job of b was suspended for the gang")
	}
	for _, j := range r.Run.Jobs {
		if !j.Finished() {
			t.Errorf("job %s never finished", j.ID)
		}
	}
}

// reserveWatcher runs a reserving ASTRAEA and checks, at every tick, what
// a reservation promises: while the reserved job waits no other job is
// granted or renewed on its nodes, and the job is granted within a lease,
// two checkpoints and two ticks of the reservation.
type reserveWatcher struct {
	a        *Policy
	cfg      simulate.Config
	t        *rapid.T
	job      string    // the reservation awaiting its grant, if any
	reserved time.Time // when it was made
	made     int       // reservations made
}

func (w *reserveWatcher) Name() string              { return w.a.Name() }
func (w *reserveWatcher) AccountsMode() ledger.Mode { return w.a.AccountsMode() }
func (w *reserveWatcher) Schedule(s *simulate.State) (simulate.Decision, error) {
	before, active := w.a.reserver.Held()
	d, err := w.a.Schedule(s)
	if err != nil {
		return d, err
	}
	// The promise holds while the job waits: not at the tick its nodes
	// hold it (the reservation is spent; the rest of its nodes is free for
	// all), nor once it started elsewhere.
	job := string(before.Job)
	granted := slices.ContainsFunc(d.Grants, func(g simulate.Grant) bool { return g.Job == job })
	pending := slices.ContainsFunc(s.Pending, func(js *simulate.JobState) bool { return js.Job.ID == job })
	if active && pending && !granted {
		for _, g := range d.Grants {
			p := g.Placement
			if g.Renew {
				k := slices.IndexFunc(s.Expiring, func(js *simulate.JobState) bool { return js.Job.ID == g.Job })
				p = s.Expiring[k].Placement
			}
			if slices.ContainsFunc(p.Slots, func(sl placement.Slot) bool { return slices.Contains(before.Nodes, sl.Node) }) {
				w.t.Fatalf("at %v job %s is granted (renew %v) on %v, held for %s", s.Now, g.Job, g.Renew, p, job)
			}
		}
	}
	if w.job != "" && slices.ContainsFunc(d.Grants, func(g simulate.Grant) bool { return g.Job == w.job }) {
		lease := grantedLease(w.cfg.Lease)
		bound := lease + 2*w.cfg.Checkpoint + 2*w.cfg.Interval
		if got := s.Now.Sub(w.reserved); got > bound {
			w.t.Fatalf("job %s granted %v after its reservation, want within %v", w.job, got, bound)
		}
		w.job = ""
	}
	if h, now := w.a.reserver.Held(); now && (!active || h.Job != before.Job) {
		w.job, w.reserved = string(h.Job), s.Now
		w.made++
	}
	return d, nil
}

// TestPropertyReservationHoldsItsNodes runs the reserving variant on varied
// workloads (the engine checks its invariants as it goes) and checks what a
// reservation promises (see reserveWatcher).
func TestPropertyReservationHoldsItsNodes(t *testing.T) {
	made := 0
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genVariedWorkload(t)
		o := DefaultOptions()
		o.ReserveAfter = time.Duration(rapid.SampledFrom([]int{1, 30, 300}).Draw(t, "reserveAfter")) * time.Second
		o.SingleLevel = rapid.Bool().Draw(t, "single")
		a, _ := New(o)
		w := &reserveWatcher{a: a, cfg: cfg, t: t}
		r, err := simulate.Run(cfg, src(jobs...), w)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range r.Run.Jobs {
			if !j.Finished() {
				t.Fatalf("job %s never finished", j.ID)
			}
		}
		made += w.made
	})
	if made == 0 {
		t.Error("no workload made a reservation: the property was never exercised")
	}
}
