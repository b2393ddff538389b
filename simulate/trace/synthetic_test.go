package trace

import (
	"errors"
	"io"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/internal/testtraces"
)

// venusJobShare and venusGPUTimeShare are each VC's share of the Venus
// two-week snapshot's jobs and GPU·time, in percent, in the order of
// venusTenants (measured from venus_2week_snapshot.csv).
var (
	venusJobShare     = [...]float64{2.28, 26.19, 9.33, 8.96, 13.26, 1.00, 2.09, 10.37, 9.31, 2.13, 0.20, 3.53, 0.59, 9.40, 1.36}
	venusGPUTimeShare = [...]float64{5.23, 6.89, 5.15, 25.28, 8.22, 2.66, 5.80, 3.70, 8.60, 6.87, 0.63, 1.65, 2.76, 15.05, 1.51}
)

// venusDemandShare is the snapshot's share of jobs by GPU demand, in
// percent: 1, 2, 3–4, 5–8, 9–32, more than 32 GPUs.
var venusDemandShare = [...]float64{56.76, 4.84, 6.04, 19.40, 8.35, 4.60}

func demandBucket(g int) int {
	switch {
	case g == 1:
		return 0
	case g == 2:
		return 1
	case g <= 4:
		return 2
	case g <= 8:
		return 3
	case g <= 32:
		return 4
	}
	return 5
}

func TestSyntheticCalibration(t *testing.T) {
	cfg := DefaultSynthetic()
	cfg.Jobs = 50000
	cfg.Span = 50 * 24 * time.Hour
	src := Synthetic(cfg)
	var (
		n       int
		under   [5]int
		demand  [6]int
		jobs    = map[string]int{}
		gpuTime = map[string]float64{}
		total   float64
		states  = map[string]int{}
		hours   [24]int
		prev    time.Time
	)
	knots := []time.Duration{10 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour, 6 * 24 * time.Hour}
	for {
		j, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if j.Submit.Before(prev) || j.Submit.Before(cfg.Start) || !j.Submit.Before(cfg.Start.Add(cfg.Span)) {
			t.Fatalf("job %s submitted at %v, previous %v", j.ID, j.Submit, prev)
		}
		prev = j.Submit
		if j.GPUs < 1 || j.Duration < time.Second {
			t.Fatalf("job %+v: bad demand or runtime", j)
		}
		for i, k := range knots {
			if j.Duration < k {
				under[i]++
			}
		}
		demand[demandBucket(j.GPUs)]++
		jobs[j.Tenant]++
		gt := float64(j.GPUs) * j.Duration.Seconds()
		gpuTime[j.Tenant] += gt
		total += gt
		states[j.State]++
		hours[j.Submit.Hour()]++
	}
	if n != cfg.Jobs {
		t.Fatalf("generated %d jobs, want %d", n, cfg.Jobs)
	}
	pct := func(k int) float64 { return 100 * float64(k) / float64(n) }
	for i, want := range []float64{67.3, 83.3, 90.6, 96.2, 99.6} {
		got := pct(under[i])
		t.Logf("runtime < %v: %.2f %% (paper %.1f %%)", knots[i], got, want)
		if math.Abs(got-want) > 1.5 {
			t.Errorf("runtime < %v: %.2f %%, want %.1f ± 1.5", knots[i], got, want)
		}
	}
	for i, want := range venusDemandShare {
		got := pct(demand[i])
		t.Logf("demand bucket %d: %.2f %% (Venus %.2f %%)", i, got, want)
		if math.Abs(got-want) > 3 {
			t.Errorf("demand bucket %d: %.2f %%, want %.2f ± 3", i, got, want)
		}
	}
	for i, tenant := range venusTenants {
		gotJobs := pct(jobs[tenant])
		gotGT := 100 * gpuTime[tenant] / total
		t.Logf("%s: jobs %.2f %% (Venus %.2f), GPU·time %.2f %% (Venus %.2f)", tenant, gotJobs, venusJobShare[i], gotGT, venusGPUTimeShare[i])
		if math.Abs(gotJobs-venusJobShare[i]) > 2 {
			t.Errorf("%s: job share %.2f %%, want %.2f ± 2", tenant, gotJobs, venusJobShare[i])
		}
		// GPU·time is carried by a few multi-day, many-GPU jobs, so a
		// tenant's share is noisy (and runtimes are log-uniform inside a
		// class, not Venus's own): ± 5 percentage points.
		if math.Abs(gotGT-venusGPUTimeShare[i]) > 5 {
			t.Errorf("%s: GPU·time share %.2f %%, want %.2f ± 5", tenant, gotGT, venusGPUTimeShare[i])
		}
	}
	// The skew itself: as in Venus, vcJsw and vcvGl hold the most GPU·time
	// while vcEwI submits the most jobs.
	top := func(m map[string]float64) (a, b string) {
		for k, v := range m {
			switch {
			case a == "" || v > m[a]:
				a, b = k, a
			case b == "" || v > m[b]:
				b = k
			}
		}
		return a, b
	}
	if a, b := top(gpuTime); a != "vcJsw" || b != "vcvGl" {
		t.Errorf("largest GPU·time tenants %s, %s; want vcJsw, vcvGl", a, b)
	}
	jobsF := map[string]float64{}
	for k, v := range jobs {
		jobsF[k] = float64(v)
	}
	if a, _ := top(jobsF); a != "vcEwI" {
		t.Errorf("tenant with most jobs %s, want vcEwI", a)
	}
	// Diurnal: the Venus peak (15:00–17:00) and trough (05:00–07:00), and a
	// peak-to-trough ratio above 4 (Venus: 7.3).
	peak, trough := 0, 0
	for h := range hours {
		if hours[h] > hours[peak] {
			peak = h
		}
		if hours[h] < hours[trough] {
			trough = h
		}
	}
	if peak < 15 || peak > 17 || trough < 5 || trough > 7 || float64(hours[peak]) < 4*float64(hours[trough]) {
		t.Errorf("diurnal profile: peak %02d:00 (%d jobs), trough %02d:00 (%d jobs)", peak, hours[peak], trough, hours[trough])
	}
	// Final states: Venus has 58.2 % COMPLETED, 17.0 % FAILED, 24.7 % CANCELLED.
	for s, want := range map[string]float64{"COMPLETED": 58.2, "FAILED": 17.0, "CANCELLED": 24.7} {
		if got := pct(states[s]); math.Abs(got-want) > 3 {
			t.Errorf("state %s: %.2f %%, want %.1f ± 3", s, got, want)
		}
	}
	t.Logf("states: %v", states)
	t.Logf("hours: %v", hours)
}

