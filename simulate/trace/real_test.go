package trace

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/internal/testtraces"
)

// TestRealTraces reads every trace file of the shared folder and checks
// the counts its README states.
func TestRealTraces(t *testing.T) {
	dir := testtraces.Dir(t)
	tests := []struct {
		file    string
		opts    Options
		format  Format
		jobs    int
		tenants int
		first   string // submit time of the first job
		states  map[string]int
	}{
		{"venus/venus_2week_snapshot.csv", Options{}, FormatVenus, 13236, 15, "2020-09-07 00:00:19",
			map[string]int{"COMPLETED": 7709, "CANCELLED": 3266, "FAILED": 2256, "NODE_FAIL": 3, "TIMEOUT": 2}},
		{"venus/venus_sept2020_gpu_jobs.csv.gz", Options{}, FormatVenus, 23859, 15, "2020-09-01 00:02:34",
			map[string]int{"COMPLETED": 13281, "CANCELLED": 6036, "FAILED": 4531, "NODE_FAIL": 7, "TIMEOUT": 4}},
		{"philly/philly_2week_snapshot.csv", Options{}, FormatPhilly, 31903, 11, "",
			map[string]int{"COMPLETED": 26925, "CANCELLED": 2949, "FAILED": 2029}},
		{"philly/helios_philly_2017octnov_10vc.csv.gz", Options{}, FormatPhilly, 48930, 10, "2017-10-01 00:01:55",
			map[string]int{"COMPLETED": 34902, "FAILED": 7610, "CANCELLED": 6418}},
		{"philly/philly_2017octnov_11vc_merged.csv.gz", Options{}, FormatPhilly, 82880, 11, "2017-10-01 00:00:45", nil},
		{"philly/pollux_philly.csv.gz", Options{}, FormatPollux, 82247, 15, "2017-09-04 10:30:41", map[string]int{"": 82247}},
		{"philly/artifact-format/philly_1d.csv", Options{}, FormatArtifact, 2755, 9, "", nil},
		{"philly/artifact-format/philly_2d.csv", Options{}, FormatArtifact, 5365, 10, "", nil},
		{"philly/artifact-format/philly_4d.csv", Options{}, FormatArtifact, 10645, 11, "", nil},
		{"philly/artifact-format/philly_7d.csv", Options{}, FormatArtifact, 14819, 11, "", nil},
		{"philly/artifact-format/philly_14d.csv", Options{Base: time.Date(2017, 10, 10, 0, 0, 0, 0, time.UTC)}, FormatArtifact, 31903, 11, "2017-10-10 00:01:55", nil},
		{"philly/artifact-format/fixture/fake_job.csv", Options{Sort: true}, FormatArtifact, 500, 20, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := Open(filepath.Join(dir, tt.file), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Format() != tt.format {
				t.Errorf("format %v, want %v", r.Format(), tt.format)
			}
			n := 0
			tenants := map[string]bool{}
			states := map[string]int{}
			var first time.Time
			for {
				j, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					first = j.Submit
				}
				n++
				tenants[j.Tenant] = true
				states[j.State]++
			}
			if n != tt.jobs || len(tenants) != tt.tenants {
				t.Errorf("%d jobs of %d tenants, want %d of %d", n, len(tenants), tt.jobs, tt.tenants)
			}
			if tt.first != "" && first.Format(naiveLayout) != tt.first {
				t.Errorf("first submit %v, want %s", first, tt.first)
			}
			for s, want := range tt.states {
				if states[s] != want {
					t.Errorf("state %q: %d jobs, want %d", s, states[s], want)
				}
			}
		})
	}
}

// TestRealQuotas reads the quota tables of the shared folder.
func TestRealQuotas(t *testing.T) {
	dir := testtraces.Dir(t)
	for file, want := range map[string]struct {
		tenants int
		total   float64
	}{
		"venus/venus_2week_vc_quota_official.csv":     {15, 1},
		"venus/venus_2week_vc_quota.csv":              {15, 1},
		"venus/vc_config_lucid.csv":                   {15, 135},
		"philly/philly_2week_vc_quota.csv":            {11, 1},
		"philly/philly_vc_nodes.csv":                  {11, 352},
		"philly/artifact-format/philly_14d_share.csv": {11, 0},
	} {
		t.Run(file, func(t *testing.T) {
			q, err := ReadQuotas(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for _, v := range q {
				sum += v
			}
			if len(q) != want.tenants || (want.total != 0 && (sum < want.total*0.999 || sum > want.total*1.001)) {
				t.Errorf("%d tenants, total %v; want %d, %v", len(q), sum, want.tenants, want.total)
			}
		})
	}
	// The requested-GPU rule reproduces the derived Philly table's shares.
	r, err := Open(filepath.Join(dir, "philly/philly_2week_snapshot.csv"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	req, err := RequestedQuotas(r)
	if err != nil {
		t.Fatal(err)
	}
	if req["0e4a51"] != 1171 || req["103959"] != 817 {
		t.Errorf("requested GPUs 0e4a51 %v, 103959 %v; want 1171, 817 (philly_2week_vc_quota.csv)", req["0e4a51"], req["103959"])
	}
}

// BenchmarkParsePhillySnapshot parses the Philly two-week snapshot (31,903
// jobs, about 3 MB): the cost of merely reading the trace that a full
// simulation is compared against. O(rows).
func BenchmarkParsePhillySnapshot(b *testing.B) {
	path := filepath.Join(testtraces.Dir(b), "philly/philly_2week_snapshot.csv")
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		r, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		r.Close()
		if n != 31903 {
			b.Fatalf("%d jobs", n)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkSynthetic generates the default synthetic workload (5,200 jobs).
// O(jobs · log table).
func BenchmarkSynthetic(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadAll(Synthetic(DefaultSynthetic())); err != nil {
			b.Fatal(err)
		}
	}
}
