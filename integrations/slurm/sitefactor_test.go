package slurm

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

func TestSiteFactorFor(t *testing.T) {
	for name, tc := range map[string]struct {
		rank, n int
		max     int64
		want    int64
	}{
		"a single account gets the maximum":   {1, 1, 1000, 1000},
		"the first of two gets the maximum":   {1, 2, 1000, 1000},
		"the last of two gets 0":              {2, 2, 1000, 0},
		"the middle of three gets half":       {2, 3, 1000, 500},
		"ranks are spread linearly":           {2, 4, 1000, 667},
		"a rank past the end gets 0":          {5, 4, 1000, 0},
		"rank 0 (not in the report) gets 0":   {0, 4, 1000, 0},
		"a zero maximum gives 0 to everybody": {1, 3, 0, 0},
	} {
		t.Run(name, func(t *testing.T) {
			if got := SiteFactorFor(tc.rank, tc.n, tc.max); got != tc.want {
				t.Fatalf("SiteFactorFor(%d, %d, %d) = %d, want %d", tc.rank, tc.n, tc.max, got, tc.want)
			}
		})
	}
}

func TestSiteFactors(t *testing.T) {
	rows := []Row{{Account: "b", Rho: 0.2, Rank: 1}, {Account: "a", Rho: 0.9, Rank: 2}, {Account: "c", Rho: 0.9, Rank: 2}}
	pending := []PendingJob{{ID: "10", Account: "a"}, {ID: "11", Account: "b"}, {ID: "12_[1-4]", Account: "c"}, {ID: "13", Account: "nobody"}}
	ups, err := SiteFactors(rows, pending, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, u := range ups {
		lines = append(lines, u.String())
	}
	want := []string{
		"scontrol update JobId=10 SiteFactor=500",
		"scontrol update JobId=11 SiteFactor=1000",
		"scontrol update JobId=12_[1-4] SiteFactor=500",
		"scontrol update JobId=13 SiteFactor=0",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if ups[3].Rank != 0 || ups[3].Rho != 1 {
		t.Fatalf("unknown account update %+v", ups[3])
	}
	if _, err := SiteFactors(rows, pending, -1); err == nil {
		t.Fatal("negative maximum accepted")
	}
}

func TestApplyRunsEveryUpdate(t *testing.T) {
	ups := []Update{{JobID: "1", SiteFactor: 10}, {JobID: "2", SiteFactor: 0}, {JobID: "3", SiteFactor: 5}}
	var calls []string
	run := func(_ context.Context, name string, args ...string) error {
		calls = append(calls, name+" "+strings.Join(args, " "))
		if strings.Contains(args[1], "=2") {
			return errors.New("Job has already finished")
		}
		return nil
	}
	err := Apply(context.Background(), run, "/usr/bin/scontrol", ups)
	if err == nil || !strings.Contains(err.Error(), "job 2") || strings.Contains(err.Error(), "job 1") {
		t.Fatalf("err = %v", err)
	}
	want := "/usr/bin/scontrol update JobId=1 SiteFactor=10|/usr/bin/scontrol update JobId=2 SiteFactor=0|/usr/bin/scontrol update JobId=3 SiteFactor=5"
	if strings.Join(calls, "|") != want {
		t.Fatalf("calls %q", calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls = nil
	if err := Apply(ctx, run, "scontrol", ups); !errors.Is(err, context.Canceled) || len(calls) != 0 {
		t.Fatalf("cancelled: %v, %d calls", err, len(calls))
	}
	if err := ExecRunner(context.Background(), "/nonexistent/scontrol", "update"); err == nil {
		t.Fatal("ExecRunner of a missing program succeeded")
	}
}

func sampleReport() *Report {
	t0 := utc("2024-05-01T10:00:00")
	return &Report{From: t0, To: t0.Add(time.Hour), Now: t0.Add(time.Hour), Mode: ledger.QuotaShare, Capacity: 8, Jobs: 3,
		Rows: []Row{
			{Account: "b", RawShares: 1, NormShares: 0.25, Used: 3600, Owed: 7200, Rho: 0.5, Rank: 1},
			{Account: "a", RawShares: 3, NormShares: 0.75, Used: 21600, Owed: 21600, Rho: 1, Rank: 2},
			{Account: "z", RawShares: 0, Used: 36, Rho: ledger.Ratio(36, 0), Rank: 3},
		}}
}

func TestWriteReport(t *testing.T) {
	rep := sampleReport()
	var buf bytes.Buffer
	if err := WriteReport(&buf, rep, "text"); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"quota mode", "8 GPUs", "RawShares", "GPUh-Owed", "0.5000", "+Inf", "2.000", "6.000"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	buf.Reset()
	if err := WriteReport(&buf, rep, "csv"); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 4 || recs[1][0] != "b" || recs[1][5] != "3600.000" || recs[1][7] != "0.5000" || recs[3][7] != "+Inf" {
		t.Fatalf("csv %v %v", recs, err)
	}
	buf.Reset()
	if err := WriteReport(&buf, rep, "json"); err != nil {
		t.Fatal(err)
	}
	var got jsonReport
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err, buf.String())
	}
	if len(got.Accounts) != 3 || got.Accounts[0].OwedGPUHours != 2 || !got.Accounts[2].Rho.IsInf() || got.Mode != "quota" {
		t.Fatalf("json %+v", got)
	}
	if err := WriteReport(&buf, rep, "xml"); err == nil {
		t.Fatal("unknown format accepted")
	}
}

// FuzzSiteFactorFor: whatever the rank, count and maximum, a factor lies in
// [0, maxFactor] and never rises with the rank.
func FuzzSiteFactorFor(f *testing.F) {
	f.Add(1, 2, int64(math.MaxInt64))
	f.Add(1, 1, int64(MaxSiteFactor))
	f.Add(2, 3, int64(-5))
	f.Add(math.MaxInt, math.MaxInt, int64(MaxSiteFactor))
	f.Fuzz(func(t *testing.T, rank, n int, maxFactor int64) {
		v := SiteFactorFor(rank, n, maxFactor)
		if v < 0 || v > max(maxFactor, 0) {
			t.Fatalf("SiteFactorFor(%d, %d, %d) = %d", rank, n, maxFactor, v)
		}
		if rank < math.MaxInt {
			if w := SiteFactorFor(rank+1, n, maxFactor); w > v && rank >= 1 {
				t.Fatalf("rank %d gets %d, rank %d gets %d", rank, v, rank+1, w)
			}
		}
		_, err := SiteFactors(nil, nil, maxFactor)
		if (err == nil) != (maxFactor >= 0 && maxFactor <= MaxSiteFactor) || (err != nil && !errors.Is(err, ErrSiteFactor)) {
			t.Fatalf("SiteFactors with maximum %d: %v", maxFactor, err)
		}
	})
}
