package slurm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

func fixtureSeed(f *testing.F, name string) {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
}

// checkParseErr fails unless err is nil, a *ParseError, or (for inputs that
// cannot be read) an I/O error.
func checkParseErr(t *testing.T, err error) {
	t.Helper()
	var pe *ParseError
	if err != nil && !errors.As(err, &pe) {
		t.Fatalf("error of type %T: %v", err, err)
	}
	if pe != nil && pe.Err == nil {
		t.Fatalf("ParseError without a kind: %#v", pe)
	}
}

func FuzzParseSacct(f *testing.F) {
	fixtureSeed(f, "real/sacct.txt")
	fixtureSeed(f, "hand/sacct.txt")
	f.Add(sacctHeader + "1|a|gres/gpu:a100=2,gres/gpu=2||2024-05-01T10:00:00|Unknown|Unknown|PENDING\n")
	f.Add(sacctHeader + "7|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:00:30|REQUEUED\n7|a|gres/gpu=1||2024-05-01T10:00:30|2024-05-01T10:00:31|Unknown|RUNNING\n")
	f.Add("1|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:05|2024-05-01T10:00:01|COMPLETED\n")
	f.Add("JobIDRaw|State\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		for _, lenient := range []bool{false, true} {
			recs, skipped, err := ParseSacct(strings.NewReader(in), Options{Lenient: lenient})
			checkParseErr(t, err)
			if err != nil {
				continue
			}
			for _, r := range recs {
				if r.GPUs < 0 || r.State.Kind() == 0 || r.Submit.IsZero() || (!r.End.IsZero() && !r.Start.IsZero() && r.End.Before(r.Start)) {
					t.Fatalf("bad record %+v", r)
				}
			}
			if !lenient && skipped.Total() != 0 {
				t.Fatal("strict parse skipped lines")
			}
			jobs, _, err := GroupJobs(recs, lenient)
			checkParseErr(t, err)
			if err != nil {
				continue
			}
			// Whatever parses replays without panicking, and the ledger stays sound.
			now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			rep, err := Replay(jobs, Config{Capacity: 8, Now: now, Lenient: true})
			if err != nil {
				var le *ledger.Error
				if !errors.As(err, &le) && !strings.HasPrefix(err.Error(), "slurm:") {
					t.Fatalf("replay: %v", err)
				}
				continue
			}
			if err := rep.Ledger.Check(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzTRESGPUs(f *testing.F) {
	for _, s := range []string{"", "billing=1,cpu=1,gres/gpu=2,node=1", "gres/gpu:a100=2,gres/gpu:v100=1", "gres/gpu=", "=", ",", "gres/gpu:=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		n, err := TRESGPUs(in)
		if err == nil && n < 0 {
			t.Fatalf("TRESGPUs(%q) = %d", in, n)
		}
	})
}

func FuzzParseSshare(f *testing.F) {
	fixtureSeed(f, "real/sshare.txt")
	fixtureSeed(f, "hand/sshare.txt")
	f.Add("Account|User|RawShares\nroot||\n a||parent\n  b||2\n   b|u|parent\n c||0\n")
	f.Add(" a||1\n a||1\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, lenient := range []bool{false, true} {
			shares, _, err := ParseSshare(strings.NewReader(in), Options{Lenient: lenient})
			checkParseErr(t, err)
			seen := map[string]bool{}
			for _, s := range shares {
				if s.RawShares < 0 || seen[s.Account] || !validName(s.Account) {
					t.Fatalf("bad share %+v", s)
				}
				seen[s.Account] = true
			}
		}
	})
}

func FuzzParseWeights(f *testing.F) {
	fixtureSeed(f, "hand/weights.csv")
	f.Add("account,weight\nteam-a,3\nteam-b,1\n")
	f.Add("# c\na, 1.5\n\nb,0\n")
	f.Add("a,1,2\na,-1\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, lenient := range []bool{false, true} {
			w, _, err := ParseWeights(strings.NewReader(in), Options{Lenient: lenient})
			checkParseErr(t, err)
			for a, v := range w {
				if !(v >= 0) || !validName(a) {
					t.Fatalf("bad weight %q=%v", a, v)
				}
			}
		}
	})
}

func FuzzParseSinfo(f *testing.F) {
	fixtureSeed(f, "real/sinfo.txt")
	fixtureSeed(f, "hand/sinfo.txt")
	f.Add("gpu[01-04,07]|gpu:a100:8(S:0-1)\ncpu01|(null)\nmix|gpu:2,nic:1\n")
	f.Add("n[0-99999999]|gpu:1\n")
	f.Add("n1|gpu:4(S:0,1),gpu:v100:2\nn1|gpu:4(S:0,1),gpu:v100:2\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, lenient := range []bool{false, true} {
			nodes, total, _, err := ParseSinfo(strings.NewReader(in), Options{Lenient: lenient})
			checkParseErr(t, err)
			sum := 0
			for _, n := range nodes {
				if n.GPUs < 0 {
					t.Fatalf("node %+v", n)
				}
				sum += n.GPUs
			}
			if sum != total {
				t.Fatalf("total %d != Σ %d", total, sum)
			}
		}
	})
}

func FuzzParsePending(f *testing.F) {
	fixtureSeed(f, "real/squeue.txt")
	fixtureSeed(f, "hand/squeue.txt")
	f.Add("JOBID|ACCOUNT|TRES_PER_NODE\n12_[1-3]|a|gres/gpu:a100:2\n13|b|N/A\n")
	f.Add("1;rm -rf|a|N/A\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, lenient := range []bool{false, true} {
			jobs, _, err := ParsePending(strings.NewReader(in), Options{Lenient: lenient})
			checkParseErr(t, err)
			for _, j := range jobs {
				if !validName(j.ID) || !validName(j.Account) || j.GPUs < 0 {
					t.Fatalf("bad pending job %+v", j)
				}
			}
		}
	})
}
