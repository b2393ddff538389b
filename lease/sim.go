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

type simPhase int

const (
	simIdle simPhase = iota
	simRunning
	simSignalled
	simDone
)

type simJob struct {
	work     time.Duration // total useful work the job needs
	phase    simPhase
	base     time.Duration // retained progress when the current running stretch began
	runFrom  time.Time     // progress accrues from here (after a cold start or a flush)
	durable  time.Duration // progress in the last snapshot on disk
	signalAt time.Time
	progress time.Duration // progress at the signal
}

// progressAt is the retained progress at t while running.
func (j *simJob) progressAt(t time.Time) time.Duration {
	if j.phase != simRunning || !t.After(j.runFrom) {
		return j.base
	}
	return min(j.work, j.base+t.Sub(j.runFrom))
}

// Sim is a deterministic virtual-time implementation of [Effects] and
// [Renewer]. Each job has an amount of useful work; while running it makes
// progress at one second per second. A checkpoint signal stops progress; the
// job releases its GPUs Checkpoint later, losing the partial iteration in
// flight, or — if that is past the deadline — at the deadline, losing
// everything since its last flushed snapshot. A restore costs ColdStart.
// A renewal pauses the job for a renewal checkpoint. Sim never blocks and
// reads no clock, so a simulator gets the same result on every run.
type Sim struct {
	cfg  SimConfig
	jobs map[ledger.JobID]*simJob
}

// NewSim returns a simulated side-effect implementation. Negative durations
// are ErrConfig.
func NewSim(cfg SimConfig) (*Sim, error) {
	if cfg.Checkpoint < 0 || cfg.ColdStart < 0 || cfg.Iteration < 0 {
		return nil, &Error{Op: "new sim", Err: ErrConfig, Detail: fmt.Sprintf("negative overhead in %+v", cfg)}
	}
	return &Sim{cfg: cfg, jobs: make(map[ledger.JobID]*simJob)}, nil
}

// Add registers a job that needs work of useful running time to complete.
func (s *Sim) Add(job ledger.JobID, work time.Duration) error {
	if _, ok := s.jobs[job]; ok {
		return &Error{Op: "sim add", Job: job, Err: ErrDuplicateJob}
	}
	if work <= 0 {
		return &Error{Op: "sim add", Job: job, Err: ErrInvalidValue, Detail: fmt.Sprintf("work %v must be > 0", work)}
	}
	s.jobs[job] = &simJob{work: work}
	return nil
}

func (s *Sim) get(op string, job ledger.JobID, at time.Time, want simPhase) (*simJob, error) {
	j, ok := s.jobs[job]
	if !ok {
		return nil, &Error{Op: op, Job: job, At: at, Err: ErrUnknownJob}
	}
	if j.phase != want {
		return nil, &Error{Op: op, Job: job, At: at, Err: ErrInvalidTransition, Detail: "simulated job in the wrong phase"}
	}
	return j, nil
}

// Start implements [Effects]: a fresh job runs from at.
func (s *Sim) Start(at time.Time, job ledger.JobID) error {
	j, err := s.get("sim start", job, at, simIdle)
	if err != nil {
		return err
	}
	if j.base != 0 || j.durable != 0 {
		return &Error{Op: "sim start", Job: job, At: at, Err: ErrInvalidTransition, Detail: "job has progress; restore it"}
	}
	j.phase, j.runFrom = simRunning, at
	return nil
}

// Renew implements [Renewer]: the job pauses for the renewal checkpoint
// (unless disabled), which makes its last complete iteration durable.
func (s *Sim) Renew(at time.Time, job ledger.JobID) (time.Duration, error) {
	j, err := s.get("sim renew", job, at, simRunning)
	if err != nil {
		return 0, err
	}
	if s.cfg.NoRenewalCheckpoint || s.cfg.Checkpoint == 0 {
		return 0, nil
	}
	p := j.progressAt(at)
	from := at
	if j.runFrom.After(from) { // still flushing a previous renewal checkpoint
		from = j.runFrom
	}
	j.base, j.runFrom = p, from.Add(s.cfg.Checkpoint)
	j.durable = s.wholeIterations(p)
	return s.cfg.Checkpoint, nil
}

func (s *Sim) wholeIterations(p time.Duration) time.Duration {
	if s.cfg.Iteration <= 0 {
		return p
	}
	return p - p%s.cfg.Iteration
}

// Checkpoint implements [Effects]: the job stops making progress at at and
// starts flushing.
func (s *Sim) Checkpoint(at time.Time, job ledger.JobID) error {
	j, err := s.get("sim checkpoint", job, at, simRunning)
	if err != nil {
		return err
	}
	j.progress = j.progressAt(at)
	j.phase, j.signalAt = simSignalled, at
	return nil
}

// WaitReleased implements [Effects] without blocking: the release is at
// signal+Checkpoint with the partial iteration lost, or, if that is after
// the deadline, at the deadline with everything since the last durable
// snapshot lost.
func (s *Sim) WaitReleased(job ledger.JobID, deadline time.Time) (ReleaseReport, error) {
	j, err := s.get("sim wait", job, deadline, simSignalled)
	if err != nil {
		return ReleaseReport{}, err
	}
	var r ReleaseReport
	if done := j.signalAt.Add(s.cfg.Checkpoint); !done.After(deadline) {
		kept := s.wholeIterations(j.progress)
		r = ReleaseReport{At: done, Lost: j.progress - kept}
		j.durable = kept
	} else {
		r = ReleaseReport{At: deadline, Lost: j.progress - j.durable, Forced: true}
	}
	j.base = j.durable
	j.phase = simIdle
	return r, nil
}

// Restore implements [Effects]: the job loads its snapshot for ColdStart,
// then runs.
func (s *Sim) Restore(at time.Time, job ledger.JobID) (time.Duration, error) {
	j, err := s.get("sim restore", job, at, simIdle)
	if err != nil {
		return 0, err
	}
	j.phase, j.runFrom = simRunning, at.Add(s.cfg.ColdStart)
	return s.cfg.ColdStart, nil
}

// Progress returns a job's retained progress at at (work done that survives)
// and the work it needs in total.
func (s *Sim) Progress(job ledger.JobID, at time.Time) (progress, work time.Duration, ok bool) {
	j, ok := s.jobs[job]
	if !ok {
		return 0, 0, false
	}
	if j.phase == simSignalled {
		return j.progress, j.work, true
	}
	return j.progressAt(at), j.work, true
}

// CompletesAt returns when a running job finishes its work if nothing
// interrupts it; ok is false for jobs that are not running. The caller
// finishes the job at that time (Table.Finish with Completed, then
// Sim.Finish); the Sim's progress stops at the job's work, the Table's
// does not, so a late Finish would count the extra time as progress.
func (s *Sim) CompletesAt(job ledger.JobID) (at time.Time, ok bool) {
	j, found := s.jobs[job]
	if !found || j.phase != simRunning {
		return time.Time{}, false
	}
	return j.runFrom.Add(j.work - j.base), true
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
