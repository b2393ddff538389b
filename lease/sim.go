package lease

import (
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// SimConfig sets the overheads of [Sim].
type SimConfig struct {
	// Checkpoint is the time a job needs after its checkpoint signal to
	// flush its last complete snapshot and release its GPUs. It is also the
	// renewal checkpoint charged at every renewal, unless NoRenewalCheckpoint.
	Checkpoint time.Duration
	// ColdStart is the time a restored job needs to load its snapshot before
	// it runs again.
	ColdStart time.Duration
	// Iteration is the length of one training iteration. Snapshots hold
	// whole iterations, so a preemption loses the partial iteration in
	// flight. Zero means progress is continuous and a clean flush loses
	// nothing.
	Iteration time.Duration
	// NoRenewalCheckpoint skips the renewal checkpoint. By default every
	// lease end costs a checkpoint (the paper's accounting), and only a
	// resume after a failed renewal costs a cold start.
	NoRenewalCheckpoint bool
}

// Sim is a deterministic virtual-time implementation of [Effects] and
// [Renewer]. Each job has an amount of useful work; while running it makes
// progress at one second per second. A checkpoint signal stops progress; the
// job releases its GPUs Checkpoint later, losing the partial iteration in
// flight, or — if that is past the deadline — at the deadline, losing
// everything since its last flushed snapshot. A restore costs ColdStart.
// A renewal pauses the job for a renewal checkpoint. Each job's
// arithmetic is a [Progress]. Sim never blocks and reads no clock, so a
// simulator gets the same result on every run.
type Sim struct {
	cfg  SimConfig
	jobs map[ledger.JobID]*Progress
}

// NewSim returns a simulated side-effect implementation. Negative durations
// are ErrConfig.
func NewSim(cfg SimConfig) (*Sim, error) {
	if err := checkOverheads("new sim", time.Time{}, cfg); err != nil {
		return nil, err
	}
	return &Sim{cfg: cfg, jobs: make(map[ledger.JobID]*Progress)}, nil
}

// Add registers a job that needs work of useful running time to complete.
func (s *Sim) Add(job ledger.JobID, work time.Duration) error {
	if _, ok := s.jobs[job]; ok {
		return &Error{Op: "sim add", Job: job, Err: ErrDuplicateJob}
	}
	if work <= 0 {
		return &Error{Op: "sim add", Job: job, Err: ErrInvalidValue, Detail: fmt.Sprintf("work %v must be > 0", work)}
	}
	p, err := NewProgress(work)
	if err != nil {
		return err
	}
	s.jobs[job] = &p
	return nil
}

func (s *Sim) get(op string, job ledger.JobID, at time.Time) (*Progress, error) {
	p, ok := s.jobs[job]
	if !ok {
		return nil, &Error{Op: op, Job: job, At: at, Err: ErrUnknownJob}
	}
	return p, nil
}

// named returns err of a job's Progress as the Sim's own: op and job name
// the call.
func named(op string, job ledger.JobID, err error) error {
	if e, ok := err.(*Error); ok {
		c := *e
		c.Op, c.Job = op, job
		return &c
	}
	return err
}

// Start implements [Effects]: a fresh job runs from at.
func (s *Sim) Start(at time.Time, job ledger.JobID) error {
	p, err := s.get("sim start", job, at)
	if err != nil {
		return err
	}
	return named("sim start", job, p.Start(at))
}

// Renew implements [Renewer]: the job pauses for the renewal checkpoint
// (unless disabled), which makes its last complete iteration durable.
func (s *Sim) Renew(at time.Time, job ledger.JobID) (time.Duration, error) {
	p, err := s.get("sim renew", job, at)
	if err != nil {
		return 0, err
	}
	d, err := p.Renew(at, s.cfg)
	return d, named("sim renew", job, err)
}

// Checkpoint implements [Effects]: the job stops making progress at at and
// starts flushing.
func (s *Sim) Checkpoint(at time.Time, job ledger.JobID) error {
	p, err := s.get("sim checkpoint", job, at)
	if err != nil {
		return err
	}
	return named("sim checkpoint", job, p.Signal(at))
}

// WaitReleased implements [Effects] without blocking: the release is at
// signal+Checkpoint with the partial iteration lost, or, if that is after
// the deadline, at the deadline with everything since the last durable
// snapshot lost.
func (s *Sim) WaitReleased(job ledger.JobID, deadline time.Time) (ReleaseReport, error) {
	p, err := s.get("sim wait", job, deadline)
	if err != nil {
		return ReleaseReport{}, err
	}
	r, err := p.Release(deadline, s.cfg)
	return r, named("sim wait", job, err)
}

// Restore implements [Effects]: the job loads its snapshot for ColdStart,
// then runs.
func (s *Sim) Restore(at time.Time, job ledger.JobID) (time.Duration, error) {
	p, err := s.get("sim restore", job, at)
	if err != nil {
		return 0, err
	}
	d, err := p.Restore(at, s.cfg)
	return d, named("sim restore", job, err)
}

// Progress returns a job's retained progress at at (work done that survives)
// and the work it needs in total; for a job the Sim does not know, ok is
// false and both durations are zero.
func (s *Sim) Progress(job ledger.JobID, at time.Time) (progress, work time.Duration, ok bool) {
	p, ok := s.jobs[job]
	if !ok {
		return 0, 0, false
	}
	return p.At(at), p.Work(), true
}

// CompletesAt returns when a running job finishes its work if nothing
// interrupts it; ok is false for jobs that are not running. The caller
// finishes the job at that time (Table.Finish with Completed, then
// Sim.Finish); the Sim's progress stops at the job's work, the Table's
// does not, so a late Finish would count the extra time as progress.
func (s *Sim) CompletesAt(job ledger.JobID) (at time.Time, ok bool) {
	p, found := s.jobs[job]
	if !found {
		return time.Time{}, false
	}
	return p.CompletesAt()
}

// Finish records that a job ended (completed, failed or cancelled) and
// forgets it.
func (s *Sim) Finish(job ledger.JobID) error {
	if _, ok := s.jobs[job]; !ok {
		return &Error{Op: "sim finish", Job: job, Err: ErrUnknownJob}
	}
	delete(s.jobs, job)
	return nil
}
