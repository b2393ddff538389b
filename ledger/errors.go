package ledger

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them, so callers branch with errors.Is; the concrete type is [*Error],
// which names the operation, the tenant or job and the time at fault.
var (
	// ErrTimeBackwards: an event's time is before Now(). The ledger never
	// clamps a late event to Now(): silently moving service in time would
	// falsify every account that covers it.
	ErrTimeBackwards = errors.New("time goes backwards")
	// ErrUnknownTenant: no tenant with that id was ever added (or, for
	// events, it has been removed).
	ErrUnknownTenant = errors.New("unknown tenant")
	// ErrUnknownJob: no job with that id is known (never submitted, or
	// forgotten: by Forget, or because it finished before Begin()).
	ErrUnknownJob = errors.New("unknown job")
	// ErrDuplicateTenant: AddTenant of a tenant that is already registered.
	ErrDuplicateTenant = errors.New("duplicate tenant")
	// ErrDuplicateJob: Submit of a job id that the ledger still knows.
	ErrDuplicateJob = errors.New("duplicate job")
	// ErrInvalidTransition: the job is not in a state that allows the event
	// (start of a running job, stop of a pending one, any event after finish,
	// Forget of a job that has not finished).
	ErrInvalidTransition = errors.New("invalid transition")
	// ErrInvalidValue: a demand, weight, capacity, final state or time that
	// is out of range (≤ 0, NaN, ±Inf, negative capacity, from > to...).
	ErrInvalidValue = errors.New("invalid value")
	// ErrTenantBusy: RemoveTenant of a tenant that still has active jobs.
	ErrTenantBusy = errors.New("tenant has active jobs")
	// ErrOutOfHistory: a query window that starts before Begin().
	ErrOutOfHistory = errors.New("window starts before retained history")
	// ErrCorruptSnapshot: snapshot bytes that are truncated, damaged or
	// inconsistent.
	ErrCorruptSnapshot = errors.New("corrupt snapshot")
	// ErrSnapshotVersion: a snapshot written by a newer (or unknown) version
	// of the encoding.
	ErrSnapshotVersion = errors.New("unsupported snapshot version")
	// ErrSnapshotFile: WriteFile or ReadFile could not write or read the
	// file; Error.Cause holds the operating system's error, which errors.Is
	// and errors.As also reach (fs.ErrNotExist, fs.ErrPermission, …).
	ErrSnapshotFile = errors.New("snapshot file")
	// ErrConfig: a Config that New rejects (negative capacity, a trailing
	// window or half-life ≤ 0, an unknown mode).
	ErrConfig = errors.New("invalid config")
)

// Error is the concrete error of every failed ledger call. Fields that do not
// apply are zero. It unwraps to its sentinel Err.
type Error struct {
	Op     string    // the method, e.g. "Submit", "TenantAccount"
	Tenant TenantID  // the tenant at fault or concerned, if any
	Job    JobID     // the job at fault or concerned, if any
	At     time.Time // the time of the event or query bound at fault, if any
	Err    error     // the sentinel, one of the Err* variables
	Detail string    // a human sentence with the offending values
	Cause  error     // the underlying error (ErrSnapshotFile's), if any
}

// Error formats as "ledger: Op job "j" tenant "t" at TIME: sentinel: detail".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("ledger: ")
	b.WriteString(e.Op)
	if e.Job != "" {
		b.WriteString(" job ")
		b.WriteString(strconv.Quote(string(e.Job)))
	}
	if e.Tenant != "" {
		b.WriteString(" tenant ")
		b.WriteString(strconv.Quote(string(e.Tenant)))
	}
	if !e.At.IsZero() {
		b.WriteString(" at ")
		b.WriteString(e.At.Format(time.RFC3339Nano))
	}
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Cause != nil {
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
	}
	return b.String()
}

// Unwrap returns the sentinel, and the cause when there is one.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}
