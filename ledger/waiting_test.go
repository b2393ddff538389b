package ledger

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestViewWaitingRhoFalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want bool
	}{
		{"unbounded", Config{Capacity: 8, Start: t0}, true},
		{"eq8", Config{Mode: DemandAware, Capacity: 8, Start: t0}, true},
		{"split", Config{Capacity: 8, Start: t0, JobShare: SplitJobShare}, false},
		{"window", Config{Capacity: 8, Start: t0, History: TrailingWindow(time.Hour)}, false},
		{"half-life", Config{Capacity: 8, Start: t0, History: HalfLife(time.Hour)}, false},
		{"buckets", Config{Capacity: 8, Start: t0, History: Buckets(24, time.Hour)}, false},
	} {
		l := mustNew(t, tc.cfg)
		if got := l.View(t0).WaitingRhoFalls(); got != tc.want {
			t.Errorf("%s: WaitingRhoFalls() = %v, want %v", tc.name, got, tc.want)
		}
	}
	if (View{}).WaitingRhoFalls() {
		t.Error("the zero View declares the bound")
	}
}

// TestPropertyWaitingJobsRhoFalls checks what WaitingRhoFalls declares on
// random ledgers: between two reads of a job that held no GPUs in
// between, its Alloc is the same, its FairShare grew by at most its demand
// per second, and its ρ did not rise.
func TestPropertyWaitingJobsRhoFalls(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mode := rapid.SampledFrom([]Mode{QuotaShare, DemandAware}).Draw(t, "mode")
		l, err := New(Config{Mode: mode, Capacity: GPUs(rapid.IntRange(1, 16).Draw(t, "capacity")), Start: t0})
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range []TenantID{"A", "B"} {
			if err := l.AddTenant(t0, tn, float64(rapid.IntRange(1, 3).Draw(t, "weight"))); err != nil {
				t.Fatal(err)
			}
		}
		type read struct {
			at  time.Time
			acc Account
		}
		last := map[JobID]read{} // jobs that waited since their last read
		demand := map[JobID]GPUs{}
		now := t0
		for i := range rapid.IntRange(1, 60).Draw(t, "steps") {
			now = now.Add(time.Duration(rapid.IntRange(0, 300).Draw(t, "dt")) * time.Second)
			if err := l.Advance(now); err != nil {
				t.Fatal(err)
			}
			v := l.View(now)
			for id, r := range last {
				a, ok := v.JobAccount(id)
				if !ok {
					t.Fatalf("job %s unknown", id)
				}
				grew := float64(a.FairShare - r.acc.FairShare)
				if a.Alloc != r.acc.Alloc || grew < -1e-9 || grew > float64(demand[id])*now.Sub(r.at).Seconds()*(1+1e-12)+1e-9 || a.Rho > r.acc.Rho*(1+1e-12) {
					t.Fatalf("waiting job %s: %+v at %v, then %+v at %v", id, r.acc, r.at.Sub(t0), a, now.Sub(t0))
				}
				last[id] = read{now, a}
			}
			id := JobID(fmt.Sprint("j", i))
			switch rapid.IntRange(0, 2).Draw(t, "event") {
			case 0:
				d := GPUs(rapid.IntRange(1, 8).Draw(t, "demand"))
				if err := l.Submit(now, id, rapid.SampledFrom([]TenantID{"A", "B"}).Draw(t, "tenant"), d, 1); err != nil {
					t.Fatal(err)
				}
				demand[id] = d
				a, _ := l.View(now).JobAccount(id)
				last[id] = read{now, a}
			case 1: // a waiting job runs: it stops being checked until it stops
				if ids := slices.Sorted(maps.Keys(last)); len(ids) > 0 {
					id := rapid.SampledFrom(ids).Draw(t, "start")
					if err := l.Start(now, id); err != nil {
						t.Fatal(err)
					}
					delete(last, id)
				}
			case 2: // a running job stops and waits
				for _, id := range slices.Sorted(maps.Keys(demand)) {
					if info, ok := l.Job(id); ok && info.Running {
						if err := l.Stop(now, id); err != nil {
							t.Fatal(err)
						}
						a, _ := l.View(now).JobAccount(id)
						last[id] = read{now, a}
						break
					}
				}
			}
		}
	})
}
