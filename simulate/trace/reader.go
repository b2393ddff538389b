package trace

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/astraea-sched/astraea/internal/rfc3339"
	"github.com/astraea-sched/astraea/lease"
	"github.com/astraea-sched/astraea/ledger"
)

// Reader streams the jobs of one CSV trace. It implements Source.
//
// Memory: every format except FormatPollux is streamed — the reader holds
// one row at a time plus the set of job ids seen so far (needed to reject
// duplicates), so memory grows with the id set only, never with row
// contents. FormatPollux rows are not sorted in the file, so that reader
// buffers all rows and sorts them by (submit time, line) before the first
// job is returned.
//
// Order: the streamed formats must be in non-decreasing submit order; a row
// whose submit time is earlier than the previous row's is an error
// (ErrOutOfOrder), or is skipped in lenient mode.
type Reader struct {
	name    string
	opts    Options
	file    io.Closer
	gz      io.Closer // the decompressor, if the input is gzip
	rs      *records
	format  Format
	cols    columns
	header  []string
	seen    map[string]struct{}
	strs    map[string]string // interned tenants, users and states
	last    time.Time
	started bool
	skipped Skipped
	err     error // sticky: once set, Next keeps returning it

	buffered bool  // FormatPollux: rows read and sorted
	buf      []Job // FormatPollux: sorted rows not yet returned
}

// Open opens a trace file. The format is selected from the header row (or
// forced by opts.Format); gzip input is detected by its magic bytes, so a
// ".gz" suffix is neither needed nor trusted. The caller must Close the
// Reader.
//
// Supported layouts (column order is free; extra columns are ignored):
//
//   - Venus: job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration
//   - Philly (Helios-derived, and the merged tables with a source column):
//     job_id,user,vc,gpu_num,state,submit_time,duration[,source]
//   - Pollux Philly: timestamp,duration,num_gpus,gpu_time,cluster; jobs are
//     named "pollux-<line>" and the state is left empty (completed).
//   - ASTRAEA artifact: job_id,user,num_gpu,submit_time,duration, with user
//     the tenant and submit_time in seconds from opts.Base.
//   - Generic: tenant,job,gpus,submit,duration[,state][,weight]. submit is
//     RFC 3339 ("2020-09-07T08:00:00Z"), naive "2006-01-02 15:04:05" (in
//     opts.Location) or a number of seconds from opts.Base; duration is a
//     number of seconds or a Go duration ("1h30m"); weight in [ledger.MinWeight,
//     ledger.MaxWeight] (empty = 1).
//
// Naive time stamps are "2006-01-02 15:04:05"; durations may carry a
// fractional part and are rounded to the nanosecond.
//
// Every row a reader returns can be simulated: submit times lie in the
// years 1678 to 2262 (ErrTime otherwise) and durations are at most
// MaxDuration (ErrLongDuration), the ranges the ledger and the progress
// model count. A record is one line: a quoted field may hold commas and
// doubled quotes but no line break, so a stray quote costs its own row.
// Lines are at most MaxLineBytes long and gzip input decompresses to at
// most Options.MaxDecompressed bytes (ErrLineTooLong, ErrTooLarge; both
// end the reading, in lenient mode too).
func Open(path string, opts Options) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if opts.Name == "" {
		opts.Name = path
	}
	r, err := newReader(f, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	if st, err := f.Stat(); err == nil && r.gz == nil && st.Mode().IsRegular() {
		// Size the set of seen ids for the rows the file can hold (a
		// row takes more than 64 bytes in every format but the tersest
		// generic one), instead of growing it step by step.
		r.seen = make(map[string]struct{}, min(st.Size()/64, 1<<20))
	}
	return r, nil
}

// NewReader reads a trace from r, as Open does from a file. opts.Name
// labels errors. Closing the returned Reader does not close r.
func NewReader(r io.Reader, opts Options) (*Reader, error) {
	return newReader(r, opts)
}

