package ledger

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// A job's past windows read the weight that held in them, not its current
// one: each window is split at the weight changes it spans, and a window that
// starts or ends exactly at a change reads the segment on its side of it.
func TestPastWindowsAcrossJobWeightChanges(t *testing.T) {
	l := mustNew(t, Config{Mode: QuotaShare, Capacity: 8})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(t0, "a", "t", 8, 1))
	do(t, l, l.Submit(t0, "b", "t", 8, 1))
	do(t, l, l.Start(t0, "a"))
	// [0, 10): x = 8/2, a owed 4; [10, 20): weight 3, x = 8/4, a owed 6;
	// [20, 30): weight 1 again, a owed 4. a holds all 8 GPUs throughout.
	do(t, l, l.SetJobWeight(ts(10), "a", 3))
	do(t, l, l.SetJobWeight(ts(20), "a", 1))
	do(t, l, l.Advance(ts(30)))
	for _, tc := range []struct {
		name        string
		from, to    float64
		alloc, fair float64
	}{
		{"the window before the first change", 0, 10, 80, 40},
		{"a window inside the first segment", 2, 8, 48, 24},
		{"a window ending exactly at the first change", 5, 10, 40, 20},
		{"the middle segment alone", 10, 20, 80, 60},
		{"a window starting exactly at the first change", 10, 15, 40, 30},
		{"a window starting exactly at the second change", 20, 30, 80, 40},
		{"an empty window at a change", 10, 10, 0, 0},
		{"a window across the second change", 15, 25, 80, 30 + 20},
		{"a window across both changes", 5, 25, 160, 20 + 60 + 20},
		{"the whole life", 0, 30, 240, 40 + 60 + 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantAccount(t, "a", jobAcct(t, l, "a", ts(tc.from), ts(tc.to)), tc.alloc, tc.fair)
			// b is owed the rest of the quota and received nothing.
			wantAccount(t, "b", jobAcct(t, l, "b", ts(tc.from), ts(tc.to)), 0, 8*(tc.to-tc.from)-tc.fair)
		})
	}
}

// The sum of tenant weights must stay finite on a re-weight too; a removed
// tenant's weight is no longer in the sum, and a tenant's own old weight is
// replaced, not added to. A rejected re-weight leaves the weight as it was.
func TestTenantReweightRangeGuard(t *testing.T) {
	l := mustNew(t, Config{Capacity: 8})
	do(t, l, l.AddTenant(t0, "u", MaxWeight))
	do(t, l, l.AddTenant(t0, "v", 1))
	if err := l.SetTenantWeight(ts(1), "v", 2*MaxWeight); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("re-weight above MaxWeight: %v, want ErrInvalidValue", err)
	}
	if ti, _ := l.Tenant("v"); ti.Weight != 1 {
		t.Fatalf("rejected re-weight changed v's weight to %v", ti.Weight)
	}
	do(t, l, l.RemoveTenant(ts(3), "u"))
	do(t, l, l.SetTenantWeight(ts(4), "v", MaxWeight))
	if ti, _ := l.Tenant("v"); ti.Weight != MaxWeight || ti.Quota != 8 {
		t.Fatalf("v after re-weight: %+v", ti)
	}
	if err := l.AddTenant(ts(5), "u", math.MaxFloat64); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("re-adding u with a huge weight: %v, want ErrInvalidValue", err)
	}
	if ti, _ := l.Tenant("u"); ti.Registered {
		t.Fatalf("rejected AddTenant registered u: %+v", ti)
	}
}

// A refused Start or Stop says which way the job's state is wrong.
func TestStartStopRefusalsSayWhy(t *testing.T) {
	l := mustNew(t, Config{Capacity: 8})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(t0, "j", "t", 1, 1))
	if err := l.Stop(ts(1), "j"); !errors.Is(err, ErrInvalidTransition) || !strings.Contains(err.Error(), "not running") {
		t.Errorf("stopping a pending job: %v", err)
	}
	do(t, l, l.Start(ts(1), "j"))
	if err := l.Start(ts(2), "j"); !errors.Is(err, ErrInvalidTransition) || !strings.Contains(err.Error(), "already running") {
		t.Errorf("starting a running job: %v", err)
	}
}
