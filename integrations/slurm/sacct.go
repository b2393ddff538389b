package slurm

import (
	"cmp"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// SacctFormat is the field list this package reads from sacct. Run
//
//	sacct -a -X -D -P -o JobIDRaw,Account,AllocTRES,ReqTRES,Submit,Start,End,State,User -S <from> -E <to>
//
// (-D lists every run of a requeued job; without it only the last run is
// shown and earlier runs are not billed). Columns are found by their header
// names, so their order may differ and extra columns are ignored; without a
// header line (sacct -n) the columns must be in this order. User is
// optional (older captures lack it): it charges a job to its user's
// association in a [Tree].
const SacctFormat = "JobIDRaw,Account,AllocTRES,ReqTRES,Submit,Start,End,State,User"

// TimeLayout is how Slurm prints times: local time without an offset.
const TimeLayout = "2006-01-02T15:04:05"

// Options control the parsers.
type Options struct {
	// Location is the time zone of Slurm's times, which carry no offset.
	// nil means UTC; the command defaults to the local zone, as Slurm prints.
	// In a zone with daylight saving time, the hour repeated in autumn is
	// ambiguous and resolved as time.Date does.
	Location *time.Location
	// Lenient skips bad lines and counts them by reason (in Skipped) instead
	// of failing at the first one.
	Lenient bool
}

func (o Options) loc() *time.Location {
	if o.Location == nil {
		return time.UTC
	}
	return o.Location
}

// State is a Slurm job state as sacct prints it, upper case, without the
// "by UID" suffix of CANCELLED.
type State string

// Kind is what a State means for the ledger.
type Kind int

// The kinds of job state.
const (
	KindPending  Kind = iota + 1 // waiting; active, not running
	KindRunning                  // holding its GPUs (billed up to End, or up to now while End is Unknown)
	KindRequeued                 // this run ended and the job went back to the queue; still active
	KindFinal                    // the job ended for good; see State.Final
)

var stateKinds = map[State]Kind{
	"PENDING": KindPending, "REQUEUE_HOLD": KindRequeued, "REQUEUE_FED": KindRequeued,
	"REQUEUED": KindRequeued, "RESV_DEL_HOLD": KindPending,
	"RUNNING": KindRunning, "SUSPENDED": KindRunning, "COMPLETING": KindRunning,
	"CONFIGURING": KindRunning, "RESIZING": KindRunning, "STOPPED": KindRunning,
	"SIGNALING": KindRunning, "STAGE_OUT": KindRunning,
	"COMPLETED": KindFinal, "CANCELLED": KindFinal, "DEADLINE": KindFinal, "REVOKED": KindFinal,
	"FAILED": KindFinal, "TIMEOUT": KindFinal, "NODE_FAIL": KindFinal, "OUT_OF_MEMORY": KindFinal,
	"BOOT_FAIL": KindFinal, "PREEMPTED": KindFinal, "SPECIAL_EXIT": KindFinal,
}

// ParseState normalises a sacct state ("CANCELLED by 1000" → CANCELLED) and
// reports whether Slurm defines it.
func ParseState(s string) (State, bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, ' '); i >= 0 {
		s = s[:i]
	}
	st := State(strings.ToUpper(strings.TrimSuffix(s, "+")))
	_, ok := stateKinds[st]
	return st, ok
}

// Kind classifies the state; 0 for an unknown state.
func (s State) Kind() Kind { return stateKinds[s] }

// Final maps a final state to the ledger's: COMPLETED → Completed;
// CANCELLED, DEADLINE, REVOKED → Cancelled; every other final state
// (FAILED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, PREEMPTED,
// SPECIAL_EXIT) → Failed. ok is false for a state that is not final.
func (s State) Final() (f ledger.FinalState, ok bool) {
	if s.Kind() != KindFinal {
		return 0, false
	}
	switch s {
	case "COMPLETED":
		return ledger.Completed, true
	case "CANCELLED", "DEADLINE", "REVOKED":
		return ledger.Cancelled, true
	}
	return ledger.Failed, true
}