func TestSyntheticDeterministic(t *testing.T) {
	cfg := DefaultSynthetic()
	a, err := ReadAll(Synthetic(cfg))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ReadAll(Synthetic(cfg))
	if len(a) != cfg.Jobs || len(a) != len(b) {
		t.Fatalf("lengths %d, %d; want %d", len(a), len(b), cfg.Jobs)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("job %d differs: %+v vs %+v", i, a[i], b[i])
		}
	}
	cfg.Seed++
	c, _ := ReadAll(Synthetic(cfg))
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same == len(a) {
		t.Fatal("another seed gave the same workload")
	}
}

func TestSyntheticInvalidConfig(t *testing.T) {
	for name, cfg := range map[string]SyntheticConfig{
		"negative job count":       {Jobs: -1, Span: time.Hour},
		"empty span":               {Jobs: 10},
		"more jobs than the bound": {Jobs: MaxSyntheticJobs + 1, Span: time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Synthetic(cfg).Next()
			if !errors.Is(err, ErrSyntheticConfig) {
				t.Fatalf("Next() error = %v, want ErrSyntheticConfig", err)
			}
			if v := cfg.Validate(); v == nil || v.Error() != err.Error() {
				t.Fatalf("Validate() = %v, Next's error %v", v, err)
			}
		})
	}
	if _, err := Synthetic(SyntheticConfig{Span: time.Hour}).Next(); err != io.EOF {
		t.Fatalf("zero jobs: %v, want io.EOF", err)
	}
	if err := DefaultSynthetic().Validate(); err != nil {
		t.Fatalf("DefaultSynthetic().Validate() = %v", err)
	}
}

// offeredLoad is the GPU·time the jobs of src can run inside their arrival
// window [from, to), Σ GPUs × min(runtime, to − submit), over what gpus
// GPUs deliver in it; from and to are the first and last submission
// unless given (non-zero).
func offeredLoad(t *testing.T, src Source, gpus int, from, to time.Time) float64 {
	t.Helper()
	jobs, err := ReadAll(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) == 0 {
		t.Fatal("no jobs")
	}
	first, last := jobs[0].Submit, jobs[0].Submit
	for _, j := range jobs {
		first, last = minTime(first, j.Submit), maxTime(last, j.Submit)
	}
	if from.IsZero() {
		from, to = first, last
	}
	var inside float64
	for _, j := range jobs {
		inside += float64(j.GPUs) * min(j.Duration, to.Sub(j.Submit)).Seconds()
	}
	return inside / (float64(gpus) * to.Sub(from).Seconds())
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// The default workload keeps the reference cluster of 800 GPUs busy as
// the Venus snapshot keeps its 800 GPUs: an offered load of about 1.1 over
// the arrival window, so that queues form and the policies differ
// (DefaultSynthetic's comment).
func TestDefaultSyntheticOfferedLoad(t *testing.T) {
	cfg := DefaultSynthetic()
	got := offeredLoad(t, Synthetic(cfg), 800, cfg.Start, cfg.Start.Add(cfg.Span))
	t.Logf("default synthetic workload on 800 GPUs: offered load %.3f", got)
	if got < 1.05 || got > 1.15 {
		t.Errorf("offered load %.3f on 800 GPUs, want 1.1 ± 0.05", got)
	}
}

// The measure the default is calibrated with gives the figure its comment
// quotes for Venus on 800 GPUs.
func TestVenusOfferedLoad(t *testing.T) {
	r, err := Open(filepath.Join(testtraces.Dir(t), "venus/venus_2week_snapshot.csv"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := offeredLoad(t, r, 800, time.Time{}, time.Time{})
	t.Logf("Venus two-week snapshot on 800 GPUs: offered load %.3f", got)
	if math.Abs(got-1.08) > 0.005 {
		t.Errorf("offered load %.3f, want 1.08", got)
	}
}