func newReader(in io.Reader, opts Options) (*Reader, error) {
	if opts.Name == "" {
		opts.Name = "input"
	}
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if opts.Base.IsZero() {
		opts.Base = time.Unix(0, 0).UTC()
	}
	r := &Reader{name: opts.Name, opts: opts, seen: make(map[string]struct{})}
	rs, gz, err := newRecords(in, r.name, opts.MaxDecompressed)
	if err != nil {
		return nil, err
	}
	r.rs, r.gz = rs, gz
	hdr, _, err := r.rs.read()
	if err != nil {
		if gz != nil {
			gz.Close()
		}
		if err == io.EOF {
			return nil, fmt.Errorf("trace: %s: empty input: %w", r.name, ErrFormat)
		}
		var re *RowError
		if errors.As(err, &re) {
			return nil, err
		}
		return nil, fmt.Errorf("trace: %s: header: %w", r.name, err)
	}
	r.header = make([]string, len(hdr))
	for i, h := range hdr {
		h = strings.TrimPrefix(h, "\ufeff")
		r.header[i] = strings.ToLower(strings.TrimSpace(h))
	}
	f, cols, err := detect(r.header, opts.Format)
	if err != nil {
		if gz != nil {
			gz.Close()
		}
		return nil, fmt.Errorf("trace: %s: %w", r.name, err)
	}
	r.format, r.cols = f, cols
	return r, nil
}

// Format returns the layout the reader selected.
func (r *Reader) Format() Format { return r.format }

// Close releases the file (if the Reader opened it) and the decompressor.
func (r *Reader) Close() error {
	var err error
	if r.gz != nil {
		err = r.gz.Close()
	}
	if r.file != nil {
		err = errors.Join(err, r.file.Close())
		r.file = nil
	}
	return err
}

// Skipped returns the lenient-mode report so far: rows skipped, by reason.
// In strict mode it stays empty (the first bad row is an error instead).
func (r *Reader) Skipped() Skipped {
	s := Skipped{Rows: r.skipped.Rows}
	if len(r.skipped.ByReason) > 0 {
		s.ByReason = make(map[string]int, len(r.skipped.ByReason))
		for k, v := range r.skipped.ByReason {
			s.ByReason[k] = v
		}
		s.First = make(map[string]string, len(r.skipped.First))
		for k, v := range r.skipped.First {
			s.First[k] = v
		}
	}
	return s
}

// Next returns the next job in submit order, or io.EOF after the last one.
// A bad row in strict mode returns a *RowError; every later call returns the
// same error.
func (r *Reader) Next() (Job, error) {
	if r.err != nil {
		return Job{}, r.err
	}
	if r.format == FormatPollux || r.opts.Sort {
		return r.nextBuffered()
	}
	for {
		j, err := r.readRow()
		if err == nil {
			if r.started && j.Submit.Before(r.last) {
				err = r.rowErr(j.Line, r.cols.submitName(), "", fmt.Errorf("%w: %s after %s", ErrOutOfOrder,
					j.Submit.Format(naiveLayout), r.last.Format(naiveLayout)))
			} else if _, dup := r.seen[j.ID]; dup {
				err = r.rowErr(j.Line, r.cols.idName(), j.ID, ErrDuplicateID)
			}
		}
		if err != nil {
			if r.skip(err) {
				continue
			}
			r.err = err
			return Job{}, err
		}
		j.ID = strings.Clone(j.ID) // a copy: the id must not pin the whole CSV line
		r.seen[j.ID] = struct{}{}
		r.last, r.started = j.Submit, true
		return j, nil
	}
}

func (r *Reader) nextBuffered() (Job, error) {
	if !r.buffered {
		r.buffered = true
		for {
			j, err := r.readRow()
			if err == io.EOF {
				break
			}
			if err != nil {
				if r.skip(err) {
					continue
				}
				r.err = err
				r.buf = nil
				return Job{}, err
			}
			if r.cols.id >= 0 { // generated ids (pollux-<line>) are unique by construction
				if _, dup := r.seen[j.ID]; dup {
					err = r.rowErr(j.Line, r.cols.idName(), j.ID, ErrDuplicateID)
					if r.skip(err) {
						continue
					}
					r.err = err
					r.buf = nil
					return Job{}, err
				}
				j.ID = strings.Clone(j.ID) // a copy: the id must not pin the whole CSV line
				r.seen[j.ID] = struct{}{}
			}
			r.buf = append(r.buf, j)
		}
		r.seen = nil // ids are checked; the set is no longer needed
		// (submit, line) is unique, so an unstable sort is deterministic.
		slices.SortFunc(r.buf, func(a, b Job) int { return cmp.Or(a.Submit.Compare(b.Submit), cmp.Compare(a.Line, b.Line)) })
	}
	if len(r.buf) == 0 {
		r.buf = nil
		return Job{}, io.EOF
	}
	j := r.buf[0]
	r.buf[0] = Job{}
	r.buf = r.buf[1:]
	return j, nil
}

