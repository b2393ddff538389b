package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// Team is a tenant of the toy cluster: a name and a weight (its share of the
// cluster is weight ÷ Σ weights).
type Team struct {
	Name   ledger.TenantID
	Weight float64
}

// Event is one line of the script: a job submission (Job set) or a change of
// the cluster's GPU count (Capacity set, Job empty). At is the offset from
// the start of the day.
type Event struct {
	At       time.Duration
	Job      ledger.JobID
	Team     ledger.TenantID
	GPUs     ledger.GPUs   // gang size of the job
	Work     time.Duration // running time the job needs
	Capacity ledger.GPUs   // new cluster size, for a capacity event
}

// Teams returns the three teams of the example: vision pays for half of
// the cluster, nlp and speech for a quarter each.
func Teams() []Team {
	return []Team{{"nlp", 1}, {"speech", 1}, {"vision", 2}}
}

// Script returns the scripted day: submissions through the day and a
// maintenance window that takes 4 GPUs away from 13:00 to 15:00.
func Script() []Event {
	h := func(hh, mm int) time.Duration { return time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute }
	return []Event{
		{At: h(8, 0), Job: "v1", Team: "vision", GPUs: 8, Work: 6 * time.Hour},
		{At: h(8, 0), Job: "v2", Team: "vision", GPUs: 8, Work: 3 * time.Hour},
		{At: h(9, 0), Job: "n1", Team: "nlp", GPUs: 8, Work: 4 * time.Hour},
		{At: h(9, 30), Job: "s1", Team: "speech", GPUs: 4, Work: 2 * time.Hour},
		{At: h(10, 0), Job: "n2", Team: "nlp", GPUs: 4, Work: 5 * time.Hour},
		{At: h(11, 0), Job: "v3", Team: "vision", GPUs: 4, Work: 4 * time.Hour},
		{At: h(13, 0), Capacity: 12},
		{At: h(14, 0), Job: "s2", Team: "speech", GPUs: 8, Work: 6 * time.Hour},
		{At: h(15, 0), Capacity: 16},
		{At: h(16, 0), Job: "n3", Team: "nlp", GPUs: 8, Work: 5 * time.Hour},
		{At: h(20, 0), Job: "v4", Team: "vision", GPUs: 8, Work: 8 * time.Hour},
	}
}

// job is the scheduler's own record of a job.
type job struct {
	id        ledger.JobID
	team      ledger.TenantID
	gpus      ledger.GPUs
	left      time.Duration // work still to do
	submitted time.Time
	started   time.Time // start of the current run, while running
	running   bool
}

// Scheduler is a user's own simple scheduler: a queue of waiting jobs, a pool of
// GPUs counted as a number, and a ledger kept beside them.
//
// The ledger uses Eq. 8 (ledger.DemandAware): a team is owed GPU time only
// while it has work submitted. This cluster's teams come and go during the
// day; under Eq. 16 (ledger.QuotaShare) a team that was idle all morning
// would arrive at noon with a morning's worth of credit and take the cluster
// until it was repaid, which suits teams that pay for a fixed quota, not a
// shared pool whose idle GPUs are simply used by whoever has work.
type Scheduler struct {
	Ledger   *ledger.Ledger
	start    time.Time // the script's day starts here
	teams    []Team
	capacity ledger.GPUs
	used     ledger.GPUs
	jobs     []*job // submission order
	now      time.Time
	// scheduled is the scheduler's own tally of GPU·seconds it handed out
	// (gang size × running time of every finished run), kept independently
	// of the ledger so that the two can be checked against each other.
	scheduled ledger.GPUSeconds
	out       io.Writer
}

// NewScheduler returns a scheduler of capacity GPUs at start with the given
// teams registered in a fresh ledger; decisions are logged to out.
func NewScheduler(start time.Time, capacity ledger.GPUs, teams []Team, out io.Writer) (*Scheduler, error) {
	l, err := ledger.New(ledger.Config{Mode: ledger.DemandAware, Capacity: capacity, Start: start})
	if err != nil {
		return nil, err
	}
	for _, t := range teams {
		if err := l.AddTenant(start, t.Name, t.Weight); err != nil {
			return nil, err
		}
	}
	return &Scheduler{Ledger: l, start: start, teams: teams, capacity: capacity, now: start, out: out}, nil
}