// Record is one line of sacct output: one run of a job.
type Record struct {
	JobID   string
	Account string
	User    string // "" when the input has no User column
	// GPUs held by the run: gres/gpu of AllocTRES (the untyped total, or the
	// sum of the typed gres/gpu:TYPE entries when no untyped one is listed).
	// When AllocTRES is empty (a pending job, or one cancelled before it
	// started), ReqTRES is read instead.
	GPUs   int
	Submit time.Time
	Start  time.Time // zero when Unknown or None: the run never started
	End    time.Time // zero when Unknown: still running (or pending)
	State  State
	Line   int
}

var sacctColumns = []string{"jobidraw", "account", "alloctres", "reqtres", "submit", "start", "end", "state"}

var sacctKnown = map[string]bool{
	"jobidraw": true, "jobid": true, "account": true, "alloctres": true, "reqtres": true,
	"submit": true, "start": true, "end": true, "state": true, "user": true, "cluster": true,
	"jobname": true, "partition": true, "elapsed": true, "elapsedraw": true,
}

// ParseSacct reads sacct -P output (see [SacctFormat]). Every line becomes a
// Record; a bad line is an error naming it (*ParseError), or, with
// opts.Lenient, is skipped and counted in the returned Skipped. Complexity
// O(bytes).
func ParseSacct(r io.Reader, opts Options) ([]Record, Skipped, error) {
	const src = "sacct"
	ls := newLines(r, src)
	skipped := Skipped{}
	var recs []Record
	var col []int // index of each of sacctColumns
	ucol := 8     // the User column; -1 when the header has none
	first := true
	for ls.next() {
		if strings.TrimSpace(ls.text) == "" {
			continue
		}
		fields := strings.Split(ls.text, "|")
		if first {
			first = false
			if idx, ok := headerIndex(fields, sacctKnown); ok {
				col = make([]int, len(sacctColumns))
				for i, name := range sacctColumns {
					j, ok := idx[name]
					if !ok && name == "jobidraw" {
						j, ok = idx["jobid"]
					}
					if !ok {
						return nil, nil, perr(src, ls.n, name, "", ErrHeader, "missing column %s", name)
					}
					col[i] = j
				}
				if j, ok := idx["user"]; ok {
					ucol = j
				} else {
					ucol = -1
				}
				continue
			}
			col = []int{0, 1, 2, 3, 4, 5, 6, 7}
		}
		rec, err := parseSacctLine(fields, col, ucol, ls.n, opts.loc())
		if err != nil {
			if err := opts.skip(skipped, err); err != nil {
				return nil, nil, err
			}
			continue
		}
		recs = append(recs, rec)
	}
	if err := ls.err(); err != nil {
		return nil, nil, err
	}
	if first {
		return nil, nil, perr(src, 0, "", "", ErrHeader, "empty input")
	}
	return recs, skipped, nil
}

