package trace

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestFromJobsAndUntil(t *testing.T) {
	t0 := utc("2024-03-01 00:00:00")
	jobs := []Job{
		{ID: "a", Tenant: "x", GPUs: 1, Submit: t0},
		{ID: "b", Tenant: "x", GPUs: 1, Submit: t0.Add(time.Hour)},
		{ID: "c", Tenant: "x", GPUs: 1, Submit: t0.Add(2 * time.Hour)},
	}
	got, err := ReadAll(FromJobs(jobs))
	if err != nil || len(got) != 3 || got[2].ID != "c" {
		t.Fatalf("FromJobs: %v, %v", got, err)
	}
	// The end is exclusive: a job submitted exactly at end is left out.
	got, err = ReadAll(Until(FromJobs(jobs), t0.Add(2*time.Hour)))
	if err != nil || len(got) != 2 || got[1].ID != "b" {
		t.Fatalf("Until: %v, %v", got, err)
	}
	u := Until(FromJobs(jobs), t0)
	if _, err := u.Next(); err != io.EOF {
		t.Fatalf("empty prefix: %v", err)
	}
	if _, err := u.Next(); err != io.EOF {
		t.Fatalf("Until must stay at EOF: %v", err)
	}
	// Errors of the underlying source pass through.
	r, _ := NewReader(strings.NewReader(venusFixture+"9,u,vc,0,1,X,2020-09-07 00:02:00,1\n"), Options{})
	if _, err := ReadAll(Until(r, utc("2030-01-01 00:00:00"))); !errors.Is(err, ErrGPUs) {
		t.Fatalf("error through Until: %v", err)
	}
}
