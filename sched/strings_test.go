package sched

import (
	"errors"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
)

// The names of codes, stages and kinds, and the text of an Error, are what
// logs and traces show; an unknown value says what it is.
func TestStringsAndErrorText(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{NoFit.String(), "no-fit"},
		{OutOfPlay.String(), "out-of-play"},
		{Preempted.String(), "preempted"},
		{ClusterFull.String(), "cluster-full"},
		{Held.String(), "held"},
		{ReasonCode(0).String(), "ReasonCode(0)"},
		{ReasonCode(99).String(), "ReasonCode(99)"},
		{Fair.String(), "fair"},
		{Backfill.String(), "backfill"},
		{Reserved.String(), "reserved"},
		{Stage(99).String(), "Stage(99)"},
		{New.String(), "new"},
		{Renewed.String(), "renewed"},
		{GrantKind(0).String(), "GrantKind(0)"},
		{(&Error{Index: -1, Err: ErrUnknownTenant}).Error(), ErrUnknownTenant.Error()},
		{(&Error{Index: 0, Err: ErrUnknownTenant, Tenant: "t"}).Error(), ErrUnknownTenant.Error() + `: candidate 0 (tenant "t")`},
		{(&Error{Index: 3, Job: "j", Tenant: "t", Err: ErrPlacer, Msg: "allocate", Cause: errors.New("disk on fire")}).Error(),
			ErrPlacer.Error() + `: candidate 3 (job "j", tenant "t"): allocate: disk on fire`},
		{(&Error{Index: -1, Job: "j", Err: ErrUnknownJob}).Error(), ErrUnknownJob.Error() + ` (job "j")`},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestNeverRan(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Candidate
		want float64
	}{
		{"a fresh job never ran", Candidate{}, 1},
		{"a job with a lease ran", Candidate{Leases: 1}, 0},
		{"a running job runs", Candidate{Running: true}, 0},
	} {
		if got := NeverRan(&tc.c, ledger.Account{}); got.Compare(ScoreOf(tc.want)) != 0 || got.Len() != 1 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
