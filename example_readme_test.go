package astraea_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// The README's example: team-a runs a 12-GPU job for an hour on 16 GPUs
// shared equally with team-b, whose 8-GPU job waits. Each was owed 8 GPUs,
// so team-a is at ρ 1.5 and team-b, at ρ 0, is the one to serve next.
func Example_whoIsOwed() {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	l, err := ledger.New(ledger.Config{Capacity: 16, Start: t0}) // 16 GPUs, Eq. 8
	if err != nil {
		log.Fatal(err)
	}
	err = errors.Join(
		l.AddTenant(t0, "team-a", 1), l.AddTenant(t0, "team-b", 1), // equal weights
		l.Submit(t0, "a1", "team-a", 12, 1), l.Start(t0, "a1"), // 12 GPUs, running
		l.Submit(t0, "b1", "team-b", 8, 1), // 8 GPUs, waiting
	)
	if err != nil {
		log.Fatal(err)
	}
	for _, tenant := range []ledger.TenantID{"team-a", "team-b"} {
		acct, _ := l.TenantAccount(tenant, t0, t0.Add(time.Hour))
		fmt.Printf("%s used %v GPU·h, owed %v, ρ %v\n", tenant, acct.Alloc/3600, acct.FairShare/3600, acct.Rho)
	}
	// Output:
	// team-a used 12 GPU·h, owed 8, ρ 1.5000
	// team-b used 0 GPU·h, owed 8, ρ 0.0000
}

// The README shows Example_whoIsOwed as the library's first example; the
// two must not drift apart, so the README's Go block is compared with the
// example's body, line by line.
func TestREADMEExampleIsExampleWhoIsOwed(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```go\n")
	if !ok {
		t.Fatal("README.md has no ```go block")
	}
	block, _, _ = strings.Cut(block, "```")
	_, body, _ := strings.Cut(string(src), "func Example_whoIsOwed() {\n")
	body, _, _ = strings.Cut(body, "\n}\n")
	var want []string
	for line := range strings.SplitSeq(body, "\n") {
		want = append(want, strings.TrimPrefix(line, "\t"))
	}
	if got := strings.TrimRight(block, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("README.md's first Go block is not Example_whoIsOwed's body:\n--- README\n%s\n--- example\n%s", got, strings.Join(want, "\n"))
	}
}
