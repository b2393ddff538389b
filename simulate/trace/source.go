package trace

import (
	"io"
	"time"
)

// FromJobs returns a Source over jobs, in the order given (the caller keeps
// them in non-decreasing submit order). It does not copy the slice.
func FromJobs(jobs []Job) Source { return &sliceSource{jobs: jobs} }

type sliceSource struct {
	jobs []Job
	i    int
}

func (s *sliceSource) Next() (Job, error) {
	if s.i >= len(s.jobs) {
		return Job{}, io.EOF
	}
	s.i++
	return s.jobs[s.i-1], nil
}

// Until returns the prefix of src submitted before end: it ends (io.EOF) at
// the first job submitted at or after end, without reading further. It is
// how the 1-, 2-, 4-, 7- and 14-day prefixes of a trace are replayed.
func Until(src Source, end time.Time) Source { return &untilSource{src: src, end: end} }

type untilSource struct {
	src  Source
	end  time.Time
	done bool
}

func (u *untilSource) Next() (Job, error) {
	if u.done {
		return Job{}, io.EOF
	}
	j, err := u.src.Next()
	if err != nil {
		return Job{}, err
	}
	if !j.Submit.Before(u.end) {
		u.done = true
		return Job{}, io.EOF
	}
	return j, nil
}
