package slurm

import (
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// The hand-made fixtures in testdata/hand: three accounts weighted 2:2:1
// (weights.csv) on 12 GPUs (sinfo.txt: two nodes of 4 A100, listed in two
// partitions, and one node of 2 V100 + 2 A100), window [08:00, 11:00) on
// 2024-05-01, now 11:00. Every number below is worked by hand in the
// comments.
func TestHandFixtures(t *testing.T) {
	t0, t3 := utc("2024-05-01T08:00:00"), utc("2024-05-01T11:00:00")
	_, capacity, _, err := ParseSinfo(openFixture(t, "hand/sinfo.txt"), Options{})
	if err != nil || capacity != 12 {
		t.Fatalf("capacity %d, %v", capacity, err)
	}
	weights, _, err := ParseWeights(openFixture(t, "hand/weights.csv"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := ParseSacct(openFixture(t, "hand/sacct.txt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := GroupJobs(recs, false)
	if err != nil {
		t.Fatal(err)
	}
	const h = 3600.0
	for name, tc := range map[string]struct {
		mode       ledger.Mode
		used, owed map[string]float64 // GPU-hours
		ranks      map[string]int
	}{
		// Quotas: 12 × 2/5 = 4.8 GPUs (vision, nlp), 12 × 1/5 = 2.4 (speech).
		// Used: vision job 100 4 GPUs × 2 h (untyped total, not 4 + 4 typed)
		// + job 101 2 typed A100 × 1 h = 10; nlp job 102 (2 V100 + 2 A100)
		// × (0.75 h before its requeue + 0.75 h running up to now) = 6;
		// speech 0 (job 105 has no GPUs, 104 is pending). Job 99 ended
		// before the window.
		"quota mode (Eq. 16): owed = quota × 3 h": {
			ledger.QuotaShare,
			map[string]float64{"vision": 10, "nlp": 6, "speech": 0},
			map[string]float64{"vision": 14.4, "nlp": 14.4, "speech": 7.2},
			map[string]int{"speech": 1, "nlp": 2, "vision": 3},
		},
		// Owed = ∫ min(demand, quota): vision demand 4 (08–09), 6 (09–10),
		// 2 (10–10:30) → 4 + 4.8 + 1 = 9.8; nlp demand 4 from 08:30 (the
		// requeued job stays active between its runs), 5 while job 103
		// waits (10:00–10:20) → 1.5×4 + (1/3)×4.8 + (2/3)×4 = 10.2667;
		// speech 8 pending from 10:40 → 2.4 × 1/3 = 0.8.
		"demand mode (Eq. 8): owed = ∫ min(demand, quota)": {
			ledger.DemandAware,
			map[string]float64{"vision": 10, "nlp": 6, "speech": 0},
			map[string]float64{"vision": 9.8, "nlp": 6 + 1.6 + 8.0/3, "speech": 0.8},
			map[string]int{"speech": 1, "nlp": 2, "vision": 3},
		},
	} {
		t.Run(name, func(t *testing.T) {
			rep, err := Replay(jobs, Config{Mode: tc.mode, Capacity: ledger.GPUs(capacity), Weights: weights, Now: t3, From: t0})
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Ledger.Check(); err != nil {
				t.Fatal(err)
			}
			if rep.Ignored["ended before window"] != 1 || rep.Ignored["no GPUs"] != 1 {
				t.Errorf("ignored %v", rep.Ignored)
			}
			for acct, used := range tc.used {
				r := rowOf(t, rep, acct)
				if !near(float64(r.Used)/h, used) || !near(float64(r.Owed)/h, tc.owed[acct]) || r.Rank != tc.ranks[acct] {
					t.Errorf("%s: used %.4f owed %.4f rank %d; want %.4f %.4f %d", acct,
						float64(r.Used)/h, float64(r.Owed)/h, r.Rank, used, tc.owed[acct], tc.ranks[acct])
				}
				if !near(float64(r.Rho), float64(ledger.Ratio(ledger.GPUSeconds(used), ledger.GPUSeconds(tc.owed[acct])))) {
					t.Errorf("%s: rho %v", acct, r.Rho)
				}
			}
			pending, _, err := ParsePending(openFixture(t, "hand/squeue.txt"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ups, err := SiteFactors(rep.Rows, pending, 1000)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, u := range ups {
				got += u.String() + "\n"
			}
			want := "scontrol update JobId=104 SiteFactor=1000\n" +
				"scontrol update JobId=106 SiteFactor=0\n" +
				"scontrol update JobId=107_[1-4] SiteFactor=500\n"
			if got != want {
				t.Errorf("updates\n%s\nwant\n%s", got, want)
			}
		})
	}
	// The same accounts from sshare: a parent account "ai" (not a tenant),
	// speech with "parent" shares inheriting ai's 10.
	shares, _, err := ParseSshare(openFixture(t, "hand/sshare.txt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := Weights(shares)
	if len(w) != 3 || w["vision"] != 2 || w["nlp"] != 2 || w["speech"] != 10 {
		t.Fatalf("sshare weights %v", w)
	}
	// In another zone the same wall-clock times are other instants, and
	// the results, computed in that zone throughout, do not change.
	tokyo := time.FixedZone("JST", 9*3600)
	recsJ, _, err := ParseSacct(openFixture(t, "hand/sacct.txt"), Options{Location: tokyo})
	if err != nil {
		t.Fatal(err)
	}
	jobsJ, _, _ := GroupJobs(recsJ, false)
	inJ := func(u time.Time) time.Time {
		return time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), 0, tokyo)
	}
	repJ, err := Replay(jobsJ, Config{Mode: ledger.QuotaShare, Capacity: 12, Weights: weights, Now: inJ(t3), From: inJ(t0)})
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, repJ, "nlp"); !near(float64(r.Used)/h, 6) || !repJ.From.Equal(t0.Add(-9*time.Hour)) {
		t.Fatalf("in JST: %+v from %v", r, repJ.From)
	}
}
