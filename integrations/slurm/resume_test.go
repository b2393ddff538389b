package slurm

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"pgregory.net/rapid"
)

// truthJob is what really happened to a job: its runs (all but the last
// requeued), and how it ended (final "" : still running or pending at the
// end of time).
type truthJob struct {
	id, acct string
	gpus     int
	submit   int
	runs     [][2]int // start, end; end -1: still running
	final    string   // COMPLETED, FAILED, CANCELLED or ""
}

func drawTruth(t *rapid.T) []truthJob {
	var jobs []truthJob
	for i := range rapid.IntRange(0, 12).Draw(t, "jobs") {
		j := truthJob{id: fmt.Sprint(i + 1), acct: rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "acct"),
			gpus: rapid.IntRange(1, 4).Draw(t, "gpus"), submit: rapid.IntRange(0, 1000).Draw(t, "submit")}
		clock := j.submit
		for r := range rapid.IntRange(0, 3).Draw(t, "runs") {
			start := clock + rapid.IntRange(0, 300).Draw(t, "wait")
			end := start + rapid.IntRange(0, 600).Draw(t, "len")
			j.runs = append(j.runs, [2]int{start, end})
			clock = end
			_ = r
		}
		switch k := rapid.IntRange(0, 3).Draw(t, "final"); {
		case len(j.runs) == 0 && k < 2:
			j.final = "CANCELLED"
		case len(j.runs) == 0:
		case k == 0:
			j.final = "COMPLETED"
		case k == 1:
			j.final = "FAILED"
		default:
			j.runs[len(j.runs)-1][1] = -1 // still running
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// sacctAt renders what `sacct -D -S since` shows at time now: jobs
// submitted by now that were active at or after since; each run that has
// started; a run not ended by now is RUNNING; a job between runs is
// pending. With dropOld, the records of runs that ended before since are
// left out, as a database may filter them.
func sacctAt(t0 time.Time, jobs []truthJob, since, now int, dropOld bool) string {
	at := func(s int) string { return t0.Add(time.Duration(s) * time.Second).Format(TimeLayout) }
	var b strings.Builder
	b.WriteString(sacctHeader)
	for _, j := range jobs {
		if j.submit > now {
			continue
		}
		tres := fmt.Sprintf("gres/gpu=%d", j.gpus)
		end := -1 // when the job ended for good, as seen at now
		if j.final != "" {
			end = j.submit
			if n := len(j.runs); n > 0 {
				end = j.runs[n-1][1]
			}
			if end > now {
				end = -1
			}
		}
		if end >= 0 && end < since {
			continue
		}
		submit := j.submit
		pendingNow := true
		for k, r := range j.runs {
			if r[0] > now {
				break
			}
			last := k == len(j.runs)-1
			switch {
			case r[1] < 0 || r[1] > now:
				fmt.Fprintf(&b, "%s|%s|%s|%s|%s|%s|Unknown|RUNNING\n", j.id, j.acct, tres, tres, at(submit), at(r[0]))
				pendingNow = false
			case last && j.final != "":
				fmt.Fprintf(&b, "%s|%s|%s|%s|%s|%s|%s|%s\n", j.id, j.acct, tres, tres, at(submit), at(r[0]), at(r[1]), j.final)
				pendingNow = false
			default:
				if !dropOld || r[1] >= since {
					fmt.Fprintf(&b, "%s|%s|%s|%s|%s|%s|%s|REQUEUED\n", j.id, j.acct, tres, tres, at(submit), at(r[0]), at(r[1]))
				}
				submit = r[1]
				pendingNow = true
			}
			if !pendingNow {
				break
			}
		}
		if pendingNow && end < 0 {
			fmt.Fprintf(&b, "%s|%s||%s|%s|Unknown|Unknown|PENDING\n", j.id, j.acct, tres, at(submit))
		} else if pendingNow && len(j.runs) == 0 {
			fmt.Fprintf(&b, "%s|%s||%s|%s|None|%s|%s\n", j.id, j.acct, tres, at(submit), at(end), j.final)
		}
	}
	return b.String()
}

// A ledger saved at any instant and continued with only the accounting
// since then gives every tenant exactly the accounts of one replay of the
// whole history: jobs running or pending at the save are neither counted
// twice nor lost, whether or not the older runs are listed again.
func TestResumeEqualsOneReplay(t *testing.T) {
	t0 := utc("2024-05-01T00:00:00")
	rapid.Check(t, func(rt *rapid.T) {
		truth := drawTruth(rt)
		cut := rapid.IntRange(0, 2500).Draw(rt, "cut")
		end := cut + rapid.IntRange(0, 2500).Draw(rt, "more")
		dropOld := rapid.Bool().Draw(rt, "dropOld")
		mode := rapid.SampledFrom([]ledger.Mode{ledger.QuotaShare, ledger.DemandAware}).Draw(rt, "mode")
		weights := map[string]float64{"a": 1, "b": 2, "c": 3}
		sec := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
		cfg := Config{Mode: mode, Capacity: 6, Weights: weights, From: t0, Persist: true}

		first := sacctAt(t0, truth, 0, cut, false)
		c1 := cfg
		c1.Now = sec(cut)
		rep1, err := Replay(mustJobs(rt, first), c1)
		if err != nil {
			rt.Fatalf("first run: %v\n%s", err, first)
		}
		snap, err := rep1.Ledger.MarshalBinary()
		if err != nil {
			rt.Fatal(err)
		}
		saved, err := ledger.Restore(snap)
		if err != nil {
			rt.Fatal(err)
		}
		second := sacctAt(t0, truth, cut, end, dropOld)
		c2 := cfg
		c2.Now, c2.Resume, c2.From = sec(end), saved, time.Time{}
		rep2, err := Replay(mustJobs(rt, second), c2)
		if err != nil {
			rt.Fatalf("second run: %v\n%s", err, second)
		}
		all := sacctAt(t0, truth, 0, end, false)
		c3 := cfg
		c3.Now, c3.Persist = sec(end), false
		rep3, err := Replay(mustJobs(rt, all), c3)
		if err != nil {
			rt.Fatal(err)
		}
		if !rep2.From.Equal(t0) {
			rt.Fatalf("resumed report from %v, want the first run's %v", rep2.From, t0)
		}
		for _, id := range []ledger.TenantID{"a", "b", "c"} {
			for _, w := range [][2]time.Time{{t0, sec(end)}, {sec(cut), sec(end)}} {
				got, err1 := rep2.Ledger.TenantAccount(id, w[0], w[1])
				want, err2 := rep3.Ledger.TenantAccount(id, w[0], w[1])
				if err1 != nil || err2 != nil {
					rt.Fatal(err1, err2)
				}
				if math.Abs(float64(got.Alloc-want.Alloc)) > 1e-6 || math.Abs(float64(got.FairShare-want.FairShare)) > 1e-6*math.Max(1, float64(want.FairShare)) {
					rt.Fatalf("%s over %v..%v: resumed %+v, one replay %+v\nfirst:\n%s\nsecond:\n%s", id, w[0], w[1], got, want, first, second)
				}
			}
		}
		if err := rep2.Ledger.Check(); err != nil {
			rt.Fatal(err)
		}
		for _, j := range mustJobs(rt, second) {
			if info, ok := rep2.Ledger.Job(ledger.JobID(j.ID)); ok && !info.Active {
				rt.Fatalf("finished job %s kept in the persisted ledger", j.ID)
			}
		}
	})
}

// The lag of slurmdbd: a job the saved ledger holds as running, which the
// later accounting shows ended before the save, stops at the save (billed
// to it, never counted twice); one that ended then finishes then.
func TestResumeAccountingLag(t *testing.T) {
	t0 := utc("2024-05-01T00:00:00")
	first := sacctHeader +
		"1|a|gres/gpu=2|gres/gpu=2|2024-05-01T00:00:00|2024-05-01T00:00:00|Unknown|RUNNING\n" +
		"2|a|gres/gpu=1|gres/gpu=1|2024-05-01T00:00:00|2024-05-01T00:00:00|Unknown|RUNNING\n"
	rep, err := Replay(mustJobs(t, first), Config{Mode: ledger.QuotaShare, Capacity: 4, From: t0, Now: t0.Add(100 * time.Second), Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	// Seen later: job 1 was requeued at 90 s and ran again from 150 s; job 2
	// completed at 95 s.
	second := sacctHeader +
		"1|a|gres/gpu=2|gres/gpu=2|2024-05-01T00:00:00|2024-05-01T00:00:00|2024-05-01T00:01:30|REQUEUED\n" +
		"1|a|gres/gpu=2|gres/gpu=2|2024-05-01T00:01:30|2024-05-01T00:02:30|Unknown|RUNNING\n" +
		"2|a|gres/gpu=1|gres/gpu=1|2024-05-01T00:00:00|2024-05-01T00:00:00|2024-05-01T00:01:35|COMPLETED\n"
	rep, err = Replay(mustJobs(t, second), Config{Mode: ledger.QuotaShare, Capacity: 4, Now: t0.Add(200 * time.Second), Resume: rep.Ledger, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	got := rep.Rows[0].Used
	// 3 GPUs × 100 s up to the save, then job 1 from 150 s: 2 × 50.
	if want := ledger.GPUSeconds(3*100 + 2*50); got != want {
		t.Fatalf("used %v, want %v", got, want)
	}
	if info, ok := rep.Ledger.Job("2"); ok {
		t.Fatalf("job 2 kept: %+v", info)
	}
}

func TestResumeRefusesAnotherMode(t *testing.T) {
	t0 := utc("2024-05-01T00:00:00")
	rep, err := Replay(nil, Config{Mode: ledger.QuotaShare, Capacity: 4, Weights: map[string]float64{"a": 1}, From: t0, Now: t0, Persist: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Replay(nil, Config{Mode: ledger.DemandAware, Capacity: 4, Weights: map[string]float64{"a": 1}, Now: t0, Resume: rep.Ledger})
	if !errors.Is(err, ErrState) {
		t.Fatalf("err = %v, want ErrState", err)
	}
	_, err = Replay(nil, Config{Mode: ledger.QuotaShare, Capacity: 4, Weights: map[string]float64{"a": 1}, Now: t0.Add(-time.Second), Resume: rep.Ledger})
	if err == nil {
		t.Fatal("a time before the state was accepted")
	}
}
