package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/integrations/slurm"
)

func fixture(name string) string { return filepath.Join("..", "..", "testdata", "real", name) }

// realArgs are the flags the integration script uses on the captured output.
func realArgs(extra ...string) []string {
	return append([]string{"-sacct", fixture("sacct.txt"), "-sshare", fixture("sshare.txt"),
		"-sinfo", fixture("sinfo.txt"), "-tz", "UTC", "-now", "2026-11-29T17:58:12", "-mode", "quota"}, extra...)
}

func runCmd(t *testing.T, args []string, stdin string, runner func(context.Context, string, ...string) error) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	if runner == nil {
		runner = func(context.Context, string, ...string) error { t.Fatal("runner called"); return nil }
	}
	wall := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errb, wall, runner)
	return out.String(), errb.String(), err
}

func treeFixture(name string) string { return filepath.Join("..", "..", "testdata", "real-tree", name) }

// The tree capture: sshare and sacctmgr give the same report, with
// Slurm's NormShares, and the user level.
func TestTreeReportOnRealOutput(t *testing.T) {
	common := []string{"-sacct", treeFixture("sacct.txt"), "-sinfo", treeFixture("sinfo.txt"), "-tz", "UTC",
		"-now", "2026-12-02T01:19:05", "-mode", "quota", "-from", "2026-12-02T01:18:43", "-to", "2026-12-02T01:18:59", "-format", "csv"}
	a, _, err := runCmd(t, append([]string{"-sshare", treeFixture("sshare.txt")}, common...), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := runCmd(t, append([]string{"-assoc", treeFixture("assoc.txt")}, common...), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("-sshare\n%s\n-assoc\n%s", a, b)
	}
	// speech|root: 3 array tasks × 1 GPU × 2 s used; owed 4 GPUs × 10/15
	// (ai) × 1/5 (speech|root beside vision and nlp) × 16 s = 8.533.
	for _, line := range []string{
		"speech,parent,0.666667,0.001667,0.002370,6.000,8.533,0.7031,0,,2\n",
		"speech,1,0.200000,0.001667,0.002370,6.000,8.533,0.7031,5,root,3\n",
	} {
		if !strings.Contains(a, line) {
			t.Errorf("no line %q in\n%s", line, a)
		}
	}
	if _, _, err := runCmd(t, append([]string{"-assoc", treeFixture("assoc.txt"), "-sshare", treeFixture("sshare.txt")}, common...), "", nil); err == nil {
		t.Error("-assoc with -sshare accepted")
	}
	// -report with the queue: the partitions and why each job waits.
	report := filepath.Join(t.TempDir(), "report.json")
	out, _, err := runCmd(t, []string{"-sacct", treeFixture("sacct.txt"), "-sshare", treeFixture("sshare.txt"), "-sinfo", treeFixture("sinfo.txt"),
		"-tz", "UTC", "-now", "2026-12-02T01:19:05", "-squeue", treeFixture("squeue.txt"), "-report", report, "-format", "json"}, "", nil)
	if err != nil || strings.Count(out, "scontrol update") != 3 {
		t.Fatalf("%v\n%s", err, out)
	}
	js, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name": "debug"`, `"free": 3`, `"job_id": "12"`,
		`"why": "does not fit: needs 4 GPUs, largest free block 3 (3 free in total)"`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("report lacks %s:\n%s", want, js)
		}
	}
}

