package slurm

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"pgregory.net/rapid"
)

// genSacct draws a valid sacct listing: jobs of accounts a, b, c with 0–8
// GPUs, up to three runs each (all but the last REQUEUED), ending
// COMPLETED, FAILED, CANCELLED, still RUNNING or still PENDING, with times
// in [t0, t0+4h] (seconds).
func genSacct(t *rapid.T, t0 time.Time) string {
	var b strings.Builder
	b.WriteString(sacctHeader)
	n := rapid.IntRange(0, 25).Draw(t, "jobs")
	at := func(s int) string { return t0.Add(time.Duration(s) * time.Second).Format(TimeLayout) }
	for i := 0; i < n; i++ {
		acct := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "account")
		gpus := rapid.IntRange(0, 8).Draw(t, "gpus")
		tres := fmt.Sprintf("cpu=1,gres/gpu=%d", gpus)
		if rapid.Bool().Draw(t, "typed") {
			tres = fmt.Sprintf("cpu=1,gres/gpu:a100=%d", gpus)
		}
		clock := rapid.IntRange(0, 12000).Draw(t, "submit")
		submit := clock
		runs := rapid.IntRange(1, 3).Draw(t, "runs")
		for r := 0; r < runs; r++ {
			start := clock + rapid.IntRange(0, 600).Draw(t, "wait")
			end := start + rapid.IntRange(0, 3000).Draw(t, "run")
			if r < runs-1 {
				fmt.Fprintf(&b, "%d|%s|%s|%s|%s|%s|%s|REQUEUED\n", i, acct, tres, tres, at(submit), at(start), at(end))
				submit, clock = end, end
				continue
			}
			switch rapid.IntRange(0, 4).Draw(t, "final") {
			case 0:
				fmt.Fprintf(&b, "%d|%s|%s|%s|%s|%s|%s|COMPLETED\n", i, acct, tres, tres, at(submit), at(start), at(end))
			case 1:
				fmt.Fprintf(&b, "%d|%s|%s|%s|%s|%s|%s|FAILED\n", i, acct, tres, tres, at(submit), at(start), at(end))
			case 2:
				fmt.Fprintf(&b, "%d|%s||%s|%s|None|%s|CANCELLED by 0\n", i, acct, tres, at(submit), at(end))
			case 3:
				fmt.Fprintf(&b, "%d|%s|%s|%s|%s|%s|Unknown|RUNNING\n", i, acct, tres, tres, at(submit), at(start))
			case 4:
				fmt.Fprintf(&b, "%d|%s||%s|%s|Unknown|Unknown|PENDING\n", i, acct, tres, at(submit))
			}
		}
	}
	return b.String()
}

// Replay agrees with a direct sum over the records, for any jobs and any
// window that ends by now, also for an account with zero shares (counted
// outside the ledger): Used = Σ gpus × |run ∩ window|; in quota mode
// Σ Owed = M × window; in demand mode Owed ≤ the quota; ρ = Used ÷ Owed;
// ranks follow ρ; the ledger's invariants hold.
func TestReplayAgreesWithDirectSums(t *testing.T) {
	t0 := utc("2024-05-01T00:00:00")
	rapid.Check(t, func(t *rapid.T) {
		in := genSacct(t, t0)
		recs, _, err := ParseSacct(strings.NewReader(in), Options{})
		if err != nil {
			t.Fatalf("%v\n%s", err, in)
		}
		jobs, _, err := GroupJobs(recs, false)
		if err != nil {
			t.Fatalf("%v\n%s", err, in)
		}
		now := t0.Add(time.Duration(rapid.IntRange(0, 20000).Draw(t, "now")) * time.Second)
		from := t0.Add(time.Duration(rapid.IntRange(-100, 20000).Draw(t, "from")) * time.Second)
		if from.After(now) {
			from = now
		}
		to := from.Add(time.Duration(rapid.IntRange(0, 20000).Draw(t, "len")) * time.Second)
		if to.After(now) {
			to = now
		}
		weights := map[string]float64{"a": 1, "b": 2, "c": float64(rapid.IntRange(0, 5).Draw(t, "wc"))} // c at 0: outside the ledger
		capacity := rapid.IntRange(1, 32).Draw(t, "capacity")
		owedQuota := map[string]float64{}
		for _, mode := range []ledger.Mode{ledger.QuotaShare, ledger.DemandAware} {
			rep, err := Replay(jobs, Config{Mode: mode, Capacity: ledger.GPUs(capacity), Weights: weights, Now: now, From: from, To: to})
			if err != nil {
				t.Fatalf("%v\n%s", err, in)
			}
			if err := rep.Ledger.Check(); err != nil {
				t.Fatal(err)
			}
			want := bruteUse(recs, from, to, now)
			sumOwed := 0.0
			for i, r := range rep.Rows {
				if math.Abs(float64(r.Used)-want[r.Account]) > 1e-6*math.Max(1, want[r.Account]) {
					t.Fatalf("%s mode %v: used %v, direct sum %v\n%s", r.Account, mode, r.Used, want[r.Account], in)
				}
				if r.Rho != ledger.Ratio(r.Used, r.Owed) {
					t.Fatalf("rho %v of %v/%v", r.Rho, r.Used, r.Owed)
				}
				if i > 0 && (r.Rho.Compare(rep.Rows[i-1].Rho) < 0 || r.Rank < rep.Rows[i-1].Rank) {
					t.Fatalf("rows out of rank order: %+v", rep.Rows)
				}
				sumOwed += float64(r.Owed)
				if mode == ledger.QuotaShare {
					owedQuota[r.Account] = float64(r.Owed)
				} else if float64(r.Owed) > owedQuota[r.Account]*(1+1e-9)+1e-6 {
					t.Fatalf("%s: demand-mode owed %v above its quota %v", r.Account, r.Owed, owedQuota[r.Account])
				}
			}
			if total := float64(capacity) * to.Sub(from).Seconds(); mode == ledger.QuotaShare && math.Abs(sumOwed-total) > 1e-6*math.Max(1, total) {
				t.Fatalf("quota mode: Σ owed %v, M × window %v", sumOwed, total)
			}
		}
	})
}
