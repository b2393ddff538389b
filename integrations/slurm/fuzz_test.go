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
	fixtureSeed(f, "real-tree/sacct.txt")
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
		if err != nil && !errors.Is(err, ErrUnknownTRES) {
			t.Fatalf("TRESGPUs(%q): error %v does not match ErrUnknownTRES", in, err)
		}
	})
}

// FuzzGresGPUs checks the GRES counter of sinfo and squeue on any text: a
// count is never negative, an error matches ErrUnknownTRES, and counts add
// up: two lists that parse, joined by a comma, count the sum of their GPUs.
func FuzzGresGPUs(f *testing.F) {
	for _, s := range []string{"", "(null)", "N/A", "none", "gpu:8", "gpu:a100:8(S:0-1)", "gres:gpu:2,nic:1",
		"gres/gpu:v100:4", "gpu:4(S:0,1),gpu:v100:2", "gpu", "gpu:", "gpu::1", "gpu:a:b:1", ":1", "gpu:1(", "gpu:-1",
		"gpu:1048577", "gpu:1048576,gpu:1048576", "mps:100"} {
		f.Add(s, "gpu:1")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		na, erra := GresGPUs(a)
		nb, errb := GresGPUs(b)
		for _, c := range []struct {
			in  string
			n   int
			err error
		}{{a, na, erra}, {b, nb, errb}} {
			if c.err != nil && !errors.Is(c.err, ErrUnknownTRES) {
				t.Fatalf("GresGPUs(%q): error %v does not match ErrUnknownTRES", c.in, c.err)
			}
			if c.err == nil && c.n < 0 {
				t.Fatalf("GresGPUs(%q) = %d", c.in, c.n)
			}
		}
		// Parentheses may hold commas, so only lists without them are joined;
		// an empty list is 0 GPUs alone but an empty entry in a longer list.
		if erra != nil || errb != nil || a == "" || b == "" || strings.ContainsAny(a+b, "()") {
			return
		}
		n, err := GresGPUs(a + "," + b)
		if err != nil {
			if na+nb <= 1<<30 {
				t.Fatalf("GresGPUs(%q + \",\" + %q): %v; the parts count %d and %d", a, b, err, na, nb)
			}
			return
		}
		if n != na+nb {
			t.Fatalf("GresGPUs(%q + \",\" + %q) = %d, want %d + %d", a, b, n, na, nb)
		}
	})
}

// FuzzParseState checks the sacct state parser on any text: a state is
// known exactly when it has a kind, only final states map to the ledger's,
// and a known state reads back as itself, in lower case and with the
// " by UID" suffix of a cancelled job too.
func FuzzParseState(f *testing.F) {
	for _, s := range []string{"COMPLETED", "CANCELLED by 1000", "cancelled+", "RUNNING", " PENDING ", "", "by", "+", "UNKNOWN", "NODE_FAIL\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, ok := ParseState(s)
		if ok != (st.Kind() != 0) {
			t.Fatalf("ParseState(%q) = %q, %v; Kind %v", s, st, ok, st.Kind())
		}
		if _, final := st.Final(); final != (st.Kind() == KindFinal) {
			t.Fatalf("ParseState(%q) = %q: Final says %v, Kind %v", s, st, final, st.Kind())
		}
		if !ok {
			return
		}
		for _, again := range []string{string(st), strings.ToLower(string(st)), string(st) + "+", string(st) + " by 0"} {
			if st2, ok2 := ParseState(again); st2 != st || !ok2 {
				t.Fatalf("ParseState(%q) = %q, %v; ParseState(%q) = %q", s, st, ok, again, st2)
			}
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
	fixtureSeed(f, "real-tree/sinfo.txt")
	f.Add("gpu[01-02]|gpu*|gpu:a100:8(S:0-1)|gpu:a100:2(IDX:0-1)\ngpu01|long|gpu:a100:8|gpu:1\nc|cpu|(null)\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, lenient := range []bool{false, true} {
			nodes, total, _, err := ParseSinfo(strings.NewReader(in), Options{Lenient: lenient})
			checkParseErr(t, err)
			sum := 0
			for _, n := range nodes {
				if n.GPUs < 0 || n.Used > n.GPUs || n.Used < -1 {
					t.Fatalf("node %+v", n)
				}
				sum += n.GPUs
			}
			if sum != total {
				t.Fatalf("total %d != Σ %d", total, sum)
			}
			for _, p := range Partitions(nodes) {
				if p.GPUs < 0 || p.GPUs > total*p.Nodes || p.Free > p.GPUs || p.Free < -1 || !validName(p.Name) {
					t.Fatalf("partition %+v of %+v", p, nodes)
				}
			}
		}
	})
}

func FuzzParsePending(f *testing.F) {
	fixtureSeed(f, "real/squeue.txt")
	fixtureSeed(f, "hand/squeue.txt")
	f.Add("JOBID|ACCOUNT|TRES_PER_NODE\n12_[1-3]|a|gres/gpu:a100:2\n13|b|N/A\n")
	fixtureSeed(f, "real-tree/squeue.txt")
	f.Add("12|a|gres/gpu:1|alice|gpu,cpu\n13|b|N/A||\n14|c|N/A|x y|p\n")
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

// checkTree fails unless every association of a parsed tree has a finite
// NormShares in [0, 1] and every charge lands on a leaf tenant whose
// parent chain ends at the cluster.
func checkTree(t *testing.T, tree *Tree) {
	t.Helper()
	for _, a := range tree.Assocs()[1:] {
		ns, ok := tree.NormShares(a.Account, a.User)
		if !ok || !(ns >= 0 && ns <= 1+1e-12) {
			t.Fatalf("NormShares(%s) = %v, %v", a.key(), ns, ok)
		}
		id, ok := tree.Tenant(a.Account, a.User)
		if !ok {
			continue
		}
		for steps := 0; id != ""; steps++ {
			if steps > tree.Len() {
				t.Fatalf("parent chain of %s does not end", a.key())
			}
			if id, ok = tree.TenantParent(id); !ok {
				t.Fatalf("charged tenant of %s has no parent", a.key())
			}
		}
	}
}

func FuzzParseShareTree(f *testing.F) {
	fixtureSeed(f, "real-tree/sshare.txt")
	fixtureSeed(f, "real/sshare.txt")
	f.Add("Account|User|RawShares\nroot||\n a||parent\n  b||2\n   b|u|parent\n c||0\n")
	f.Add("Account|User|RawShares\n a||1\n  a|u|parent\n  b||1\n")
	f.Add(" a||1\n a||1\n   a|x|1\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, lenient := range []bool{false, true} {
			tree, _, err := ParseShareTree(strings.NewReader(in), Options{Lenient: lenient})
			checkParseErr(t, err)
			if err == nil {
				checkTree(t, tree)
			}
		}
	})
}

func FuzzParseAssoc(f *testing.F) {
	fixtureSeed(f, "real-tree/assoc.txt")
	f.Add("Account|User|ParentName|Share\na||b|1\nb||a|parent\n")
	f.Add("Account|User|Partition|ParentName|Fairshare\nroot|||| \nx||gpu|root|1\nx|u|||parent\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, lenient := range []bool{false, true} {
			tree, _, err := ParseAssoc(strings.NewReader(in), Options{Lenient: lenient})
			checkParseErr(t, err)
			if err == nil {
				checkTree(t, tree)
			}
		}
	})
}
