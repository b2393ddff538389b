package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestNewGrid(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  map[string][]string
		want []string // keys of the points, in grid order
		err  error
	}{
		{"a duration is kept in the flag's own form, so two spellings are one value",
			map[string][]string{"lease": {"1200s", "900s"}}, []string{"-lease=20m0s", "-lease=15m0s"}, nil},
		{"two spellings of one value are refused",
			map[string][]string{"lease": {"1200s", "20m"}}, nil, errGrid},
		{"the last dimension by flag name varies fastest",
			map[string][]string{"policy": {"astraea", "fifo"}, "nodes": {"10", "20"}},
			[]string{"-nodes=10 -policy=astraea", "-nodes=10 -policy=fifo", "-nodes=20 -policy=astraea", "-nodes=20 -policy=fifo"}, nil},
		{"policy all is every policy of -policy all, one point each",
			map[string][]string{"policy": {"all"}}, nil, nil},
		{"a policy listed twice is refused",
			map[string][]string{"policy": {"fifo", "all"}}, nil, errGrid},
		{"an unknown policy is refused",
			map[string][]string{"policy": {"nosuch"}}, nil, errGrid},
		{"an unknown flag is refused",
			map[string][]string{"nosuch": {"1"}}, nil, errGrid},
		{"a value the flag refuses is refused",
			map[string][]string{"nodes": {"many"}}, nil, errGrid},
		{"a flag the sweep sets itself is refused",
			map[string][]string{"out": {"x"}}, nil, errGrid},
		{"a dimension without values is refused",
			map[string][]string{"nodes": {}}, nil, errGrid},
		{"a bool flag takes true and false",
			map[string][]string{"overhead": {"false", "true"}}, []string{"-overhead=false", "-overhead=true"}, nil},
		{"the spread slowdown is a dimension like any flag",
			map[string][]string{"spread-slowdown": {"1", "0.8"}}, []string{"-spread-slowdown=1", "-spread-slowdown=0.8"}, nil},
		{"an empty grid is one point, the command's defaults",
			map[string][]string{}, []string{""}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := newGrid(tc.raw)
			if !errors.Is(err, tc.err) {
				t.Fatalf("newGrid: %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			var keys []string
			for i := range g.size() {
				keys = append(keys, g.point(i).key())
			}
			if tc.want == nil {
				all, _ := selectPolicies("all", knownPolicies())
				if len(keys) != len(all) {
					t.Fatalf("points %v, want one for each of %v", keys, all)
				}
				return
			}
			if !slices.Equal(keys, tc.want) {
				t.Fatalf("points %q, want %q", keys, tc.want)
			}
		})
	}
}

func TestSplitList(t *testing.T) {
	for _, tc := range []struct {
		name, list string
		want       []string
		err        bool
	}{
		{"items are trimmed and blanks dropped", " 1, 2 ,,3 ", []string{"1", "2", "3"}, false},
		{"an integer range includes both ends", "60..100/20", []string{"60", "80", "100"}, false},
		{"a range stops at the last step below its end", "1..4/2", []string{"1", "3"}, false},
		{"a duration range", "5m..15m/5m", []string{"5m0s", "10m0s", "15m0s"}, false},
		{"a range mixes with single values", "1,5..6/1", []string{"1", "5", "6"}, false},
		{"a range without a step is refused", "1..4", nil, true},
		{"a range with a zero step is refused", "1..4/0", nil, true},
		{"a range that falls is refused", "4..1/1", nil, true},
		{"dots between words are no range", "../traces/a.csv, a..b/c", []string{"../traces/a.csv", "a..b/c"}, false},
		{"a huge range is refused", "0..100000000/1", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := splitList("x", tc.list)
			if (err != nil) != tc.err || err != nil && !errors.Is(err, errGrid) {
				t.Fatalf("splitList(%q): %v, want error %v (errGrid)", tc.list, err, tc.err)
			}
			if !tc.err && !slices.Equal(got, tc.want) {
				t.Fatalf("splitList(%q) = %q, want %q", tc.list, got, tc.want)
			}
		})
	}
}