// skip records err in the lenient report and reports whether reading may
// go on. io.EOF, non-row errors, a line too long and an input too large are
// never skipped.
func (r *Reader) skip(err error) bool {
	var re *RowError
	if !r.opts.Lenient || !errors.As(err, &re) || errors.Is(err, ErrLineTooLong) || errors.Is(err, ErrTooLarge) {
		return false
	}
	reason := reasonOf(err)
	if r.skipped.ByReason == nil {
		r.skipped.ByReason = make(map[string]int)
		r.skipped.First = make(map[string]string)
	}
	r.skipped.Rows++
	r.skipped.ByReason[reason]++
	if _, ok := r.skipped.First[reason]; !ok {
		r.skipped.First[reason] = err.Error()
	}
	return true
}

var reasons = []error{ErrMissingColumn, ErrNumber, ErrTime, ErrGPUs, ErrDuration, ErrWeight,
	ErrEmptyField, ErrDuplicateID, ErrOutOfOrder, ErrSyntax, ErrLineTooLong, ErrTooLarge, ErrLongDuration}

func reasonOf(err error) string {
	for _, s := range reasons {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return "other"
}

func (r *Reader) rowErr(line int, col, val string, err error) *RowError {
	return &RowError{File: r.name, Line: line, Column: col, Value: excerpt(val), Err: err}
}

// readRow parses one CSV record into a Job, without the cross-row checks.
func (r *Reader) readRow() (Job, error) {
	rec, line, err := r.rs.read()
	if err != nil {
		return Job{}, err
	}
	c := &r.cols
	if len(rec) < c.need {
		return Job{}, r.rowErr(line, r.header[len(rec)], "", ErrMissingColumn)
	}
	j := Job{Line: line}
	if c.id >= 0 {
		j.ID = rec[c.id]
		if j.ID == "" {
			return Job{}, r.rowErr(line, r.header[c.id], "", ErrEmptyField)
		}
	} else {
		j.ID = c.idPrefix + strconv.Itoa(line)
	}
	j.Tenant = r.intern(rec[c.tenant])
	if j.Tenant == "" {
		return Job{}, r.rowErr(line, r.header[c.tenant], "", ErrEmptyField)
	}
	if c.user >= 0 {
		j.User = r.intern(rec[c.user])
	}
	g, err := strconv.Atoi(rec[c.gpus])
	if err != nil {
		f, ferr := strconv.ParseFloat(rec[c.gpus], 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
			return Job{}, r.rowErr(line, r.header[c.gpus], rec[c.gpus], ErrNumber)
		}
		g = int(f)
	}
	if g <= 0 {
		return Job{}, r.rowErr(line, r.header[c.gpus], rec[c.gpus], ErrGPUs)
	}
	j.GPUs = g
	if j.Submit, err = r.parseSubmit(rec[c.submit]); err == nil && !representable(j.Submit) {
		err = fmt.Errorf("%w: outside the years 1678 to 2262", ErrTime)
	}
	if err != nil {
		return Job{}, r.rowErr(line, r.header[c.submit], rec[c.submit], err)
	}
	if j.Duration, err = parseDuration(rec[c.duration], c.goDurations); err == nil && j.Duration > MaxDuration {
		err = fmt.Errorf("%w: longer than %v", ErrLongDuration, MaxDuration)
	}
	if err != nil {
		return Job{}, r.rowErr(line, r.header[c.duration], rec[c.duration], err)
	}
	if c.state >= 0 {
		j.State = r.intern(strings.ToUpper(strings.TrimSpace(rec[c.state])))
	}
	if c.weight >= 0 && rec[c.weight] != "" {
		w, err := strconv.ParseFloat(rec[c.weight], 64)
		if err != nil {
			return Job{}, r.rowErr(line, r.header[c.weight], rec[c.weight], ErrNumber)
		}
		if !(w >= ledger.MinWeight && w <= ledger.MaxWeight) { // NaN fails
			return Job{}, r.rowErr(line, r.header[c.weight], rec[c.weight], fmt.Errorf("%w: outside [%v, %v]", ErrWeight, ledger.MinWeight, ledger.MaxWeight))
		}
		j.Weight = w
	}
	return j, nil
}

// intern returns s, or the equal string it kept before. Tenants, users and
// states repeat from row to row; a field of the CSV record is a slice of
// the whole line, so a job that kept one would keep the line alive for as
// long as the job (and its result row) lives. O(1) expected; the map holds
// each distinct value once.
func (r *Reader) intern(s string) string {
	if v, ok := r.strs[s]; ok {
		return v
	}
	if r.strs == nil {
		r.strs = make(map[string]string)
	}
	v := strings.Clone(s)
	r.strs[v] = v
	return v
}

func (r *Reader) parseSubmit(s string) (time.Time, error) {
	switch r.cols.submitKind {
	case submitNaive:
		return parseNaive(s, r.opts.Location)
	case submitSeconds:
		return parseSeconds(s, r.opts.Base)
	default:
		if t, err := parseNaive(s, r.opts.Location); err == nil {
			return t, nil
		}
		if t, err := rfc3339.Parse(s); err == nil {
			return t, nil
		}
		if t, err := parseSeconds(s, r.opts.Base); err == nil {
			return t, nil
		}
		return time.Time{}, ErrTime
	}
}

const naiveLayout = "2006-01-02 15:04:05"

// MaxDuration is the longest run time a reader accepts: the longest work
// lease.Progress, and with it the simulator, models (50 years).
const MaxDuration = lease.MaxSpan

// representable reports whether t lies in the years 1678 to 2262, which
// Unix nanoseconds hold: the ledger and the progress model count time so.
func representable(t time.Time) bool {
	s := t.Unix()
	return s > minNanoSec && s < maxNanoSec
}

var minNanoSec, maxNanoSec = time.Unix(0, math.MinInt64).Unix(), time.Unix(0, math.MaxInt64).Unix()

// parseNaive parses "YYYY-MM-DD HH:MM:SS" strictly (no normalisation of
// out-of-range fields), in loc. It is the hot path of every reader.
func parseNaive(s string, loc *time.Location) (time.Time, error) {
	if len(s) != 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, ErrTime
	}
	num := func(i, n int) int {
		v := 0
		for k := i; k < i+n; k++ {
			c := s[k]
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d := num(0, 4), num(5, 2), num(8, 2)
	h, mi, se := num(11, 2), num(14, 2), num(17, 2)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59 {
		return time.Time{}, ErrTime
	}
	if d > daysIn(time.Month(mo), y) {
		return time.Time{}, ErrTime
	}
	return time.Date(y, time.Month(mo), d, h, mi, se, 0, loc), nil
}

func daysIn(m time.Month, y int) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// maxSeconds bounds numeric times and durations so that they fit a
// time.Duration (about 292 years).
const maxSeconds = float64(math.MaxInt64/int64(time.Second)) - 1

func parseSeconds(s string, base time.Time) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < -int64(maxSeconds) || n > int64(maxSeconds) {
			return time.Time{}, ErrTime
		}
		return base.Add(time.Duration(n) * time.Second), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.Abs(f) > maxSeconds {
		return time.Time{}, ErrTime
	}
	return base.Add(time.Duration(math.Round(f * 1e9))), nil
}

func parseDuration(s string, goDurations bool) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, ErrDuration
		}
		if n > int64(maxSeconds) {
			return 0, ErrNumber
		}
		return time.Duration(n) * time.Second, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if goDurations {
			if d, derr := time.ParseDuration(s); derr == nil {
				if d < 0 {
					return 0, ErrDuration
				}
				return d, nil
			}
		}
		return 0, ErrNumber
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f > maxSeconds {
		return 0, ErrNumber
	}
	if f < 0 {
		return 0, ErrDuration
	}
	return time.Duration(math.Round(f * 1e9)), nil
}