// Run plays the script (offsets from the start of the day the scheduler was
// created at) until end: at every decision point — a job finishing, a
// submission, a capacity change — it applies the event to its own state and
// to the ledger, then schedules. Events at or after end are left out (the
// interval is half-open); jobs still running at end keep running.
func (s *Scheduler) Run(script []Event, end time.Time) error {
	start := s.start
	events := slices.Clone(script)
	slices.SortStableFunc(events, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	for {
		next := end
		if len(events) > 0 {
			if e := start.Add(events[0].At); e.Before(next) {
				next = e
			}
		}
		if t, ok := s.nextFinish(); ok && t.Before(next) {
			next = t
		}
		if err := s.finishUntil(next); err != nil {
			return err
		}
		if !next.Before(end) {
			break
		}
		for len(events) > 0 && start.Add(events[0].At).Equal(next) {
			if err := s.apply(next, events[0]); err != nil {
				return err
			}
			events = events[1:]
		}
		if err := s.schedule(next); err != nil {
			return err
		}
	}
	s.now = end
	return s.Ledger.Advance(end)
}

// Drain runs without new submissions until every job has finished and
// returns the time the last one did.
func (s *Scheduler) Drain() (time.Time, error) {
	for {
		t, ok := s.nextFinish()
		if !ok {
			return s.now, nil
		}
		if err := s.finishUntil(t); err != nil {
			return time.Time{}, err
		}
		if err := s.schedule(t); err != nil {
			return time.Time{}, err
		}
	}
}

// nextFinish returns when the next running job completes.
func (s *Scheduler) nextFinish() (time.Time, bool) {
	var t time.Time
	ok := false
	for _, j := range s.jobs {
		if j.running {
			if f := j.started.Add(j.left); !ok || f.Before(t) {
				t, ok = f, true
			}
		}
	}
	return t, ok
}

// finishUntil completes, in id order, every running job whose work ends at
// or before t, each at its own end time (all ≤ t, so time never goes back).
func (s *Scheduler) finishUntil(t time.Time) error {
	for {
		f, ok := s.nextFinish()
		if !ok || f.After(t) {
			return nil
		}
		for _, j := range s.jobs {
			if j.running && j.started.Add(j.left).Equal(f) {
				s.release(f, j)
				j.left = 0
				if err := s.Ledger.Finish(f, j.id, ledger.Completed); err != nil {
					return err
				}
				// Nothing reads a finished job's account here, so drop
				// its record: a scheduler that runs for months keeps
				// memory proportional to its live jobs. Tenant and
				// cluster accounts are unaffected.
				if err := s.Ledger.Forget(j.id); err != nil {
					return err
				}
				fmt.Fprintf(s.out, "%s  %-6s finishes, %2d GPUs free\n", clock(f), j.id, s.capacity-s.used)
			}
		}
		s.jobs = slices.DeleteFunc(s.jobs, func(j *job) bool { return !j.running && j.left == 0 })
	}
}

// release takes j off its GPUs at t, adding its run to the tally.
func (s *Scheduler) release(t time.Time, j *job) {
	d := t.Sub(j.started)
	s.scheduled += ledger.GPUSeconds(float64(j.gpus) * d.Seconds())
	j.left -= d
	j.running = false
	s.used -= j.gpus
	s.now = t
}

// apply records one script event at t.
func (s *Scheduler) apply(t time.Time, e Event) error {
	s.now = t
	if e.Job == "" {
		return s.setCapacity(t, e.Capacity)
	}
	if err := s.Ledger.Submit(t, e.Job, e.Team, e.GPUs, 1); err != nil {
		return err
	}
	s.jobs = append(s.jobs, &job{id: e.Job, team: e.Team, gpus: e.GPUs, left: e.Work, submitted: t})
	fmt.Fprintf(s.out, "%s  %-6s submitted by %s: %d GPUs for %s\n", clock(t), e.Job, e.Team, e.GPUs, hours(e.Work))
	return nil
}

// setCapacity resizes the pool at t. When GPUs go away it stops running
// jobs, best-served team first (highest ρ), until the rest fit; stopped jobs
// wait again with the work they have left.
func (s *Scheduler) setCapacity(t time.Time, m ledger.GPUs) error {
	fmt.Fprintf(s.out, "%s  cluster now %d GPUs\n", clock(t), m)
	if s.used > m {
		var running []*job
		for _, j := range s.jobs {
			if j.running {
				running = append(running, j)
			}
		}
		// Reverse of the scheduling order: highest team ρ, then highest job ρ.
		v := s.Ledger.View(t)
		slices.SortFunc(running, func(a, b *job) int { return -s.compareJobs(v, a, b) })
		for _, j := range running {
			if s.used <= m {
				break
			}
			s.release(t, j)
			if err := s.Ledger.Stop(t, j.id); err != nil {
				return err
			}
			fmt.Fprintf(s.out, "%s  %-6s stopped (%s ρ %s), %s of work left\n", clock(t), j.id, j.team, teamRho(v, j.team), hours(j.left))
		}
	}
	s.capacity = m
	return s.Ledger.SetCapacity(t, m)
}

// compareJobs is the scheduling order: team ρ, team name, job ρ, submission
// time, job id. It ends in an id, so it is a total order.
func (s *Scheduler) compareJobs(v ledger.View, a, b *job) int {
	ta, _ := v.TenantAccount(a.team)
	tb, _ := v.TenantAccount(b.team)
	ja, _ := v.JobAccount(a.id)
	jb, _ := v.JobAccount(b.id)
	return cmp.Or(
		ta.Rho.Compare(tb.Rho),
		cmp.Compare(a.team, b.team),
		ja.Rho.Compare(jb.Rho),
		a.submitted.Compare(b.submitted),
		cmp.Compare(a.id, b.id),
	)
}

// schedule is one decision point at t: waiting jobs in the scheduling order,
// each started if it fits in the free GPUs.
func (s *Scheduler) schedule(t time.Time) error {
	s.now = t
	var waiting []*job
	for _, j := range s.jobs {
		if !j.running {
			waiting = append(waiting, j)
		}
	}
	if len(waiting) == 0 {
		return nil
	}
	v := s.Ledger.View(t)
	slices.SortFunc(waiting, func(a, b *job) int { return s.compareJobs(v, a, b) })
	var starts []ledger.JobID
	for _, j := range waiting {
		if j.gpus > s.capacity-s.used {
			continue
		}
		ja, _ := v.JobAccount(j.id)
		starts = append(starts, j.id)
		j.running, j.started = true, t
		s.used += j.gpus
		fmt.Fprintf(s.out, "%s  %-6s starts on %d GPUs (%s ρ %s, job ρ %s)\n", clock(t), j.id, j.gpus, j.team, teamRho(v, j.team), ja.Rho)
	}
	// The decision point's starts in one call: all of them or, if the
	// ledger rejects one, none (then the run stops with its error).
	return s.Ledger.StartAll(t, starts)
}

// Scheduled returns the GPU·seconds the scheduler itself handed out over
// [its start, at), counting runs still going at at up to at. at must not be
// before the last decision point.
func (s *Scheduler) Scheduled(at time.Time) ledger.GPUSeconds {
	total := s.scheduled
	for _, j := range s.jobs {
		if j.running {
			total += ledger.GPUSeconds(float64(j.gpus) * at.Sub(j.started).Seconds())
		}
	}
	return total
}

// Report formats the accounts over [from, to): per team the GPU-hours used
// and owed and ρ, then the cluster's totals.
func (s *Scheduler) Report(from, to time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Report %s to %s\n", stamp(from), stamp(to))
	fmt.Fprintf(&b, "  %-8s %6s %10s %10s %8s\n", "team", "weight", "used GPU-h", "owed GPU-h", "ρ")
	for _, t := range s.teams {
		a, err := s.Ledger.TenantAccount(t.Name, from, to)
		if err != nil {
			fmt.Fprintf(&b, "  %-8s error: %v\n", t.Name, err)
			continue
		}
		fmt.Fprintf(&b, "  %-8s %6g %10.1f %10.1f %8s\n", t.Name, t.Weight, a.Alloc/3600, a.FairShare/3600, a.Rho)
	}
	c, err := s.Ledger.ClusterAccount(from, to)
	if err != nil {
		fmt.Fprintf(&b, "  cluster error: %v\n", err)
		return b.String()
	}
	fmt.Fprintf(&b, "  cluster: %.1f GPU-h capacity, %.1f used, %.1f idle\n", c.Capacity/3600, c.Allocated/3600, c.Idle/3600)
	return b.String()
}

// teamRho formats a team's ρ in a view.
func teamRho(v ledger.View, t ledger.TenantID) string {
	a, _ := v.TenantAccount(t)
	return a.Rho.String()
}

// teamList formats the teams and their weights.
func teamList(teams []Team) string {
	parts := make([]string, len(teams))
	for i, t := range teams {
		parts[i] = fmt.Sprintf("%s (weight %g)", t.Name, t.Weight)
	}
	return strings.Join(parts, ", ")
}

// clock formats a time of the script as an hour of day, with the day offset
// when it is past the first midnight.
func clock(t time.Time) string {
	d := t.Sub(day0)
	if d >= 24*time.Hour {
		return fmt.Sprintf("+%dd %s", int(d/(24*time.Hour)), t.Format("15:04"))
	}
	return t.Format("15:04")
}

// stamp formats a report bound.
func stamp(t time.Time) string { return t.Format("2006-01-02 15:04") }

// hours formats a duration in hours.
func hours(d time.Duration) string { return fmt.Sprintf("%gh", d.Hours()) }