func parseSacctLine(fields []string, col []int, ucol, line int, loc *time.Location) (Record, error) {
	const src = "sacct"
	need := slices.Max(col) + 1
	if len(fields) < need {
		return Record{}, perr(src, line, "", "", ErrMalformed, "%d fields, want at least %d", len(fields), need)
	}
	f := func(i int) string { return strings.TrimSpace(fields[col[i]]) }
	rec := Record{JobID: f(0), Account: f(1), Line: line}
	if !validName(rec.JobID) {
		return Record{}, perr(src, line, "JobIDRaw", rec.JobID, ErrMalformed, "not a job id")
	}
	if rec.Account != "" && !validName(rec.Account) {
		return Record{}, perr(src, line, "Account", rec.Account, ErrMalformed, "not an account name")
	}
	if ucol >= 0 && ucol < len(fields) {
		rec.User = strings.TrimSpace(fields[ucol])
		if rec.User != "" && !validName(rec.User) {
			return Record{}, perr(src, line, "User", rec.User, ErrMalformed, "not a user name")
		}
	}
	tres, field := f(2), "AllocTRES"
	if tres == "" {
		tres, field = f(3), "ReqTRES"
	}
	gpus, err := TRESGPUs(tres)
	if err != nil {
		return Record{}, perr(src, line, field, tres, ErrUnknownTRES, "%v", err)
	}
	rec.GPUs = gpus
	st, ok := ParseState(f(7))
	if !ok {
		return Record{}, perr(src, line, "State", f(7), ErrUnknownState, "")
	}
	rec.State = st
	if rec.Submit, err = parseTime(f(4), loc); err != nil || rec.Submit.IsZero() {
		return Record{}, perr(src, line, "Submit", f(4), ErrBadTime, "")
	}
	if rec.Start, err = parseTime(f(5), loc); err != nil {
		return Record{}, perr(src, line, "Start", f(5), ErrBadTime, "")
	}
	if rec.End, err = parseTime(f(6), loc); err != nil {
		return Record{}, perr(src, line, "End", f(6), ErrBadTime, "")
	}
	if !rec.Start.IsZero() && !rec.End.IsZero() && rec.End.Before(rec.Start) {
		return Record{}, perr(src, line, "End", f(6), ErrEndBeforeStart, "start %s", f(5))
	}
	if k := st.Kind(); (k == KindRequeued || k == KindFinal) && !rec.Start.IsZero() && rec.End.IsZero() {
		return Record{}, perr(src, line, "End", f(6), ErrMalformed, "a %s run needs an End", st)
	}
	return rec, nil
}

// parseTime reads Slurm's local time; Unknown, None and "" are the zero time.
func parseTime(s string, loc *time.Location) (time.Time, error) {
	switch s {
	case "", "Unknown", "None":
		return time.Time{}, nil
	}
	return time.ParseInLocation(TimeLayout, s, loc)
}

// TRESGPUs returns the GPU count of a TRES list such as
// "billing=2,cpu=2,gres/gpu=2,mem=8G,node=1". The untyped gres/gpu entry is
// the total; when only typed entries (gres/gpu:a100=2,gres/gpu:v100=1) are
// present, they are summed. Entries of other TRES are checked for form
// (name=value) but otherwise ignored. An empty list has 0 GPUs. An error
// names the entry at fault and matches ErrUnknownTRES.
func TRESGPUs(tres string) (int, error) {
	if tres == "" {
		return 0, nil
	}
	total, typed := -1, 0
	for _, e := range strings.Split(tres, ",") {
		name, val, ok := strings.Cut(e, "=")
		if !ok || name == "" || val == "" {
			return 0, &tresError{e, "want name=value"}
		}
		kind, typ, hasType := strings.Cut(name, ":")
		if kind != "gres/gpu" {
			continue
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return 0, &tresError{e, "GPU count is not a whole number"}
		}
		switch {
		case !hasType:
			if total >= 0 {
				return 0, &tresError{e, "gres/gpu listed twice"}
			}
			total = n
		case typ == "":
			return 0, &tresError{e, "empty GPU type"}
		default:
			if typed > 1<<30-n {
				return 0, &tresError{e, "GPU count too large"}
			}
			typed += n
		}
	}
	if total >= 0 {
		return total, nil
	}
	return typed, nil
}

// tresError is the error of TRESGPUs and GresGPUs: the entry at fault and
// why. It matches ErrUnknownTRES with errors.Is. (A bad host list reuses it
// inside sinfo's parser, which reports it as ErrMalformed.)
type tresError struct{ entry, why string }

func (e *tresError) Error() string { return strconv.Quote(e.entry) + ": " + e.why }

// Unwrap returns ErrUnknownTRES, the kind of every TRES or GRES fault.
func (e *tresError) Unwrap() error { return ErrUnknownTRES }

