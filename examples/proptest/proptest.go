package proptest

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// Job is a job of the toy cluster: a gang of GPUs held for Steps steps.
type Job struct {
	ID     ledger.JobID
	Tenant ledger.TenantID
	GPUs   ledger.GPUs
	Steps  int
}

// Scheduler is the scheduler under test. Decide returns the indices in
// pending (oldest first) of the jobs to start now, in the order it starts
// them, given the ledger's accounts at this instant and the free GPUs.
type Scheduler interface {
	Decide(v ledger.View, pending []Job, free ledger.GPUs) []int
}

// ErrDecision is matched by errors.Is for a decision Run cannot carry out:
// an index out of range, a job named twice, or jobs that do not fit.
var ErrDecision = errors.New("proptest: impossible decision")

// Run is a toy cluster of Capacity GPUs around a scheduler, recording
// every event in its Ledger (Eq. 16 accounts). Time moves by Step.
type Run struct {
	Ledger   *ledger.Ledger
	Capacity ledger.GPUs
	Step     time.Duration

	now     time.Time
	steps   int
	free    ledger.GPUs
	pending []Job
	running []running
}

type running struct {
	job Job
	end time.Time
}

// NewRun returns a run starting at start with the given tenants' weights.
func NewRun(start time.Time, capacity ledger.GPUs, step time.Duration, weights map[ledger.TenantID]float64) (*Run, error) {
	l, err := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Capacity: capacity, Start: start})
	if err != nil {
		return nil, err
	}
	// In a fixed order: the ledger's history must not depend on map order.
	for _, t := range slices.Sorted(maps.Keys(weights)) {
		if err := l.AddTenant(start, t, weights[t]); err != nil {
			return nil, err
		}
	}
	return &Run{Ledger: l, Capacity: capacity, Step: step, now: start, free: capacity}, nil
}

// Now is the time of the last step (the start before the first).
func (r *Run) Now() time.Time { return r.now }

// Free is the number of GPUs no job holds.
func (r *Run) Free() ledger.GPUs { return r.free }

// Pending returns the waiting jobs, oldest first. The slice is the run's.
func (r *Run) Pending() []Job { return r.pending }

// StepWith moves time on by one step (the first step is at the start):
// the jobs whose time is up finish, arrivals are submitted, and s decides
// which waiting jobs start. It returns the jobs started. An impossible
// decision is ErrDecision, and nothing of it is carried out.
func (r *Run) StepWith(s Scheduler, arrivals []Job) ([]Job, error) {
	if r.steps > 0 {
		r.now = r.now.Add(r.Step)
	}
	r.steps++
	keep := r.running[:0]
	for _, j := range r.running {
		if j.end.After(r.now) {
			keep = append(keep, j)
			continue
		}
		if err := r.Ledger.Finish(r.now, j.job.ID, ledger.Completed); err != nil {
			return nil, err
		}
		r.free += j.job.GPUs
	}
	r.running = keep
	for _, j := range arrivals {
		if err := r.Ledger.Submit(r.now, j.ID, j.Tenant, j.GPUs, 1); err != nil {
			return nil, err
		}
		r.pending = append(r.pending, j)
	}
	picks := s.Decide(r.Ledger.View(r.now), r.pending, r.free)
	if err := r.check(picks); err != nil {
		return nil, err
	}
	var started []Job
	for _, i := range picks {
		j := r.pending[i]
		if err := r.Ledger.Start(r.now, j.ID); err != nil {
			return nil, err
		}
		r.free -= j.GPUs
		r.running = append(r.running, running{job: j, end: r.now.Add(time.Duration(j.Steps) * r.Step)})
		started = append(started, j)
	}
	r.pending = slices.DeleteFunc(r.pending, func(j Job) bool {
		return slices.ContainsFunc(started, func(s Job) bool { return s.ID == j.ID })
	})
	return started, nil
}

// check returns an ErrDecision if picks cannot be carried out.
func (r *Run) check(picks []int) error {
	free := r.free
	for k, i := range picks {
		switch {
		case i < 0 || i >= len(r.pending):
			return fmt.Errorf("%w: index %d of %d waiting jobs", ErrDecision, i, len(r.pending))
		case slices.Contains(picks[:k], i):
			return fmt.Errorf("%w: job %s started twice", ErrDecision, r.pending[i].ID)
		case r.pending[i].GPUs > free:
			return fmt.Errorf("%w: job %s needs %d GPUs, %d are free", ErrDecision, r.pending[i].ID, r.pending[i].GPUs, free)
		}
		free -= r.pending[i].GPUs
	}
	return nil
}

// LowestRho is a small ASTRAEA-like scheduler: while a waiting job fits,
// it starts the oldest fitting job of the tenant with the lowest ρ (ties
// by tenant id) among the tenants with a fitting job. ρ is read once per
// decision: a start changes no account until time moves.
type LowestRho struct{}

// Decide implements Scheduler.
func (LowestRho) Decide(v ledger.View, pending []Job, free ledger.GPUs) []int {
	var picks []int
	for {
		best := -1
		for i, j := range pending {
			if j.GPUs > free || slices.Contains(picks, i) {
				continue
			}
			if best < 0 || lowerRho(v, j.Tenant, pending[best].Tenant) {
				best = i
			}
		}
		if best < 0 {
			return picks
		}
		picks = append(picks, best)
		free -= pending[best].GPUs
	}
}

// lowerRho reports whether tenant a comes before tenant b: lower ρ, then
// lower id.
func lowerRho(v ledger.View, a, b ledger.TenantID) bool {
	ra, _ := v.TenantAccount(a)
	rb, _ := v.TenantAccount(b)
	return cmp.Or(ra.Rho.Compare(rb.Rho), cmp.Compare(a, b)) < 0
}

// FIFO starts waiting jobs in submission order and stops at the first that
// does not fit: the queue of a plain batch system. It reads no account.
type FIFO struct{}

// Decide implements Scheduler.
func (FIFO) Decide(_ ledger.View, pending []Job, free ledger.GPUs) []int {
	var picks []int
	for i, j := range pending {
		if j.GPUs > free {
			break
		}
		picks = append(picks, i)
		free -= j.GPUs
	}
	return picks
}
