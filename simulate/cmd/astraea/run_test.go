package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/metrics"
	"github.com/astraea-sched/astraea/simulate/trace"
)

func runArgs(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(args, &out, &errOut); err != nil {
		t.Fatalf("run %v: %v (stderr %q)", args, err, errOut.String())
	}
	if errOut.Len() != 0 {
		t.Errorf("run %v wrote to stderr (not a terminal): %q", args, errOut.String())
	}
	return out.String()
}

func TestRunDefaultPrintsTheSummary(t *testing.T) {
	out := runArgs(t)
	for _, want := range []string{
		"workload: synthetic", "100 nodes × 8 GPUs = 800 GPUs", "quotas (", "vcJsw",
		"astraea", "sharing-loss jobs", "tenant loss intervals 1h", "avg JCT s",
		"Jain's index", "overhead, direct", "profile paper: -admit=tick",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestRunJSONIsDeterministic(t *testing.T) {
	args := []string{"-json", "-jobs", "800", "-policy", "astraea,astraea-single"}
	a := runArgs(t, args...)
	b := runArgs(t, args...)
	if a != b {
		t.Fatal("two runs with the same input and seed differ")
	}
	var rep report
	if err := json.Unmarshal([]byte(a), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 2 || rep.Runs[0].Summary.Policy != "astraea" || rep.Runs[1].Summary.Policy != "astraea-single" {
		t.Fatalf("runs %+v", rep.Runs)
	}
	for _, r := range rep.Runs {
		if r.Summary.Finished != 800 || r.Stats.Jobs != 800 {
			t.Errorf("%s finished %d jobs, want 800", r.Summary.Policy, r.Summary.Finished)
		}
	}
	if c := runArgs(t, "-json", "-jobs", "800", "-policy", "astraea", "-seed", "2"); c == a {
		t.Error("another seed gives the same output")
	}
}

// TestRunParallelOutputIsTheSame: policies simulated at once give the
// output (JSON, CSVs and figures) that they give one after the other, on
// the synthetic workload and on a trace file read again by every run; and
// a policy that fails is reported, as the first in the list that does.
func TestRunParallelOutputIsTheSame(t *testing.T) {
	dir := t.TempDir()
	rows := []string{}
	for i := range 60 {
		rows = append(rows, fmt.Sprintf("%c,j%d,%d,2020-01-01 00:%02d:00,%d,COMPLETED", 'a'+i%3, i, 1+i%8, i%60, 600+97*i))
	}
	tr := writeTrace(t, dir, rows...)
	for _, base := range [][]string{
		{"-jobs", "400"},
		{"-trace", tr, "-nodes", "4", "-quota", filepath.Join(dir, "q.csv")},
	} {
		if err := os.WriteFile(filepath.Join(dir, "q.csv"), []byte("tenant,weight\na,1\nb,2\nc,3\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := func(par string) (string, map[string]string) {
			o := filepath.Join(dir, "out"+par)
			js := runArgs(t, append(slices.Clone(base), "-json", "-policy", "all", "-parallel", par, "-out", o)...)
			files := map[string]string{}
			es, err := os.ReadDir(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				b, err := os.ReadFile(filepath.Join(o, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				files[e.Name()] = string(b)
			}
			return js, files
		}
		js1, files1 := out("1")
		for _, par := range []string{"3", "0"} {
			js, files := out(par)
			if js != js1 {
				t.Fatalf("%v: -parallel %s prints other JSON than -parallel 1", base, par)
			}
			if !maps.Equal(files, files1) {
				t.Fatalf("%v: -parallel %s writes other files than -parallel 1", base, par)
			}
		}
	}
}

// TestEachStopsAfterAFailure: each makes every call once, par at a time;
// after a call fails no call starts, so one at a time the calls end with
// the failed one. (In parallel, calls started while the failed one ran
// still run: their number is not tested.)
func TestEachStopsAfterAFailure(t *testing.T) {
	for _, par := range []int{1, 2, 5} {
		for fail := range 9 { // 8: none fails
			var mu sync.Mutex
			ran := map[int]int{}
			each(8, par, func(i int) error {
				mu.Lock()
				ran[i]++
				mu.Unlock()
				if i == fail {
					return errors.New("failed")
				}
				return nil
			})
			for i, k := range ran {
				if k != 1 {
					t.Fatalf("par %d: call %d made %d times", par, i, k)
				}
			}
			switch {
			case fail == 8 && len(ran) != 8:
				t.Fatalf("par %d, no failure: %d calls made, want 8", par, len(ran))
			case fail < 8 && ran[fail] != 1:
				t.Fatalf("par %d: the failing call %d was not made", par, fail)
			case fail < 8 && par == 1 && len(ran) != fail+1:
				t.Fatalf("par 1, call %d fails: %d calls made, want %d", fail, len(ran), fail+1)
			}
		}
	}
	if got := parallelism(0, 3); got < 1 || got > 3 {
		t.Fatalf("parallelism(0, 3) = %d", got)
	}
	if got := parallelism(8, 3); got != 3 {
		t.Fatalf("parallelism(8, 3) = %d, want 3", got)
	}
	if got := parallelism(-1, 0); got != 1 {
		t.Fatalf("parallelism(-1, 0) = %d, want 1", got)
	}
}

// writeTrace writes a generic CSV trace of the given rows (after the
// header) to dir and returns its path.
func writeTrace(t *testing.T, dir string, rows ...string) string {
	t.Helper()
	tr := filepath.Join(dir, "jobs.csv")
	csv := "tenant,job,gpus,submit,duration,state\n" + strings.Join(rows, "\n") + "\n"
	if err := os.WriteFile(tr, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestRunTraceQuotaAndOut(t *testing.T) {
	dir := t.TempDir()
	tr := writeTrace(t, dir,
		"a,j1,4,2020-01-01 00:00:00,600,COMPLETED",
		"b,j2,8,2020-01-01 00:01:00,1200,FAILED",
		"a,j3,2,2020-01-01 00:02:00,60,",
		"b,j4,64,2020-01-01 00:03:00,60,COMPLETED")
	text := runArgs(t, "-trace", tr, "-quota", "equal", "-nodes", "2", "-policy", "astraea,fifo")
	for _, want := range []string{"excluded: 1 jobs; larger than the cluster: 1", "quotas (equal)", "fifo"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	out := filepath.Join(dir, "out")
	runArgs(t, "-jobs", "300", "-out", out, "-policy", "astraea,fifo")
	for _, f := range []string{"jobs.csv", "tenants.csv", "utilization.csv",
		metrics.RhoJobCDFSVG, metrics.SlowdownCDFSVG, metrics.TenantRhoSVG, metrics.UtilizationSVG} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("-out did not write %s: %v", f, err)
		}
	}
	// A trace with a single job gives degenerate figures (one slowdown
	// value on a log axis); they are written without error.
	one := filepath.Join(dir, "one.csv")
	if err := os.WriteFile(one, []byte("tenant,job,gpus,submit,duration,state\na,j1,1,2020-01-01 00:00:00,60,COMPLETED\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runArgs(t, "-trace", one, "-quota", "equal", "-nodes", "1", "-out", filepath.Join(dir, "one"))
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-policy", "nosuch"},
		{"-policy", "astraea,astraea"},
		{"-metrics", "eq9"},
		{"-admit", "arrival"},
		{"-reserve-after", "0s"},
		{"-nodes", "0"},
		{"-trace", "does-not-exist.csv"},
		{"-bogus"},
		{"extra"},
	} {
		var out, errOut bytes.Buffer
		err := run(args, &out, &errOut)
		if err == nil {
			t.Errorf("run %v succeeded", args)
		}
		if errors.Is(err, errUsage) && errOut.Len() == 0 {
			t.Errorf("run %v: usage error without a message", args)
		}
	}
}

// A bad configuration is reported before any run, as itself: not as the
// failure of the first run, the zero-overhead twin.
func TestRunChecksConfigBeforeRunning(t *testing.T) {
	for _, args := range [][]string{
		{"-nodes", "0"},
		{"-lease", "20s", "-coldstart", "30s"},
		{"-lease", "5s", "-checkpoint", "5s"},
		{"-jobs", "-1"},
	} {
		var out, errOut bytes.Buffer
		err := run(append([]string{"-jobs", "50", "-quiet"}, args...), &out, &errOut)
		if !errors.Is(err, simulate.ErrConfig) && !errors.Is(err, trace.ErrSyntheticConfig) {
			t.Fatalf("run %v: error %v, want ErrConfig or ErrSyntheticConfig", args, err)
		}
		if strings.Contains(err.Error(), "no overhead") || out.Len() > 0 {
			t.Errorf("run %v: error %q and output %q: a run was made", args, err, out.String())
		}
	}
}

func TestRunAdmitAtTick(t *testing.T) {
	// Under a given schedule, admitting jobs at the tick can only raise a
	// job's ρ (it is owed nothing for the wait before the tick). ASTRAEA
	// reads those ρ, so the schedules differ a little, but on this
	// deterministic workload the share of sharing-loss jobs falls. The
	// JSON and the text name the rule.
	args := []string{"-json", "-jobs", "400", "-overhead=false", "-admit", "submit"}
	var sub, tick report
	if err := json.Unmarshal([]byte(runArgs(t, args...)), &sub); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(runArgs(t, append(args[:len(args)-2], "-admit", "tick")...)), &tick); err != nil {
		t.Fatal(err)
	}
	if sub.Admit != "submit" || tick.Admit != "tick" {
		t.Fatalf("admit fields %q and %q, want \"submit\" and \"tick\"", sub.Admit, tick.Admit)
	}
	s, k := sub.Runs[0].Summary, tick.Runs[0].Summary
	if !(k.SharingLossJobs < s.SharingLossJobs) {
		t.Errorf("sharing-loss jobs %v admitted at the tick, %v at submission: want fewer", k.SharingLossJobs, s.SharingLossJobs)
	}
	if text := runArgs(t, "-jobs", "50", "-overhead=false", "-admit", "tick"); !strings.Contains(text, "-admit=tick") {
		t.Errorf("text output does not state the admission rule:\n%s", text)
	}
}

func TestRunReserveAfterTunesAstraeaReserve(t *testing.T) {
	// On a small cluster the 2,000 synthetic jobs queue; holding nodes
	// after ten minutes instead of the default hour changes the schedule.
	// The JSON records the wait when astraea-reserve runs, and only then.
	args := []string{"-json", "-jobs", "2000", "-nodes", "20", "-overhead=false"}
	var def, short, plain report
	for _, r := range []struct {
		rep  *report
		args []string
	}{
		{&def, append(slices.Clone(args), "-policy", "astraea-reserve")},
		{&short, append(slices.Clone(args), "-policy", "astraea-reserve", "-reserve-after", "10m")},
		{&plain, append(slices.Clone(args), "-policy", "astraea", "-reserve-after", "10m")},
	} {
		if err := json.Unmarshal([]byte(runArgs(t, r.args...)), r.rep); err != nil {
			t.Fatal(err)
		}
	}
	if def.Reserve != 3600 || short.Reserve != 600 || plain.Reserve != 0 {
		t.Fatalf("reserve_after_seconds %v, %v, %v; want 3600, 600 and none", def.Reserve, short.Reserve, plain.Reserve)
	}
	if d, s := def.Runs[0].Summary, short.Runs[0].Summary; d.JCT.Mean == s.JCT.Mean && d.Utilization == s.Utilization {
		t.Errorf("-reserve-after 10m changed nothing: avg JCT %v, utilization %v", s.JCT.Mean, s.Utilization)
	}
}

func TestRunIterationReportsLostWork(t *testing.T) {
	// A small cluster preempts often; with 7-minute iterations every
	// preemption loses its partial iteration.
	args := []string{"-json", "-jobs", "300", "-nodes", "3", "-overhead=false"}
	var with, without report
	if err := json.Unmarshal([]byte(runArgs(t, append(args, "-iteration", "7m")...)), &with); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(runArgs(t, args...)), &without); err != nil {
		t.Fatal(err)
	}
	w, wo := with.Runs[0].Stats, without.Runs[0].Stats
	if with.Iteration != 420 || w.Preemptions == 0 || !(w.LostGPUSeconds > 0) || w.LostGPUSeconds > w.OverheadGPUSeconds {
		t.Errorf("-iteration 7m: iteration %v s, stats %+v", with.Iteration, w)
	}
	if wo.LostGPUSeconds != 0 {
		t.Errorf("continuous progress lost %v GPU·s", wo.LostGPUSeconds)
	}
	text := runArgs(t, "-jobs", "300", "-nodes", "3", "-overhead=false", "-iteration", "7m")
	for _, want := range []string{"iteration 7m0s", "overhead astraea: ", "GPU·h of it lost work"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

// TestWorkloadReplaysTheQuotaPass: a trace read for its quotas is kept and
// replayed by the runs, which see exactly the jobs (and skipped rows) that
// reading the file again gives; a trace larger than the bound is read
// again instead.
func TestWorkloadReplaysTheQuotaPass(t *testing.T) {
	tr := writeTrace(t, t.TempDir(),
		"a,j1,4,2020-01-01 00:00:00,600,COMPLETED",
		"b,j2,x,2020-01-01 00:00:30,600,COMPLETED",
		"b,j3,8,2020-01-01 00:01:00,1200,FAILED",
		"a,j4,2,2020-01-01 00:02:00,60,")
	r, err := trace.Open(tr, trace.Options{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	wantSkipped := r.Skipped()
	r.Close()
	for _, c := range []struct {
		name string
		keep int
		kept bool
	}{
		{"a trace within the bound is kept", keptJobsBytes, true},
		{"a trace past the bound is read again", 200, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := options{trace: tr, quota: "requested", lenient: true}
			w, err := newWorkload(o)
			if err != nil {
				t.Fatal(err)
			}
			w.keep = c.keep
			if _, _, err := quotas(o, w); err != nil {
				t.Fatal(err)
			}
			if (w.kept != nil) != c.kept {
				t.Fatalf("kept %d jobs, want kept %v", len(w.kept), c.kept)
			}
			// Two runs at once, as -parallel makes them.
			srcs := make([]trace.Source, 2)
			for run := range srcs {
				if srcs[run], err = w.open(); err != nil {
					t.Fatal(err)
				}
			}
			for run, src := range srcs {
				got, err := trace.ReadAll(src)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("run %d reads %+v, want %+v", run, got, want)
				}
				w.release(src)
			}
			if !reflect.DeepEqual(w.skipped, wantSkipped) {
				t.Fatalf("skipped %+v, want %+v", w.skipped, wantSkipped)
			}
		})
	}
}

// The default workload loads the cluster enough for the policies to
// differ: FIFO's head-of-line blocking leaves far more jobs short of their
// share than ASTRAEA does (on the earlier, lighter default both kept up).
func TestDefaultWorkloadSeparatesThePolicies(t *testing.T) {
	var rep report
	if err := json.Unmarshal([]byte(runArgs(t, "-json", "-policy", "astraea,fifo", "-overhead=false")), &rep); err != nil {
		t.Fatal(err)
	}
	astraea, fifo := rep.Runs[0].Summary, rep.Runs[1].Summary
	t.Logf("sharing-loss jobs: astraea %.4f, fifo %.4f; avg queueing: %.0f s, %.0f s",
		astraea.SharingLossJobs, fifo.SharingLossJobs, astraea.Queueing.Mean, fifo.Queueing.Mean)
	if fifo.SharingLossJobs < astraea.SharingLossJobs+0.2 {
		t.Errorf("sharing-loss jobs: astraea %.4f, fifo %.4f; want fifo at least 20 points worse",
			astraea.SharingLossJobs, fifo.SharingLossJobs)
	}
	if fifo.Queueing.Mean < 2*astraea.Queueing.Mean {
		t.Errorf("avg queueing: astraea %.0f s, fifo %.0f s; want fifo at least twice as long", astraea.Queueing.Mean, fifo.Queueing.Mean)
	}
}

// TestSpreadSlowdownFlag: -spread-slowdown reaches the runs, which report
// what it cost, and is recorded among the conventions as given on the
// command line; at 1 it costs nothing.
func TestSpreadSlowdownFlag(t *testing.T) {
	base := []string{"-jobs", "300", "-nodes", "6", "-placement", "spread", "-policy", "astraea"}
	for _, c := range []struct {
		s      string
		slowed bool
	}{{"1", false}, {"0.5", true}} {
		var rep report
		if err := json.Unmarshal([]byte(runArgs(t, append([]string{"-json", "-spread-slowdown", c.s}, base...)...)), &rep); err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(rep.Conventions, func(cv convention) bool { return cv.Flag == "spread-slowdown" })
		if i < 0 || rep.Conventions[i].Value != c.s || !rep.Conventions[i].Overridden {
			t.Errorf("-spread-slowdown %s: conventions %+v", c.s, rep.Conventions)
		}
		st, ov := rep.Runs[0].Stats, rep.Runs[0].Summary.Overhead
		if (st.SpreadGPUSeconds > 0) != c.slowed || (ov.Spread > 0) != c.slowed || st.SpreadGPUSeconds > st.OverheadGPUSeconds {
			t.Errorf("-spread-slowdown %s: spread %v GPU·s of %v overhead, %v of Σ JCT", c.s, st.SpreadGPUSeconds, st.OverheadGPUSeconds, ov.Spread)
		}
	}
	out := runArgs(t, append([]string{"-spread-slowdown", "0.5"}, base...)...)
	for _, want := range []string{"spread slowdown (of Σ JCT)", "GPU·h spread slowdown"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}