func TestAFlagGivenTwiceListsBoth(t *testing.T) {
	var out bytes.Buffer
	if err := sweep([]string{"-nodes", "10", "-nodes", "20,30", "-list", "-out", t.TempDir()}, &out, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	want := "todo\t-nodes=10\ntodo\t-nodes=20\ntodo\t-nodes=30\n"
	if out.String() != want {
		t.Fatalf("listed\n%s\nwant\n%s", out.String(), want)
	}
}

func TestParseGrid(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       map[string][]string
		errLine    string // "" for success
	}{
		{"lines with and without dashes, comments and blank lines",
			"# lease sweep\n-lease = 600s, 900s\n\nnodes=140 # the cluster\n",
			map[string][]string{"lease": {"600s", "900s"}, "nodes": {"140"}}, ""},
		{"a line without = names its line", "lease = 1s\nnodes 140\n", nil, "g:2"},
		{"a flag given twice names its line", "nodes = 1\nnodes = 2\n", nil, "g:2"},
		{"a bad range names its line", "\nnodes = 1..2\n", nil, "g:2"},
		{"a flag name with a space is refused", "node s = 1\n", nil, "g:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseGrid(strings.NewReader(tc.text), "g")
			if tc.errLine != "" {
				if !errors.Is(err, errGrid) || !strings.Contains(err.Error(), tc.errLine+":") {
					t.Fatalf("parseGrid: %v, want errGrid at %s", err, tc.errLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if !slices.Equal(got[k], v) {
					t.Fatalf("%s = %q, want %q", k, got[k], v)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		name, shard string
		env         map[string]string
		want        shard
		err         bool
	}{
		{"no shard is the whole grid", "", nil, shard{0, 1}, false},
		{"an explicit shard", "2/5", nil, shard{2, 5}, false},
		{"an index past the count is refused", "5/5", nil, shard{}, true},
		{"a count of zero is refused", "0/0", nil, shard{}, true},
		{"a shard without a count is refused", "3", nil, shard{}, true},
		{"a Slurm array task counts from the array's first index",
			"env/4", map[string]string{"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "4"}, shard{2, 4}, false},
		{"a Slurm array with a step",
			"env/3", map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_ARRAY_TASK_COUNT": "3"}, shard{2, 3}, false},
		{"a Slurm array of another size is refused",
			"env/4", map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "8"}, shard{}, true},
		{"a Kubernetes Indexed Job's index",
			"env/4", map[string]string{"JOB_COMPLETION_INDEX": "3"}, shard{3, 4}, false},
		{"an index past the count from the environment is refused",
			"env/4", map[string]string{"JOB_COMPLETION_INDEX": "4"}, shard{}, true},
		{"env without an index in the environment is refused", "env/2", nil, shard{}, true},
		{"an index that is no number is refused", "env/2", map[string]string{"JOB_COMPLETION_INDEX": "x"}, shard{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseShard(tc.shard, func(k string) string { return tc.env[k] })
			if (err != nil) != tc.err || err != nil && !errors.Is(err, errShard) {
				t.Fatalf("parseShard(%q): %v, want error %v (errShard)", tc.shard, err, tc.err)
			}
			if got != tc.want {
				t.Fatalf("parseShard(%q) = %v, want %v", tc.shard, got, tc.want)
			}
		})
	}
}

// TestShardsPartitionTheGrid checks that the n shards of any grid hold
// every point exactly once, and that keys identify points.
func TestShardsPartitionTheGrid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := map[string][]string{}
		for _, f := range rapid.SliceOfDistinct(rapid.SampledFrom([]string{"nodes", "gpus-per-node", "seed", "jobs"}), rapid.ID[string]).Draw(t, "flags") {
			vals := rapid.SliceOfNDistinct(rapid.IntRange(1, 50), 1, 4, rapid.ID[int]).Draw(t, f)
			for _, v := range vals {
				raw[f] = append(raw[f], strconv.Itoa(v))
			}
		}
		g, err := newGrid(raw)
		if err != nil {
			t.Fatal(err)
		}
		n := rapid.IntRange(1, 7).Draw(t, "shards")
		seen := map[string]int{}
		for i := range n {
			for k := range g.size() {
				if p := g.point(k); (shard{i, n}).has(p) {
					seen[p.key()]++
				}
			}
		}
		if len(seen) != g.size() {
			t.Fatalf("%d distinct keys for %d points", len(seen), g.size())
		}
		for k, c := range seen {
			if c != 1 {
				t.Fatalf("point %s in %d shards", k, c)
			}
		}
	})
}

// sweepArgs is a small grid of the synthetic workload: 2 leases × 2
// policies × 2 seeds.
var sweepArgs = []string{"-jobs", "150", "-overhead=false", "-lease", "10m,20m", "-policy", "astraea,tiresias-l", "-seed", "1,2", "-quiet"}

func runSweep(t *testing.T, args ...string) {
	t.Helper()
	var stderr bytes.Buffer
	if err := sweep(args, io.Discard, &stderr, nil); err != nil {
		t.Fatalf("sweep %q: %v\n%s", args, err, stderr.String())
	}
}

func mergeCSV(t *testing.T, dirs ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "merged.csv")
	if err := sweep(append([]string{"merge", "-o", out, "-figures=false"}, dirs...), io.Discard, io.Discard, nil); err != nil {
		t.Fatalf("merge: %v", err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestShardedSweepMergesToTheSingleRun(t *testing.T) {
	whole := t.TempDir()
	runSweep(t, append(sweepArgs, "-out", whole, "-parallel", "2")...)
	want := mergeCSV(t, whole)
	points := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n")[1:] {
		points[line[:strings.Index(line, ",")]]++
	}
	if len(points) != 8 || points["-jobs=150 -lease=10m0s -overhead=false -policy=astraea -seed=1"] < 20 {
		t.Fatalf("rows per point %v, want 8 points of 20 metrics or more", points)
	}
	parts := t.TempDir()
	for i := range 3 {
		runSweep(t, append(sweepArgs, "-out", parts, "-parallel", "1", "-shard", strconv.Itoa(i)+"/3")...)
	}
	if got := mergeCSV(t, parts); !bytes.Equal(got, want) {
		t.Fatalf("3 shards merge to\n%s\nthe single run to\n%s", got, want)
	}
	// Shards in directories of their own merge alike.
	var dirs []string
	for i := range 2 {
		d := t.TempDir()
		runSweep(t, append(sweepArgs, "-out", d, "-shard", strconv.Itoa(i)+"/2")...)
		dirs = append(dirs, d)
	}
	if got := mergeCSV(t, dirs...); !bytes.Equal(got, want) {
		t.Fatalf("2 shards in two directories merge to\n%s\nwant\n%s", got, want)
	}
}

func TestSweepResumes(t *testing.T) {
	dir := t.TempDir()
	runSweep(t, append(sweepArgs, "-out", dir)...)
	want := mergeCSV(t, dir)
	part := filepath.Join(dir, "part-0-of-1.jsonl")
	data, err := os.ReadFile(part)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	// A crash after three records, in the middle of the fourth.
	cut := slices.Concat(lines[0], lines[1], lines[2], lines[3][:len(lines[3])/2])
	if err := os.WriteFile(part, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	runSweep(t, append(sweepArgs, "-out", dir)...)
	after, err := os.ReadFile(part)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(after, slices.Concat(lines[0], lines[1], lines[2])) {
		t.Fatal("resuming rewrote the records it had")
	}
	if n := bytes.Count(after, []byte("\n")); n != 8 {
		t.Fatalf("%d records after resuming, want 8 (the cut one run again)", n)
	}
	if got := mergeCSV(t, dir); !bytes.Equal(got, want) {
		t.Fatalf("resumed sweep merges to\n%s\nwant\n%s", got, want)
	}
	// Nothing left: a third call runs nothing and writes nothing.
	runSweep(t, append(sweepArgs, "-out", dir)...)
	if again, _ := os.ReadFile(part); !bytes.Equal(again, after) {
		t.Fatal("a finished sweep ran points again")
	}
}

func TestMergeRefusesConflictsAndBadRecords(t *testing.T) {
	dir := t.TempDir()
	runSweep(t, "-jobs", "50", "-overhead=false", "-out", dir, "-quiet")
	data, err := os.ReadFile(filepath.Join(dir, "part-0-of-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	rec.Metrics[0].Value += 0.01
	changed, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	changed = append(changed, '\n')
	if err := os.WriteFile(filepath.Join(other, "part-0-of-1.jsonl"), changed, 0o644); err != nil {
		t.Fatal(err)
	}
	err = sweep([]string{"merge", "-o", filepath.Join(t.TempDir(), "m.csv"), dir, other}, io.Discard, io.Discard, nil)
	if !errors.Is(err, errConflict) {
		t.Fatalf("merging two results of one point: %v, want errConflict", err)
	}
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "part-0-of-1.jsonl"), []byte("{\"key\":\"x\"}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = sweep([]string{"merge", bad}, io.Discard, io.Discard, nil)
	if !errors.Is(err, errRecord) || !strings.Contains(err.Error(), "part-0-of-1.jsonl:2") {
		t.Fatalf("merging a bad line: %v, want errRecord at line 2", err)
	}
	if err := sweep([]string{"merge", t.TempDir()}, io.Discard, io.Discard, nil); !errors.Is(err, errRecord) {
		t.Fatalf("merging nothing: %v, want errRecord", err)
	}
}

func TestMergeDrawsTheSensitivityFigures(t *testing.T) {
	dir := t.TempDir()
	runSweep(t, "-jobs", "80", "-overhead=false", "-lease", "10m,20m", "-nodes", "20,40", "-policy", "astraea,tiresias-l", "-out", dir, "-quiet")
	var out bytes.Buffer
	if err := sweep([]string{"merge", dir}, &out, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sweep_lease_jct_mean_seconds.svg", "sweep_lease_overhead_direct.svg", "sweep_lease_sharing_loss_jobs.svg",
		"sweep_nodes_jct_mean_seconds.svg", "sweep_nodes_sharing_loss_jobs.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		// The lease figure has a line per (nodes, policy), the nodes
		// figure one per (lease, policy).
		want := "nodes=20 policy=tiresias-l"
		if strings.HasPrefix(f, "sweep_nodes") {
			want = "lease=20m0s policy=astraea"
		}
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s has no line %q", f, want)
		}
	}
}

func TestSweepRefusesBadInputBeforeRunning(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		err  error
	}{
		{"a value the main command refuses", []string{"-nodes", "1,x"}, errGrid},
		{"a flag the sweep sets itself", []string{"-json"}, errUsage},
		{"a bad shard", []string{"-shard", "3/2"}, errShard},
		{"a missing grid file", []string{"-grid", filepath.Join(dir, "none")}, errGrid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := sweep(append(tc.args, "-out", dir, "-quiet"), io.Discard, io.Discard, nil)
			if !errors.Is(err, tc.err) {
				t.Fatalf("%v, want %v", err, tc.err)
			}
			if files, _ := os.ReadDir(dir); len(files) != 0 {
				t.Fatalf("wrote %d files", len(files))
			}
		})
	}
}

// TestIndexedJobManifest checks the shipped Indexed Job: its shard count
// is its completions, and its command is a sweep command line that runs
// (here with -list) for an index the Job gives.
func TestIndexedJobManifest(t *testing.T) {
	data, err := os.ReadFile("../../../deploy/sweep/astraea-sweep-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	completions := regexp.MustCompile(`(?m)^\s*completions:\s*(\d+)\s*$`).FindStringSubmatch(text)
	command := regexp.MustCompile(`(?s)command:\s*\[(.*?)\]`).FindStringSubmatch(text)
	if completions == nil || command == nil {
		t.Fatal("the manifest has no completions or no command")
	}
	var args []string
	for _, q := range regexp.MustCompile(`"[^"]*"`).FindAllString(command[1], -1) {
		args = append(args, strings.Trim(q, `"`))
	}
	if len(args) < 2 || args[0] != "astraea" || args[1] != "sweep" {
		t.Fatalf("command %q is not astraea sweep", args)
	}
	args = args[2:]
	grid := filepath.Join(t.TempDir(), "grid.txt")
	if err := os.WriteFile(grid, []byte("jobs = 10\nseed = 1..16/1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		switch {
		case a == "-shard" && i+1 < len(args):
			if want := "env/" + completions[1]; args[i+1] != want {
				t.Fatalf("-shard %s, want %s (completions: %s)", args[i+1], want, completions[1])
			}
		case a == "-grid" && i+1 < len(args):
			args[i+1] = grid
		case a == "-out" && i+1 < len(args):
			args[i+1] = t.TempDir()
		}
	}
	n, _ := strconv.Atoi(completions[1])
	t.Setenv("JOB_COMPLETION_INDEX", strconv.Itoa(n-1))
	var out bytes.Buffer
	if err := sweep(append(args, "-list"), &out, io.Discard, nil); err != nil {
		t.Fatalf("astraea sweep %q: %v", args, err)
	}
	if got := strings.Count(out.String(), "todo\t"); got != 16/n {
		t.Fatalf("the last index lists %d of 16 points, want %d:\n%s", got, 16/n, out.String())
	}
}
