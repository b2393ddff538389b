package trace

import (
	"errors"
	"fmt"
	"time"
)

// Job is one trace row: a gang job of one tenant, with its submit time, its
// GPU demand and how long it ran once started. The simulator replays Submit,
// GPUs and Duration unchanged, as the paper does.
type Job struct {
	ID       string
	Tenant   string
	User     string        // may be empty
	GPUs     int           // gang size, always ≥ 1 in a job returned by a Source
	Submit   time.Time     // absolute; readers parse naive times in Options.Location (UTC by default)
	Duration time.Duration // run time from start to end, no queueing; ≥ 0
	State    string        // final state as in the trace: "COMPLETED", "FAILED", "CANCELLED", ... ("" = unknown → COMPLETED)
	Weight   float64       // job weight inside its tenant; 0 means 1
	Line     int           // 1-based source line (0 for generated jobs)
}

// FinalState returns the job's final state, with an empty State read as
// "COMPLETED" (traces that record only successful jobs leave it empty).
func (j Job) FinalState() string {
	if j.State == "" {
		return "COMPLETED"
	}
	return j.State
}

// EffectiveWeight returns the job weight, with 0 read as 1.
func (j Job) EffectiveWeight() float64 {
	if j.Weight == 0 {
		return 1
	}
	return j.Weight
}

// Source streams jobs in non-decreasing Submit order. Next returns io.EOF
// after the last job; any other error is final as well (a Source does not
// resume after an error).
type Source interface {
	Next() (Job, error)
}

// Format names a trace layout. Readers select it from the header row unless
// Options.Format forces one.
type Format int

const (
	// FormatAuto selects the format from the header row (the zero value).
	FormatAuto Format = iota
	// FormatVenus is the Helios/Venus per-job table:
	// job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration.
	FormatVenus
	// FormatPhilly is the Helios-derived Philly table:
	// job_id,user,vc,gpu_num,state,submit_time,duration[,source].
	FormatPhilly
	// FormatPollux is the Pollux (OSDI '21) Philly table:
	// timestamp,duration,num_gpus,gpu_time,cluster. Its rows are not sorted,
	// so this is the one format that is buffered and sorted in memory.
	FormatPollux
	// FormatArtifact is the ASTRAEA authors' simulator input:
	// job_id,user,num_gpu,submit_time,duration, where user is the tenant and
	// submit_time counts seconds from Options.Base.
	FormatArtifact
	// FormatGeneric is this project's own documented layout:
	// tenant,job,gpus,submit,duration[,state][,weight]. See [Open].
	FormatGeneric
)

// String returns the format's lower-case name ("venus", "philly", ...).
func (f Format) String() string {
	switch f {
	case FormatAuto:
		return "auto"
	case FormatVenus:
		return "venus"
	case FormatPhilly:
		return "philly"
	case FormatPollux:
		return "pollux"
	case FormatArtifact:
		return "artifact"
	case FormatGeneric:
		return "generic"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Options tune a Reader. The zero value reads any supported format strictly,
// with naive times in UTC.
type Options struct {
	// Lenient skips bad rows instead of failing on the first one. Every
	// skipped row is counted by reason in Reader.Skipped, so nothing is
	// dropped silently.
	Lenient bool
	// Format forces a layout; FormatAuto (the zero value) selects it from
	// the header row.
	Format Format
	// Location interprets naive time stamps ("2006-01-02 15:04:05"); nil
	// means UTC. The traces state no zone, and only differences matter.
	Location *time.Location
	// Base is the origin of submit times given as seconds (the artifact
	// format, and numeric submit times in the generic format). The zero
	// value means the Unix epoch.
	Base time.Time
	// Name labels the input in errors when reading from an io.Reader; Open
	// uses the path.
	Name string
	// MaxDecompressed bounds the bytes a gzip input may decompress to:
	// 0 means DefaultMaxDecompressed, a negative value no limit. Past it
	// Next fails with ErrTooLarge.
	MaxDecompressed int64
	// Sort buffers the whole input and returns it sorted by (submit time,
	// line) instead of rejecting rows that go back in time. Memory then
	// grows with the file. FormatPollux is always sorted. Use it for
	// unsorted inputs such as the ASTRAEA artifact's own fixture.
	Sort bool
}

// Sentinel errors, matched with errors.Is. Row-level problems arrive wrapped
// in a *RowError that names the file, line and column.
var (
	ErrFormat        = errors.New("trace: unrecognised header")    // no supported layout matches the header
	ErrMissingColumn = errors.New("missing column")                // the row has fewer fields than the header needs
	ErrNumber        = errors.New("invalid number")                // a count or a duration does not parse
	ErrTime          = errors.New("invalid time")                  // a submit time does not parse, or lies outside 1678–2262
	ErrGPUs          = errors.New("GPU demand must be positive")   // GPUs ≤ 0
	ErrDuration      = errors.New("duration must not be negative") // duration < 0
	ErrLongDuration  = errors.New("duration too long")             // duration > MaxDuration
	ErrWeight        = errors.New("weight must be positive")       // weight ≤ 0, NaN or infinite
	ErrEmptyField    = errors.New("empty field")                   // an id or tenant is empty
	ErrDuplicateID   = errors.New("duplicate job id")              // a job id seen before in this input
	ErrOutOfOrder    = errors.New("submit time goes backwards")    // rows must be in non-decreasing submit order
	ErrSyntax        = errors.New("malformed CSV")                 // the CSV layer rejected the line
	ErrLineTooLong   = errors.New("line too long")                 // a line longer than MaxLineBytes; never skipped
	ErrTooLarge      = errors.New("input too large")               // gzip input past Options.MaxDecompressed; never skipped
)

// RowError reports one bad row: where it is (file, 1-based line, column
// name) and what is wrong (Err wraps one of the sentinels above).
type RowError struct {
	File   string
	Line   int
	Column string // header name of the offending field; "" when the whole row is at fault
	Value  string // the offending text, possibly empty
	Err    error
}

// Error formats the error as "trace: FILE:LINE: column NAME: reason (value)".
func (e *RowError) Error() string {
	s := fmt.Sprintf("trace: %s:%d", e.File, e.Line)
	if e.Column != "" {
		s += ": column " + e.Column
	}
	s += ": " + e.Err.Error()
	if e.Value != "" {
		s += fmt.Sprintf(" (%q)", e.Value)
	}
	return s
}

// Unwrap returns the reason, so that errors.Is matches the sentinels.
func (e *RowError) Unwrap() error { return e.Err }

// Skipped is the lenient-mode report: how many rows were skipped and why.
// ByReason is keyed by the sentinel's message ("invalid number",
// "duplicate job id", ...); First keeps the first error of each reason so
// that a report can show an example.
type Skipped struct {
	Rows     int               `json:"rows"`
	ByReason map[string]int    `json:"by_reason,omitempty"`
	First    map[string]string `json:"first,omitempty"`
}
