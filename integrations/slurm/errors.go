package slurm

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Sentinel errors. Every error returned by a parser is a *ParseError that
// wraps one of them, so callers match the kind with errors.Is and read the
// line from the *ParseError.
var (
	// ErrHeader: the header line is missing a required column, or the input is empty.
	ErrHeader = errors.New("slurm: bad header")
	// ErrMalformed: a line has the wrong number of fields or a field that does not parse.
	ErrMalformed = errors.New("slurm: malformed line")
	// ErrUnknownTRES: a TRES or GRES entry of a form this package does not know
	// (no '=', an empty name, a GPU count that is not a whole number).
	ErrUnknownTRES = errors.New("slurm: unknown TRES form")
	// ErrBadTime: a time that is neither Slurm's ISO form nor Unknown/None.
	ErrBadTime = errors.New("slurm: bad time")
	// ErrEndBeforeStart: a run whose End is before its Start, or a Start before its Submit.
	ErrEndBeforeStart = errors.New("slurm: end before start")
	// ErrUnknownState: a job state that Slurm does not define.
	ErrUnknownState = errors.New("slurm: unknown job state")
	// ErrOverlap: two runs of one requeued job overlap in time, or a run
	// follows a final (not requeued) run.
	ErrOverlap = errors.New("slurm: overlapping runs")
	// ErrDuplicate: an account (or node) listed twice.
	ErrDuplicate = errors.New("slurm: duplicate entry")
	// ErrUnknownAccount: a job charged to an account that has no weight.
	ErrUnknownAccount = errors.New("slurm: unknown account")
	// ErrLineTooLong: a line longer than [MaxLineBytes].
	ErrLineTooLong = errors.New("slurm: line too long")
	// ErrSiteFactor: a site factor maximum outside [0, MaxSiteFactor].
	ErrSiteFactor = errors.New("slurm: site factor out of range")
)

// MaxLineBytes bounds the length of one input line.
const MaxLineBytes = 1 << 20

// ParseError reports bad input: which input (Source, e.g. "sacct"), which
// 1-based line, which field and value, and the kind of fault (Err, one of the
// sentinels above, matched with errors.Is).
type ParseError struct {
	Source string // "sacct", "sshare", "weights", "sinfo", "squeue"
	Line   int    // 1-based line number, 0 when the fault is not on one line
	Field  string // column name, when one field is at fault
	Value  string // the offending text, truncated
	Err    error  // a sentinel
	Detail string // a human sentence, may be empty
}

// Error reads like "slurm: unknown TRES form: sacct line 12 field AllocTRES
// value "gres/gpu": ...": the kind first, then where.
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	b.WriteString(": ")
	b.WriteString(e.Source)
	if e.Line > 0 {
		b.WriteString(" line ")
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Field != "" {
		b.WriteString(" field ")
		b.WriteString(e.Field)
	}
	if e.Value != "" {
		b.WriteString(" value ")
		b.WriteString(strconv.Quote(e.Value))
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap returns the sentinel.
func (e *ParseError) Unwrap() error { return e.Err }

func perr(src string, line int, field, value string, kind error, detail string, args ...any) *ParseError {
	if len(value) > 80 {
		value = value[:80] + "..."
	}
	if len(args) > 0 {
		detail = fmt.Sprintf(detail, args...)
	}
	return &ParseError{Source: src, Line: line, Field: field, Value: value, Err: kind, Detail: detail}
}

// Skipped counts the lines that a lenient parse left out, by reason. The
// reason is the sentinel's text without the "slurm: " prefix ("malformed
// line", "unknown TRES form", ...). A nil or empty Skipped means nothing was
// skipped.
type Skipped map[string]int

// Total is the number of skipped lines.
func (s Skipped) Total() int {
	n := 0
	for _, c := range s {
		n += c
	}
	return n
}

// String lists the counts by reason, in reason order: "2 malformed line, 1 bad time".
func (s Skipped) String() string {
	if len(s) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s)) {
		parts = append(parts, strconv.Itoa(s[k])+" "+k)
	}
	return strings.Join(parts, ", ")
}

// skip is the one rule of a lenient parse: with Lenient it counts err in
// s and returns nil (the line is left out, and said so), else it returns
// err (the parse stops there).
func (o Options) skip(s Skipped, err error) error {
	if !o.Lenient {
		return err
	}
	s.add(err)
	return nil
}

// add counts err under its reason: the sentinel's text of a *ParseError,
// "error" for anything else.
func (s Skipped) add(err error) {
	var pe *ParseError
	reason := "error"
	if errors.As(err, &pe) {
		reason = strings.TrimPrefix(pe.Err.Error(), "slurm: ")
	}
	s[reason]++
}
