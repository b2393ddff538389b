package astraea_test

import (
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// The quick start of the package documentation, run: two tenants with equal
// weights share 16 GPUs, team-a holds 8 of them for an hour (its quota) and
// team-b asks for nothing.
func Example() {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	l, err := ledger.New(ledger.Config{Capacity: 16, Start: t0})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, err := range []error{
		l.AddTenant(t0, "team-a", 1),
		l.AddTenant(t0, "team-b", 1),
		l.Submit(t0, "a1", "team-a", 8, 1),
		l.Start(t0, "a1"),
	} {
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	acct, err := l.TenantAccount("team-a", t0, t0.Add(time.Hour))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(acct.Alloc, acct.FairShare, acct.Rho)
	// Output: 28800 28800 1.0000
}
