package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/astraea-sched/astraea/ledger"
)

// genRun draws a random run: jobs with arbitrary (also zero, unfinished,
// never started) times and ρ including +Inf, tenant intervals with zero and
// non-zero accounts, and occupancy points in any order.
func genRun(t *rapid.T) Run {
	r := Run{Policy: "p"}
	tenants := []string{"a", "b", "c"}
	nj := rapid.IntRange(0, 30).Draw(t, "jobs")
	for i := range nj {
		submit := rapid.IntRange(0, 10000).Draw(t, "submit")
		j := JobRecord{
			ID: fmt.Sprint(i), Tenant: rapid.SampledFrom(tenants).Draw(t, "tenant"),
			GPUs: rapid.IntRange(1, 16).Draw(t, "gpus"), Submit: at(submit),
			Run:         time.Duration(rapid.IntRange(0, 5000).Draw(t, "run")) * time.Second,
			Preemptions: rapid.IntRange(0, 3).Draw(t, "preemptions"),
		}
		if rapid.Bool().Draw(t, "started") {
			j.FirstStart = at(submit + rapid.IntRange(0, 5000).Draw(t, "wait"))
			j.End = j.FirstStart.Add(j.Run + time.Duration(rapid.IntRange(0, 100).Draw(t, "overhead"))*time.Second)
		} else if rapid.Bool().Draw(t, "cancelled") {
			j.End = at(submit + rapid.IntRange(0, 100).Draw(t, "cancel"))
		}
		if rapid.IntRange(0, 9).Draw(t, "inf") == 0 {
			j.Rho = ledger.Rho(math.Inf(1))
		} else {
			j.Rho = ledger.Rho(rapid.Float64Range(0, 3).Draw(t, "rho"))
		}
		r.Jobs = append(r.Jobs, j)
	}
	for k := range rapid.IntRange(0, 12).Draw(t, "intervals") {
		alloc := rapid.SampledFrom([]float64{0, 1, 3600, 7200}).Draw(t, "alloc")
		fair := rapid.SampledFrom([]float64{0, 1, 3600, 7200}).Draw(t, "fair")
		length := rapid.SampledFrom([]time.Duration{time.Hour, 6 * time.Hour}).Draw(t, "length")
		r.Tenants = append(r.Tenants, TenantInterval{Tenant: rapid.SampledFrom(tenants).Draw(t, "t"),
			From: at(k * 3600), To: at(k*3600 + int(length.Seconds())), Account: acct(alloc, fair)})
	}
	for range rapid.IntRange(0, 10).Draw(t, "points") {
		c := rapid.IntRange(0, 64).Draw(t, "capacity")
		r.Util = append(r.Util, UtilPoint{At: at(rapid.IntRange(0, 20000).Draw(t, "at")), Capacity: c, Used: rapid.IntRange(0, c).Draw(t, "used")})
	}
	if rapid.Bool().Draw(t, "end") {
		r.End = at(20000)
	}
	return r
}

// TestSummaryInvariants: whatever the run, every share lies in [0, 1],
// percentiles are ordered, slowdowns are at least 1, Jain's index is in
// (0, 1], and the summary encodes to JSON.
func TestSummaryInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genRun(t)
		s := Summarize(r, SummaryConfig{})
		unit := func(name string, x float64) {
			if !(x >= 0 && x <= 1) {
				t.Fatalf("%s = %v, outside [0, 1]", name, x)
			}
		}
		unit("sharing-loss jobs", s.SharingLossJobs)
		unit("utilization", s.Utilization)
		for _, il := range s.TenantLoss {
			unit("tenant loss share", il.Share)
			if il.Loss > il.Pairs {
				t.Fatalf("%d losses of %d pairs", il.Loss, il.Pairs)
			}
		}
		if !(s.Jain > 0 && s.Jain <= 1+1e-12) {
			t.Fatalf("Jain = %v", s.Jain)
		}
		for name, st := range map[string]Stats{"JCT": s.JCT, "queueing": s.Queueing, "slowdown": s.Slowdown} {
			if st.N != s.Finished || !(st.P50 <= st.P90 && st.P90 <= st.P99 && st.P99 <= st.Max) || st.Mean > st.Max+1e-9 {
				t.Fatalf("%s stats out of order: %+v (finished %d)", name, st, s.Finished)
			}
		}
		if s.Finished > 0 && s.Slowdown.P50 < 1 {
			t.Fatalf("slowdown below 1: %+v", s.Slowdown)
		}
		if _, err := json.Marshal(s); err != nil {
			t.Fatalf("summary does not encode: %v", err)
		}
	})
}
