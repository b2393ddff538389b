package ledger

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// jobShareLedger is the hand-computed case of the two job-share rules: 16
// GPUs, tenants a and b of weight 1 under Eq. 16 (quota 8 each); a's jobs
// a1 (1 GPU, running) and a3 (3 GPUs, pending) are active over [0, 100 s).
func jobShareLedger(t *testing.T, share JobShare) *Ledger {
	t.Helper()
	l := mustNew(t, Config{Mode: QuotaShare, Capacity: 16, JobShare: share})
	do(t, l, l.AddTenant(t0, "a", 1))
	do(t, l, l.AddTenant(t0, "b", 1))
	do(t, l, l.Submit(t0, "a1", "a", 1, 1))
	do(t, l, l.Submit(t0, "a3", "a", 3, 1))
	do(t, l, l.Start(t0, "a1"))
	do(t, l, l.Advance(ts(100)))
	return l
}

func TestJobShareRules(t *testing.T) {
	for _, tc := range []struct {
		share        JobShare
		fair1, fair3 GPUSeconds // over [0, 100 s)
		rate1        float64
	}{
		// min(1, 8/2) = 1 and min(3, 8/2) = 3: each job is owed its demand.
		{CappedJobShare, 100, 300, 1},
		// 8/2 = 4 each, whatever the demand: a1 runs all the time and is at
		// ρ = 100/400.
		{SplitJobShare, 400, 400, 4},
	} {
		t.Run(tc.share.String(), func(t *testing.T) {
			l := jobShareLedger(t, tc.share)
			if l.JobShare() != tc.share {
				t.Fatalf("JobShare() = %v", l.JobShare())
			}
			a1, err := l.JobAccount("a1", t0, ts(100))
			do(t, l, err)
			a3, err := l.JobAccount("a3", t0, ts(100))
			do(t, l, err)
			if a1.Alloc != 100 || a1.FairShare != tc.fair1 || a3.Alloc != 0 || a3.FairShare != tc.fair3 {
				t.Fatalf("a1 %+v, a3 %+v; want fair shares %v and %v", a1, a3, tc.fair1, tc.fair3)
			}
			if r, _ := l.View(ts(100)).JobFairRate("a1"); r != tc.rate1 {
				t.Fatalf("a1's fair rate %v, want %v", r, tc.rate1)
			}
			// a1 finishes: a3 alone is owed min(3, 8) or all 8.
			do(t, l, l.Finish(ts(100), "a1", Completed))
			do(t, l, l.Advance(ts(110)))
			a3, err = l.JobAccount("a3", ts(100), ts(110))
			do(t, l, err)
			want := GPUSeconds(30)
			if tc.share == SplitJobShare {
				want = 80
			}
			if a3.FairShare != want {
				t.Fatalf("a3 alone over 10 s owed %v, want %v", a3.FairShare, want)
			}
			// A lone job's weight does not change what it is owed, and the
			// rule survives a snapshot.
			do(t, l, l.SetJobWeight(ts(110), "a3", 2))
			data, err := l.MarshalBinary()
			do(t, l, err)
			r, err := Restore(data)
			do(t, r, err)
			if r.JobShare() != tc.share {
				t.Fatalf("restored JobShare() = %v, want %v", r.JobShare(), tc.share)
			}
			do(t, r, r.Advance(ts(120)))
			do(t, l, l.Advance(ts(120)))
			got, _ := r.JobAccount("a3", ts(110), ts(120))
			orig, _ := l.JobAccount("a3", ts(110), ts(120))
			if got != orig || got.FairShare != want {
				t.Fatalf("after restore a3 owed %+v, the original %+v, want fair share %v", got, orig, want)
			}
		})
	}
}

// A split share adds up to the tenant's, also with unequal weights: 8 GPUs
// over weights 1 and 3 are 2 and 6, although the 3-weight job asks for 1.
func TestSplitJobShareWeights(t *testing.T) {
	l := mustNew(t, Config{Mode: QuotaShare, Capacity: 16, JobShare: SplitJobShare})
	do(t, l, l.AddTenant(t0, "a", 1))
	do(t, l, l.AddTenant(t0, "b", 1))
	do(t, l, l.Submit(t0, "x", "a", 4, 1))
	do(t, l, l.Submit(t0, "y", "a", 1, 3))
	v := l.View(t0)
	x, _ := v.JobFairRate("x")
	y, _ := v.JobFairRate("y")
	if x != 2 || y != 6 {
		t.Fatalf("fair rates x %v, y %v; want 2 and 6", x, y)
	}
}

func TestJobShareRejected(t *testing.T) {
	_, err := New(Config{JobShare: 2})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "job share") {
		t.Fatalf("New with JobShare 2: %v", err)
	}
	if s := JobShare(7).String(); s != "JobShare(7)" {
		t.Fatalf("String of an unknown rule: %q", s)
	}
	for _, r := range []JobShare{CappedJobShare, SplitJobShare} {
		if got, err := ParseJobShare(r.String()); got != r || err != nil {
			t.Fatalf("ParseJobShare(%q) = %v, %v", r.String(), got, err)
		}
	}
	if _, err := ParseJobShare("equal"); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `"equal"`) {
		t.Fatalf("ParseJobShare(equal): %v", err)
	}
}

// A snapshot's job share rule is checked against its groups: a split
// ledger whose job group has a finite θ, or a capped one whose job group
// has θ = +Inf, is corrupt.
func TestRestoreRejectsJobShareMismatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		share JobShare
		theta float64
	}{
		{"split with a finite θ", SplitJobShare, 1},
		{"capped with θ = +Inf", CappedJobShare, math.Inf(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := jobShareLedger(t, tc.share)
			for _, g := range l.tenants[0].groups {
				g.theta = tc.theta
			}
			data, err := l.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if got, err := Restore(data); !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("Restore = %v, %v; want ErrCorruptSnapshot", got, err)
			}
		})
	}
}
