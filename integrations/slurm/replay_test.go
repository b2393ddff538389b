package slurm

import (
	"bufio"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// realTimes reads testdata/real/times.txt: the script's T0, T1 and NOW.
func realTimes(t *testing.T) (t0, t1, now time.Time) {
	t.Helper()
	sc := bufio.NewScanner(openFixture(t, "real/times.txt"))
	kv := map[string]string{}
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		kv[k] = v
	}
	if kv["TZ"] != "UTC" {
		t.Fatalf("fixture taken in zone %q; the tests read it as UTC", kv["TZ"])
	}
	return utc(kv["T0"]), utc(kv["T1"]), utc(kv["NOW"])
}

func realJobs(t *testing.T) ([]Record, []Job, map[string]float64) {
	t.Helper()
	recs, _, err := ParseSacct(openFixture(t, "real/sacct.txt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := GroupJobs(recs, false)
	if err != nil {
		t.Fatal(err)
	}
	shares, _, err := ParseSshare(openFixture(t, "real/sshare.txt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return recs, jobs, Weights(shares)
}

// bruteUse is Σ gpus × |[start, end) ∩ [from, to)| over records, with runs
// whose End is Unknown (or after now) running until now.
func bruteUse(recs []Record, from, to, now time.Time) map[string]float64 {
	use := map[string]float64{}
	for _, r := range recs {
		if r.Start.IsZero() {
			continue
		}
		a, b := r.Start, r.End
		if b.IsZero() || b.After(now) {
			b = now
		}
		a, b = maxTime(a, from), minTime(b, to)
		if b.After(a) {
			use[r.Account] += float64(r.GPUs) * b.Sub(a).Seconds()
		}
	}
	return use
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func rowOf(t *testing.T, rep *Report, acct string) Row {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Account == acct {
			return r
		}
	}
	t.Fatalf("no row for %s in %+v", acct, rep.Rows)
	return Row{}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func TestReplayRealSlurmOutput(t *testing.T) {
	recs, jobs, weights := realJobs(t)
	t0, t1, now := realTimes(t)
	for name, tc := range map[string]struct{ from, to time.Time }{
		"the window of the finished jobs":       {t0, t1},
		"everything up to now, running billed":  {time.Time{}, time.Time{}},
		"a window that cuts runs in the middle": {t0.Add(3 * time.Second), t1.Add(-4 * time.Second)},
	} {
		t.Run(name, func(t *testing.T) {
			rep, err := Replay(jobs, Config{Mode: ledger.QuotaShare, Capacity: 4, Weights: weights, Now: now, From: tc.from, To: tc.to})
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Ledger.Check(); err != nil {
				t.Fatal(err)
			}
			want := bruteUse(recs, rep.From, rep.To, now)
			w := rep.To.Sub(rep.From).Seconds()
			for _, acct := range []string{"team-a", "team-b"} {
				r := rowOf(t, rep, acct)
				owed := 4 * weights[acct] / 4 * w // Eq. 16: M × W_j / ΣW × window
				if !near(float64(r.Used), want[acct]) || !near(float64(r.Owed), owed) {
					t.Errorf("%s: used %v owed %v; want %v and %v", acct, r.Used, r.Owed, want[acct], owed)
				}
				if !near(float64(r.Rho), want[acct]/owed) {
					t.Errorf("%s: rho %v, want %v", acct, r.Rho, want[acct]/owed)
				}
			}
		})
	}
	// The numbers of the fixture itself, worked by hand from sacct.txt.
	rep, err := Replay(jobs, Config{Mode: ledger.QuotaShare, Capacity: 4, Weights: weights, Now: now, From: t0, To: t1})
	if err != nil {
		t.Fatal(err)
	}
	a, b := rowOf(t, rep, "team-a"), rowOf(t, rep, "team-b")
	// team-a: job 1 2 GPUs × 6 s, job 4 1 GPU × 3 s; team-b: job 2 1 × 5 s,
	// job 3 1 × 0 s (requeued at once) + 1 × 7 s. Window 14 s, shares 3:1.
	if a.Used != 15 || b.Used != 12 || a.Owed != 42 || b.Owed != 14 {
		t.Fatalf("team-a %+v, team-b %+v", a, b)
	}
	if a.Rank != 1 || b.Rank != 2 || a.NormShares != 0.75 || b.NormShares != 0.25 {
		t.Fatalf("ranks/norm shares: %+v %+v", a, b)
	}
}

func TestReplayDemandAware(t *testing.T) {
	// Two accounts, weights 1:1, 4 GPUs (quota 2 each). a runs 4 GPUs for
	// 100 s while b waits with 2 GPUs pending; then b runs 2 GPUs for 100 s.
	// Eq. 8: a is owed min(4, 2) × 200 = 400, b min(2, 2) × 200 = 400.
	in := sacctHeader +
		"1|a|gres/gpu=4||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:01:40|COMPLETED\n" +
		"2|b|gres/gpu=2||2024-05-01T10:00:00|2024-05-01T10:01:40|2024-05-01T10:03:20|COMPLETED\n" +
		"3|a|gres/gpu=4||2024-05-01T10:01:40|Unknown|Unknown|PENDING\n"
	jobs := mustJobs(t, in)
	rep, err := Replay(jobs, Config{Mode: ledger.DemandAware, Capacity: 4, Weights: map[string]float64{"a": 1, "b": 1}, Now: utc("2024-05-01T10:03:20")})
	if err != nil {
		t.Fatal(err)
	}
	a, b := rowOf(t, rep, "a"), rowOf(t, rep, "b")
	if a.Used != 400 || a.Owed != 400 || b.Used != 200 || b.Owed != 400 || b.Rho != 0.5 || a.Rho != 1 {
		t.Fatalf("a %+v b %+v", a, b)
	}
	if b.Rank != 1 || a.Rank != 2 {
		t.Fatalf("ranks a %d b %d", a.Rank, b.Rank)
	}
}

// mustJobs parses and groups sacct output, failing t (a *testing.T or a
// *rapid.T) on an error.
func mustJobs(t interface {
	Helper()
	Fatal(...any)
}, sacct string) []Job {
	t.Helper()
	recs, _, err := ParseSacct(strings.NewReader(sacct), Options{})
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := GroupJobs(recs, false)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func TestReplayCases(t *testing.T) {
	t0 := utc("2024-05-01T10:00:00")
	for name, tc := range map[string]struct {
		sacct    string
		now      time.Time
		from, to time.Time
		used     float64 // of account a
		ignored  map[string]int
	}{
		"a running job (End=Unknown) is billed up to now": {
			"1|a|gres/gpu=2||2024-05-01T10:00:00|2024-05-01T10:00:10|Unknown|RUNNING\n",
			t0.Add(70 * time.Second), time.Time{}, time.Time{}, 2 * 60, nil,
		},
		"a run that ends after now is cut at now": {
			"1|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:10:00|COMPLETED\n",
			t0.Add(60 * time.Second), time.Time{}, time.Time{}, 60, nil,
		},
		"a requeued job is billed for both runs, not for the gap": {
			"7|a|gres/gpu=2||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:00:30|REQUEUED\n" +
				"7|a|gres/gpu=2||2024-05-01T10:00:30|2024-05-01T10:01:00|2024-05-01T10:01:10|COMPLETED\n",
			t0.Add(5 * time.Minute), time.Time{}, time.Time{}, 2*30 + 2*10, nil,
		},
		"back-to-back runs of a requeued job": {
			"7|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:00:30|REQUEUED\n" +
				"7|a|gres/gpu=1||2024-05-01T10:00:30|2024-05-01T10:00:30|2024-05-01T10:01:00|FAILED\n",
			t0.Add(5 * time.Minute), time.Time{}, time.Time{}, 60, nil,
		},
		"a requeued job still waiting for its next run": {
			"7|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:00:30|REQUEUED\n",
			t0.Add(5 * time.Minute), time.Time{}, time.Time{}, 30, nil,
		},
		"jobs outside the window are left out, straddling runs are cut": {
			"1|a|gres/gpu=1||2024-05-01T09:00:00|2024-05-01T09:00:00|2024-05-01T09:30:00|COMPLETED\n" +
				"2|a|gres/gpu=1||2024-05-01T09:50:00|2024-05-01T09:50:00|2024-05-01T10:00:20|COMPLETED\n" +
				"3|a|gres/gpu=4||2024-05-01T10:00:50|2024-05-01T10:00:50|2024-05-01T10:02:00|COMPLETED\n" +
				"4|a|gres/gpu=1||2024-05-01T10:05:00|2024-05-01T10:05:00|2024-05-01T10:06:00|COMPLETED\n",
			t0.Add(time.Hour), t0, t0.Add(time.Minute), 20 + 4*10,
			map[string]int{"ended before window": 1, "submitted after window": 1},
		},
		"CPU-only and zero-length jobs change nothing": {
			"1|a|cpu=4||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:01:00|COMPLETED\n" +
				"2|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:00:00|CANCELLED by 0\n" +
				"3|a||gres/gpu=2|2024-05-01T10:00:00|None|2024-05-01T10:00:30|CANCELLED by 0\n",
			t0.Add(time.Minute), time.Time{}, time.Time{}, 0, map[string]int{"no GPUs": 1, "ended before window": 1},
		},
		"a job submitted after now is ignored": {
			"1|a|gres/gpu=1||2024-05-01T10:05:00|2024-05-01T10:05:00|2024-05-01T10:06:00|COMPLETED\n",
			t0.Add(time.Minute), t0, time.Time{}, 0, map[string]int{"submitted after now": 1},
		},
	} {
		t.Run(name, func(t *testing.T) {
			jobs := mustJobs(t, sacctHeader+tc.sacct)
			rep, err := Replay(jobs, Config{Mode: ledger.DemandAware, Capacity: 8, Now: tc.now, From: tc.from, To: tc.to,
				Weights: map[string]float64{"a": 1, "b": 1}})
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Ledger.Check(); err != nil {
				t.Fatal(err)
			}
			if got := rowOf(t, rep, "a").Used; float64(got) != tc.used {
				t.Fatalf("used %v, want %v", got, tc.used)
			}
			for k, v := range tc.ignored {
				if rep.Ignored[k] != v {
					t.Fatalf("ignored %v, want %v", rep.Ignored, tc.ignored)
				}
			}
		})
	}
}

func TestReplayAccounts(t *testing.T) {
	in := sacctHeader +
		"1|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:01:00|COMPLETED\n" +
		"2|z|gres/gpu=2||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:00:30|COMPLETED\n" +
		"3|ghost|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:00:30|COMPLETED\n"
	jobs := mustJobs(t, in)
	cfg := Config{Mode: ledger.QuotaShare, Capacity: 2, Now: utc("2024-05-01T10:01:00"),
		Weights: map[string]float64{"a": 1, "idle": 1, "z": 0}}
	_, err := Replay(jobs, cfg)
	var pe *ParseError
	if !errors.Is(err, ErrUnknownAccount) || !errors.As(err, &pe) || pe.Line != 4 {
		t.Fatalf("unknown account: %v", err)
	}
	cfg.Lenient = true
	rep, err := Replay(jobs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Skipped["unknown account"] != 1 {
		t.Fatalf("skipped %v", rep.Skipped)
	}
	a, idle, z := rowOf(t, rep, "a"), rowOf(t, rep, "idle"), rowOf(t, rep, "z")
	// Quota mode: a and idle are owed 1 GPU × 60 s each; z has no shares.
	if a.Used != 60 || a.Owed != 60 || a.Rho != 1 {
		t.Fatalf("a %+v", a)
	}
	if idle.Used != 0 || idle.Owed != 60 || idle.Rho != 0 || idle.Rank != 1 {
		t.Fatalf("an idle account accrues its quota in quota mode: %+v", idle)
	}
	if z.Used != 60 || z.Owed != 0 || !z.Rho.IsInf() || z.Rank != 3 || z.NormShares != 0 {
		t.Fatalf("a zero-share account is +Inf: %+v", z)
	}
	// nil weights: every account with jobs, weight 1.
	rep, err = Replay(jobs, Config{Capacity: 2, Now: utc("2024-05-01T10:01:00")})
	if err != nil || len(rep.Rows) != 3 || rowOf(t, rep, "ghost").RawShares != 1 {
		t.Fatal(rep, err)
	}
}

func TestReplayHalfLife(t *testing.T) {
	// One account owning the whole cluster (2 GPUs), one job using it all
	// for an hour: ρ = 1 whatever the decay, and Used is the decayed
	// integral 2 × h/ln2 × (1 − 2^(−1h/h)).
	in := sacctHeader + "1|a|gres/gpu=2||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T11:00:00|COMPLETED\n"
	jobs := mustJobs(t, in)
	h := 30 * time.Minute
	rep, err := Replay(jobs, Config{Mode: ledger.QuotaShare, Capacity: 2, Weights: map[string]float64{"a": 1, "z": 0},
		Now: utc("2024-05-01T11:00:00"), HalfLife: h})
	if err != nil {
		t.Fatal(err)
	}
	want := 2 * h.Seconds() / math.Ln2 * (1 - math.Pow(2, -2))
	if a := rowOf(t, rep, "a"); !near(float64(a.Used), want) || !near(float64(a.Rho), 1) {
		t.Fatalf("a %+v, want used %v", a, want)
	}
	// A zero-share account is decayed the same way outside the ledger.
	rep, err = Replay(jobs, Config{Mode: ledger.QuotaShare, Capacity: 2, Weights: map[string]float64{"b": 1, "a": 0},
		Now: utc("2024-05-01T11:00:00"), HalfLife: h})
	if err != nil {
		t.Fatal(err)
	}
	if a := rowOf(t, rep, "a"); !near(float64(a.Used), want) {
		t.Fatalf("zero-share a %+v, want used %v", a, want)
	}
}

func TestReplayConfigErrors(t *testing.T) {
	now := utc("2024-05-01T10:00:00")
	for name, cfg := range map[string]Config{
		"no now":                        {Capacity: 1},
		"no capacity":                   {Now: now},
		"negative half-life":            {Now: now, Capacity: 1, HalfLife: -time.Second},
		"a window end before its start": {Now: now, Capacity: 1, From: now, To: now.Add(-time.Second)},
		"now before the window":         {Now: now, Capacity: 1, From: now.Add(time.Hour), To: now.Add(2 * time.Hour)},
		"a NaN weight":                  {Now: now, Capacity: 1, Weights: map[string]float64{"a": math.NaN()}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Replay(nil, cfg); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestRanksTieLikeFairTree(t *testing.T) {
	rows := []Row{{Account: "c", Rho: 0.5}, {Account: "b", Rho: 0.5}, {Account: "a", Rho: 2}, {Account: "d", Rho: ledger.Rho(math.Inf(1))}, {Account: "e", Rho: 0.1}}
	rankRows(rows)
	got := ""
	for _, r := range rows {
		got += r.Account + ":" + string(rune('0'+r.Rank)) + " "
	}
	if got != "e:1 b:2 c:2 a:4 d:5 " {
		t.Fatalf("ranks %q", got)
	}
}