type submitKind int

const (
	submitNaive submitKind = iota
	submitSeconds
	submitFlexible
)

// columns maps the fields a format needs to their indices in the header;
// -1 marks an absent optional column.
type columns struct {
	id, tenant, user, gpus, submit, duration, state, weight int
	need                                                    int // 1 + the largest index of a required column
	submitKind                                              submitKind
	goDurations                                             bool
	idPrefix                                                string // when id < 0: generated ids are idPrefix + line
	names                                                   []string
}

func (c *columns) submitName() string { return c.names[c.submit] }
func (c *columns) idName() string {
	if c.id < 0 {
		return ""
	}
	return c.names[c.id]
}

// detect selects the format from the lower-cased header.
func detect(h []string, force Format) (Format, columns, error) {
	idx := make(map[string]int, len(h))
	for i, n := range h {
		if _, dup := idx[n]; !dup {
			idx[n] = i
		}
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if _, ok := idx[n]; !ok {
				return false
			}
		}
		return true
	}
	get := func(n string) int {
		if i, ok := idx[n]; ok {
			return i
		}
		return -1
	}
	f := force
	if f == FormatAuto {
		switch {
		case has("job_id", "vc", "gpu_num", "submit_time", "duration") && has("cpu_num"):
			f = FormatVenus
		case has("job_id", "vc", "gpu_num", "submit_time", "duration"):
			f = FormatPhilly
		case has("timestamp", "duration", "num_gpus", "cluster"):
			f = FormatPollux
		case has("job_id", "user", "num_gpu", "submit_time", "duration"):
			f = FormatArtifact
		case has("tenant", "job", "gpus", "submit", "duration"):
			f = FormatGeneric
		default:
			return 0, columns{}, fmt.Errorf("%w: %q", ErrFormat, excerpt(strings.Join(h, ",")))
		}
	}
	c := columns{id: -1, user: -1, state: -1, weight: -1, names: h}
	var required []string
	switch f {
	case FormatVenus, FormatPhilly:
		required = []string{"job_id", "vc", "gpu_num", "submit_time", "duration"}
		c.id, c.tenant, c.user, c.gpus = get("job_id"), get("vc"), get("user"), get("gpu_num")
		c.submit, c.duration, c.state = get("submit_time"), get("duration"), get("state")
	case FormatPollux:
		required = []string{"timestamp", "duration", "num_gpus", "cluster"}
		c.tenant, c.gpus, c.submit, c.duration = get("cluster"), get("num_gpus"), get("timestamp"), get("duration")
		c.idPrefix = "pollux-"
	case FormatArtifact:
		required = []string{"job_id", "user", "num_gpu", "submit_time", "duration"}
		c.id, c.tenant, c.gpus = get("job_id"), get("user"), get("num_gpu")
		c.submit, c.duration = get("submit_time"), get("duration")
		c.submitKind = submitSeconds
	case FormatGeneric:
		required = []string{"tenant", "job", "gpus", "submit", "duration"}
		c.id, c.tenant, c.gpus = get("job"), get("tenant"), get("gpus")
		c.submit, c.duration, c.state, c.weight = get("submit"), get("duration"), get("state"), get("weight")
		c.user = get("user")
		c.submitKind, c.goDurations = submitFlexible, true
	default:
		return 0, columns{}, fmt.Errorf("%w: unknown format %v", ErrFormat, force)
	}
	for _, n := range required {
		i := get(n)
		if i < 0 {
			return 0, columns{}, fmt.Errorf("%w: %v needs column %q", ErrFormat, f, n)
		}
		c.need = max(c.need, i+1)
	}
	for _, i := range []int{c.id, c.user, c.state, c.weight} {
		c.need = max(c.need, i+1) // optional columns present in the header are required in every row
	}
	return f, c, nil
}
