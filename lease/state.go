package lease

import "fmt"

// State is where a job stands in its lease life cycle.
//
//	pending ──Start──▶ running ──Renew──▶ running            (same GPUs, no cold start)
//	                      │
//	                      └─Checkpoint─▶ checkpointing ──Release──▶ suspended
//	                                                                   │
//	running ◀──(cold start elapses)── restoring ◀──────Restore─────────┘
//
//	any non-terminal state ──Finish──▶ completed | failed | cancelled
//
// GPUs are held (and billed) in running, checkpointing and restoring; they
// are free in pending, suspended and the terminal states. The zero State is
// not a valid state: a job enters the table as [Pending].
type State int

const (
	// Pending: submitted, never started, holds no GPUs.
	Pending State = iota + 1
	// Running: holds its GPUs and makes progress under a lease.
	Running
	// Checkpointing: signalled to give its GPUs back; still holds them
	// while it flushes its last complete snapshot.
	Checkpointing
	// Suspended: released its GPUs; its progress lives in the last
	// flushed snapshot.
	Suspended
	// Restoring: granted GPUs again and paying the cold start (loading
	// the snapshot) before it runs; GPUs are held and billed.
	Restoring
	// Completed: finished its work. Terminal.
	Completed
	// Failed: ended with an error. Terminal.
	Failed
	// Cancelled: withdrawn by its owner. Terminal.
	Cancelled
)

var stateNames = [...]string{
	Pending:       "pending",
	Running:       "running",
	Checkpointing: "checkpointing",
	Suspended:     "suspended",
	Restoring:     "restoring",
	Completed:     "completed",
	Failed:        "failed",
	Cancelled:     "cancelled",
}

// String returns the lower-case name used in errors and reports.
func (s State) String() string {
	if s.Valid() {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Valid reports whether s is one of the eight defined states.
func (s State) Valid() bool { return s >= Pending && s <= Cancelled }

// Terminal reports whether s is completed, failed or cancelled: no
// transition leaves a terminal state.
func (s State) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Holds reports whether a job in state s holds GPUs and is therefore billed:
// running, checkpointing and restoring.
func (s State) Holds() bool { return s == Running || s == Checkpointing || s == Restoring }

// MarshalText encodes the state by name, so reports in JSON stay readable.
func (s State) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("lease: cannot encode %v: %w", s, ErrInvalidValue)
	}
	return []byte(stateNames[s]), nil
}

// UnmarshalText decodes a state name written by MarshalText.
func (s *State) UnmarshalText(b []byte) error {
	for i, n := range stateNames {
		if n != "" && n == string(b) {
			*s = State(i)
			return nil
		}
	}
	return fmt.Errorf("lease: unknown state %q: %w", b, ErrInvalidValue)
}
