package lease

import (
	"errors"
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them (match with errors.Is); the concrete type is *[Error], which names the
// job, its state, the attempted transition and the time.
var (
	// ErrInvalidTransition: the event is not allowed from the job's state
	// (for example Restore of a running job, or any event on a completed job).
	ErrInvalidTransition = errors.New("invalid transition")
	// ErrUnknownJob: the job was never added to the table (or was forgotten).
	ErrUnknownJob = errors.New("unknown job")
	// ErrDuplicateJob: Submit of a job ID the table already holds.
	ErrDuplicateJob = errors.New("duplicate job")
	// ErrTimeBackwards: the event is earlier than the job's previous event.
	ErrTimeBackwards = errors.New("time goes backwards")
	// ErrInvalidValue: a negative duration, a lost-work figure larger than the
	// work at risk, an empty job ID, an unknown final state...
	ErrInvalidValue = errors.New("invalid value")
	// ErrGuarded: Checkpoint of a running job that has not yet run for the
	// table's minimum runtime since its last (re)start.
	ErrGuarded = errors.New("guarded by minimum runtime")
	// ErrConfig: a Config or SimConfig field is out of range.
	ErrConfig = errors.New("invalid configuration")
	// ErrEffect: a side effect (signal, wait, start, restore, billing) failed;
	// the underlying error is wrapped as well.
	ErrEffect = errors.New("side effect failed")
)

// Error is the concrete error of this package.
type Error struct {
	Op     string       // the event or call: "start", "checkpoint", "boundary"...
	Job    ledger.JobID // the job at fault; empty for table-wide errors
	State  State        // the job's state when the event was rejected (0 if unknown)
	To     State        // the state the event tried to reach (0 if not a transition)
	At     time.Time    // the event time
	Err    error        // one of the sentinels above
	Detail string       // a human sentence with the numbers, may be empty
	Cause  error        // for ErrEffect: the error returned by the side effect
}

// Error formats as "lease: checkpoint job a1 at 2024-01-01T00:15:00Z:
// invalid transition suspended → checkpointing".
func (e *Error) Error() string {
	s := "lease: " + e.Op
	if e.Job != "" {
		s += fmt.Sprintf(" job %q", string(e.Job))
	}
	if !e.At.IsZero() {
		s += " at " + e.At.UTC().Format(time.RFC3339Nano)
	}
	s += ": " + e.Err.Error()
	if e.State != 0 && e.To != 0 {
		s += fmt.Sprintf(" %v → %v", e.State, e.To)
	} else if e.State != 0 {
		s += fmt.Sprintf(" (state %v)", e.State)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the sentinel and, for side-effect failures, the cause.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}