// -state on the real capture: a first run saved at TM while job 9 ran,
// continued with sacct -S TM alone, reports what one run over the whole
// accounting reports.
func TestStateResumesOnRealOutput(t *testing.T) {
	state := filepath.Join(t.TempDir(), "ledger.state")
	common := []string{"-sshare", treeFixture("sshare.txt"), "-sinfo", treeFixture("sinfo.txt"), "-tz", "UTC", "-mode", "quota", "-format", "csv"}
	if _, _, err := runCmd(t, append([]string{"-state", state, "-sacct", treeFixture("sacct-first.txt"), "-now", "2026-12-02T01:19:01"}, common...), "", nil); err != nil {
		t.Fatal(err)
	}
	when, _, err := runCmd(t, []string{"-state", state, "-state-time", "-tz", "UTC"}, "", nil)
	if err != nil || when != "2026-12-02T01:19:01\n" {
		t.Fatalf("-state-time: %q, %v", when, err)
	}
	resumed, stderr, err := runCmd(t, append([]string{"-state", state, "-sacct", treeFixture("sacct-since.txt"), "-now", "2026-12-02T01:19:05"}, common...), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	once, _, err := runCmd(t, append([]string{"-sacct", treeFixture("sacct.txt"), "-now", "2026-12-02T01:19:05"}, common...), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resumed != once {
		t.Fatalf("resumed\n%s\none replay\n%s\n%s", resumed, once, stderr)
	}
	// team-a: 13 GPU·s of finished jobs and job 9, 1 GPU from 01:19:00.
	if !strings.Contains(resumed, "team-a,3,0.200000,0.005000,") || !strings.Contains(resumed, ",18.000,") {
		t.Errorf("team-a row:\n%s", resumed)
	}
	if _, _, err := runCmd(t, append([]string{"-state", state, "-sacct", treeFixture("sacct-since.txt"), "-now", "2026-12-02T01:19:05", "-mode", "demand"}, common[:len(common)-4]...), "", nil); !errors.Is(err, slurm.ErrState) {
		t.Errorf("resuming a quota state in demand mode: %v", err)
	}
}

func TestReportOnRealOutput(t *testing.T) {
	out, _, err := runCmd(t, realArgs("-from", "2026-11-29T17:57:51", "-to", "2026-11-29T17:58:05", "-format", "csv"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	// This capture's sacct has no User column: the users are left out of
	// the tree and jobs are charged to their accounts.
	want := "account,raw_shares,norm_shares,used_gpu_hours,owed_gpu_hours,used_gpu_seconds,owed_gpu_seconds,rho,rank,user,depth\n" +
		"team-a,3,0.750000,0.004167,0.011667,15.000,42.000,0.3571,1,,1\n" +
		"team-b,1,0.250000,0.003333,0.003889,12.000,14.000,0.8571,2,,1\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	// Up to -now the running job 5 (1 GPU since 17:58:08) adds 4 GPU·s.
	out, _, err = runCmd(t, realArgs("-format", "json"), "", nil)
	if err != nil || !strings.Contains(out, `"used_gpu_seconds": 19`) {
		t.Fatalf("%v\n%s", err, out)
	}
	_, stderr, err := runCmd(t, realArgs("-from", "2026-11-29T17:58:06", "-format", "csv"), "", nil)
	if err != nil || !strings.Contains(stderr, "4 jobs without effect on the window: 4 ended before window") {
		t.Fatalf("%v\n%s", err, stderr)
	}
	out, _, err = runCmd(t, realArgs("-halflife", "1h"), "", nil)
	if err != nil || !strings.Contains(out, "half-life 1h0m0s") || !strings.Contains(out, "team-a") {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestSacctFromStdinAndWeightsFile(t *testing.T) {
	sacct, err := os.ReadFile(fixture("sacct.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(t.TempDir(), "weights.csv")
	if err := os.WriteFile(wf, []byte("account,weight\nteam-a,1\nteam-b,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCmd(t, []string{"-weights", wf, "-capacity", "2", "-tz", "UTC", "-now", "2026-11-29T17:58:12",
		"-from", "2026-11-29T17:57:51Z", "-to", "2026-11-29T17:58:05", "-mode", "quota", "-format", "csv"}, string(sacct), nil)
	if err != nil {
		t.Fatal(err)
	}
	// 2 GPUs, equal weights: each is owed 1 GPU × 14 s.
	if !strings.Contains(out, "team-a,1,0.500000,0.004167,0.003889,15.000,14.000,1.0714,2") {
		t.Fatalf("got\n%s", out)
	}
}

func TestSiteFactorLinesAndApply(t *testing.T) {
	args := realArgs("-squeue", fixture("squeue.txt"), "-sitefactor-max", "500")
	out, _, err := runCmd(t, args, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "scontrol update JobId=6 SiteFactor=500\nscontrol update JobId=7 SiteFactor=0\n"
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	var calls []string
	report := filepath.Join(t.TempDir(), "report.json")
	out, _, err = runCmd(t, append(args, "-apply", "-scontrol", "/opt/slurm/bin/scontrol", "-report", report, "-format", "json"), "",
		func(_ context.Context, name string, a ...string) error {
			calls = append(calls, name+" "+strings.Join(a, " "))
			return nil
		})
	if err != nil || out != want {
		t.Fatal(err, out)
	}
	if strings.Join(calls, "\n") != "/opt/slurm/bin/scontrol update JobId=6 SiteFactor=500\n/opt/slurm/bin/scontrol update JobId=7 SiteFactor=0" {
		t.Fatalf("calls %q", calls)
	}
	if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), `"account": "team-a"`) {
		t.Fatalf("report file: %v %s", err, b)
	}
	_, _, err = runCmd(t, append(args, "-apply"), "", func(context.Context, string, ...string) error { return errors.New("denied") })
	if err == nil || !strings.Contains(err.Error(), "job 6") {
		t.Fatalf("apply failure: %v", err)
	}
}

func TestBadInputNamesTheLine(t *testing.T) {
	bad := "JobIDRaw|Account|AllocTRES|ReqTRES|Submit|Start|End|State\n" +
		"1|team-a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:01:00|COMPLETED\n" +
		"2|team-a|gres/gpu=one||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:01:00|COMPLETED\n"
	_, _, err := runCmd(t, []string{"-capacity", "4", "-now", "2024-05-01T11:00:00", "-tz", "UTC"}, bad, nil)
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "unknown TRES form") {
		t.Fatalf("err = %v", err)
	}
	out, stderr, err := runCmd(t, []string{"-capacity", "4", "-now", "2024-05-01T11:00:00", "-tz", "UTC", "-lenient", "-format", "csv"}, bad, nil)
	if err != nil || !strings.Contains(stderr, "skipped 1 lines: 1 unknown TRES form") || !strings.Contains(out, "team-a,1,1.000000") {
		t.Fatalf("lenient: %v\n%s\n%s", err, out, stderr)
	}
}

func TestFlagErrors(t *testing.T) {
	for name, args := range map[string][]string{
		"no capacity":                {"-now", "2024-05-01T00:00:00"},
		"both capacity and sinfo":    {"-capacity", "4", "-sinfo", fixture("sinfo.txt")},
		"both sshare and weights":    {"-capacity", "4", "-sshare", fixture("sshare.txt"), "-weights", fixture("sshare.txt")},
		"an unknown mode":            {"-capacity", "4", "-mode", "fair"},
		"an unknown zone":            {"-capacity", "4", "-tz", "Mars/Olympus"},
		"a bad time":                 {"-capacity", "4", "-from", "yesterday"},
		"apply without squeue":       {"-capacity", "4", "-apply", "-now", "2024-05-01T00:00:00"},
		"an unknown format":          {"-capacity", "4", "-format", "xml", "-now", "2024-05-01T00:00:00"},
		"a stray argument":           {"-capacity", "4", "extra"},
		"a missing file":             {"-capacity", "4", "-sacct", "/nonexistent/sacct.txt"},
		"a negative site factor max": {"-capacity", "4", "-now", "2024-05-01T00:00:00", "-squeue", fixture("squeue.txt"), "-sitefactor-max", "-1"},
	} {
		t.Run(name, func(t *testing.T) {
			sacct := "JobIDRaw|Account|AllocTRES|ReqTRES|Submit|Start|End|State\n"
			if _, _, err := runCmd(t, args, sacct, nil); err == nil {
				t.Fatal("no error")
			}
		})
	}
	if _, _, err := runCmd(t, []string{"-h"}, "", nil); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
}

// TestSiteFactorMaxIsBounded: a maximum scontrol would refuse, or whose
// arithmetic would overflow, is refused at the flag.
func TestSiteFactorMaxIsBounded(t *testing.T) {
	base := realArgs("-squeue", fixture("squeue.txt"))
	for _, v := range []string{"-1", "2147483646", "9223372036854775807"} {
		_, _, err := runCmd(t, append(base, "-sitefactor-max", v), "", nil)
		if !errors.Is(err, slurm.ErrSiteFactor) || !strings.Contains(err.Error(), "-sitefactor-max") {
			t.Errorf("-sitefactor-max %s: %v, want ErrSiteFactor naming the flag", v, err)
		}
	}
	out, _, err := runCmd(t, append(base, "-sitefactor-max", "2147483645"), "", nil)
	if err != nil || !strings.Contains(out, "SiteFactor=2147483645") || strings.Contains(out, "SiteFactor=-") {
		t.Fatalf("the largest maximum: %v\n%s", err, out)
	}
}

func TestParseTime(t *testing.T) {
	ist := time.FixedZone("IST", 5*3600+30*60)
	for name, tc := range map[string]struct {
		in   string
		want time.Time // zero: refused with slurm.ErrBadTime
	}{
		"Slurm's layout is in the zone":       {"2024-05-01T10:00:00", time.Date(2024, 5, 1, 10, 0, 0, 0, ist)},
		"RFC 3339 carries its own offset":     {"2024-05-01T10:00:00+02:00", time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)},
		"RFC 3339 in UTC":                     {"2024-05-01T10:00:00Z", time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)},
		"an unknown offset, -00:00, is UTC":   {"2024-05-01T10:00:00-00:00", time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)},
		"the largest offset":                  {"2024-05-01T10:00:00-23:59", time.Date(2024, 5, 2, 9, 59, 0, 0, time.UTC)},
		"a bare date is midnight in the zone": {" 2024-05-01 ", time.Date(2024, 5, 1, 0, 0, 0, 0, ist)},
		"an offset of 24 hours is refused":    {"2024-05-01T10:00:00+24:00", time.Time{}},
		"an offset of 60 minutes is refused":  {"2024-05-01T10:00:00+00:60", time.Time{}},
		"+24:60 is refused, not 25 hours":     {"0000-01-01T0:00:00+24:60", time.Time{}},
		"a word is refused":                   {"yesterday", time.Time{}},
		"an empty time is refused":            {"", time.Time{}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := parseTime(tc.in, ist)
			if tc.want.IsZero() {
				if !errors.Is(err, slurm.ErrBadTime) {
					t.Fatalf("parseTime(%q) = %v, %v; want an error matching slurm.ErrBadTime", tc.in, got, err)
				}
				return
			}
			if err != nil || !got.Equal(tc.want) {
				t.Fatalf("parseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}
