package slurm

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// syntheticSacct returns n sacct lines over a month for accounts accounts:
// completed, failed, running and requeued jobs, deterministically.
func syntheticSacct(n, accounts int) string {
	r := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	b.WriteString(sacctHeader)
	for i := 0; i < n; i++ {
		acct := fmt.Sprintf("acct%03d", r.IntN(accounts))
		gpus := 1 << r.IntN(4)
		submit := t0.Add(time.Duration(i) * 30 * time.Second)
		start := submit.Add(time.Duration(r.IntN(3600)) * time.Second)
		end := start.Add(time.Duration(60+r.IntN(36000)) * time.Second)
		tres := fmt.Sprintf("billing=%d,cpu=%d,gres/gpu=%d,mem=%dG,node=1", gpus, 4*gpus, gpus, 32*gpus)
		state, endS := "COMPLETED", end.Format(TimeLayout)
		switch r.IntN(20) {
		case 0:
			state = "FAILED"
		case 1:
			state, endS = "RUNNING", "Unknown"
		case 2:
			// a requeued first run, then the final one
			mid := start.Add(end.Sub(start) / 3)
			fmt.Fprintf(&b, "%d|%s|%s|%s|%s|%s|%s|REQUEUED\n", i, acct, tres, tres,
				submit.Format(TimeLayout), start.Format(TimeLayout), mid.Format(TimeLayout))
			submit, start = mid, mid.Add(time.Minute)
			end = start.Add(end.Sub(mid))
			if endS != "Unknown" {
				endS = end.Format(TimeLayout)
			}
		}
		fmt.Fprintf(&b, "%d|%s|%s|%s|%s|%s|%s|%s\n", i, acct, tres, tres,
			submit.Format(TimeLayout), start.Format(TimeLayout), endS, state)
	}
	return b.String()
}

// BenchmarkParseSacct: 100,000 lines (a month of a busy cluster). O(bytes).
func BenchmarkParseSacct(b *testing.B) {
	in := syntheticSacct(100_000, 50)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseSacct(strings.NewReader(in), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGroupJobs: 100,000 records. O(n log n).
func BenchmarkGroupJobs(b *testing.B) {
	recs, _, err := ParseSacct(strings.NewReader(syntheticSacct(100_000, 50)), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := GroupJobs(recs, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplay: 100,000 jobs of 50 accounts on 1024 GPUs, both modes,
// with flat weights and with the accounts in a tree of 10 organisations
// (two with Fairshare=parent). O(E log E) plus the ledger's cost per event.
func BenchmarkReplay(b *testing.B) {
	jobs := mustJobs(b, syntheticSacct(100_000, 50))
	tree, _, err := ParseShareTree(strings.NewReader(syntheticSshare(10, 5, 0)), Options{})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2024, 6, 15, 0, 0, 0, 0, time.UTC)
	for _, shape := range []struct {
		name string
		tree *Tree
	}{{"flat", nil}, {"tree", tree}} {
		for _, mode := range []ledger.Mode{ledger.DemandAware, ledger.QuotaShare} {
			b.Run(shape.name+"/"+modeName(mode), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Replay(jobs, Config{Mode: mode, Capacity: 1024, Now: now, Tree: shape.tree}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// syntheticSshare returns `sshare -a -P` output for orgs organisations of
// perOrg accounts each (acct000, acct001, ...), every fifth organisation
// with Fairshare=parent, and users users in every account.
func syntheticSshare(orgs, perOrg, users int) string {
	var b strings.Builder
	b.WriteString("Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare\nroot|||0.000000|0|1.000000|\n")
	n := 0
	for o := range orgs {
		shares := fmt.Sprint(1 + o%7)
		if o%5 == 4 {
			shares = "parent"
		}
		fmt.Fprintf(&b, " org%d||%s|0|0|0|\n", o, shares)
		for range perOrg {
			acct := fmt.Sprintf("acct%03d", n)
			n++
			fmt.Fprintf(&b, "  %s||%d|0|0|0|\n", acct, 1+n%3)
			for u := range users {
				fmt.Fprintf(&b, "   %s|u%d|1|0|0|0|1\n", acct, u)
			}
		}
	}
	return b.String()
}

// BenchmarkParseShareTree: 100,000 associations (1,000 accounts of 100
// users in 100 organisations). O(bytes).
func BenchmarkParseShareTree(b *testing.B) {
	in := syntheticSshare(100, 10, 99)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseShareTree(strings.NewReader(in), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