// Run is one run of a job: GPUs held from Start to End (End zero: still
// running).
type Run struct {
	Start, End time.Time
	Line       int
}

// Job is a Slurm job with all its runs (several when it was requeued).
type Job struct {
	ID      string
	Account string
	User    string    // "" when the input has no User column
	GPUs    int       // demand: the largest GPU count of its records
	Submit  time.Time // of its first record
	Runs    []Run     // in time order; runs that never started are left out
	State   State     // of its last record
	End     time.Time // End of its last record; zero while it runs or waits
	Line    int       // of its first record
}

// GroupJobs merges the records of each job (the runs of a requeued job share
// its JobIDRaw) into Jobs, sorted by Submit then ID. Runs are ordered by
// Start; every run but the last must have ended in a requeue state, and no
// two runs may overlap, otherwise ErrOverlap names the line; with lenient,
// the whole job is skipped and counted instead. Complexity O(n log n).
func GroupJobs(recs []Record, lenient bool) ([]Job, Skipped, error) {
	skipped := Skipped{}
	idx := make([]int, len(recs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(x, y int) int {
		a, b := &recs[x], &recs[y]
		return cmp.Or(cmp.Compare(a.JobID, b.JobID), a.Submit.Compare(b.Submit), cmpStart(a.Start, b.Start), cmp.Compare(x, y))
	})
	var jobs []Job
	var group []Record
	for i := 0; i < len(idx); {
		group = append(group[:0], recs[idx[i]])
		k := i + 1
		for k < len(idx) && recs[idx[k]].JobID == recs[idx[i]].JobID {
			group = append(group, recs[idx[k]])
			k++
		}
		j, err := groupOne(group)
		i = k
		if err != nil {
			if !lenient {
				return nil, nil, err
			}
			skipped.add(err)
			continue
		}
		jobs = append(jobs, j)
	}
	slices.SortStableFunc(jobs, func(a, b Job) int {
		return cmp.Or(a.Submit.Compare(b.Submit), cmp.Compare(a.ID, b.ID))
	})
	return jobs, skipped, nil
}

// cmpStart orders start times with "never started" (zero) last.
func cmpStart(a, b time.Time) int {
	switch {
	case a.IsZero() && b.IsZero():
		return 0
	case a.IsZero():
		return 1
	case b.IsZero():
		return -1
	}
	return a.Compare(b)
}

func groupOne(rs []Record) (Job, error) {
	last := rs[len(rs)-1]
	j := Job{ID: last.JobID, Account: rs[0].Account, User: rs[0].User, Submit: rs[0].Submit, State: last.State, End: last.End, Line: rs[0].Line}
	for i, r := range rs {
		j.GPUs = max(j.GPUs, r.GPUs)
		if r.Account != j.Account {
			return Job{}, perr("sacct", r.Line, "Account", r.Account, ErrOverlap, "job %s was charged to %q on line %d", r.JobID, j.Account, j.Line)
		}
		if r.User != j.User {
			return Job{}, perr("sacct", r.Line, "User", r.User, ErrOverlap, "job %s was run by %q on line %d", r.JobID, j.User, j.Line)
		}
		if i < len(rs)-1 && r.State.Kind() != KindRequeued {
			return Job{}, perr("sacct", rs[i+1].Line, "JobIDRaw", r.JobID, ErrOverlap, "another run after state %s on line %d", r.State, r.Line)
		}
		if r.Start.IsZero() {
			continue
		}
		if n := len(j.Runs); n > 0 && (j.Runs[n-1].End.IsZero() || r.Start.Before(j.Runs[n-1].End)) {
			return Job{}, perr("sacct", r.Line, "Start", r.Start.Format(TimeLayout), ErrOverlap, "overlaps the run on line %d", j.Runs[n-1].Line)
		}
		j.Runs = append(j.Runs, Run{Start: r.Start, End: r.End, Line: r.Line})
	}
	return j, nil
}
