package ledger_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// gpuHours formats GPU·seconds as GPU·hours.
func gpuHours(s ledger.GPUSeconds) string { return fmt.Sprintf("%.0f GPU·h", float64(s)/3600) }

// A day on a 16-GPU cluster shared by two equal tenants (quota 8 GPUs each)
// under Eq. 16. Vision borrows the idle quota of NLP overnight; when NLP's job
// arrives, one vision job is preempted. At the end of the day vision has
// received more than its share and NLP less: ρ says who is owed.
func Example() {
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	h := func(n int) time.Time { return day.Add(time.Duration(n) * time.Hour) }

	l, err := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Capacity: 16, Start: day})
	if err != nil {
		panic(err)
	}
	steps := []error{
		l.AddTenant(h(0), "vision", 1),
		l.AddTenant(h(0), "nlp", 1),
		l.Submit(h(0), "v1", "vision", 8, 1),
		l.Submit(h(0), "v2", "vision", 8, 1),
		l.Start(h(0), "v1"),
		l.Start(h(0), "v2"), // borrows NLP's idle quota
		l.Submit(h(8), "n1", "nlp", 8, 1),
		l.Stop(h(8), "v2"), // preempted for n1
		l.Start(h(8), "n1"),
		l.Finish(h(16), "v1", ledger.Completed),
		l.Start(h(16), "v2"),
		l.Finish(h(20), "n1", ledger.Completed),
		l.Advance(h(24)),
	}
	for _, err := range steps {
		if err != nil {
			panic(err)
		}
	}
	v := l.View(l.Now())
	for _, t := range []ledger.TenantID{"vision", "nlp"} {
		a, _ := v.TenantAccount(t)
		fmt.Printf("tenant %-6s alloc %s fair %s ρ %v\n", t, gpuHours(a.Alloc), gpuHours(a.FairShare), a.Rho)
	}
	for _, j := range []ledger.JobID{"v1", "v2", "n1"} {
		a, _ := v.JobAccount(j)
		fmt.Printf("job %s alloc %s fair %s ρ %v\n", j, gpuHours(a.Alloc), gpuHours(a.FairShare), a.Rho)
	}
	// Output:
	// tenant vision alloc 256 GPU·h fair 192 GPU·h ρ 1.3333
	// tenant nlp    alloc 96 GPU·h fair 192 GPU·h ρ 0.5000
	// job v1 alloc 128 GPU·h fair 64 GPU·h ρ 2.0000
	// job v2 alloc 128 GPU·h fair 128 GPU·h ρ 1.0000
	// job n1 alloc 96 GPU·h fair 96 GPU·h ρ 1.0000
}

// Accounts are answered for any window inside retained history, not only
// from the beginning. Windows are half-open, so consecutive windows add up to
// the whole; a weight change mid-window splits it exactly.
func ExampleLedger_TenantAccount() {
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	l, _ := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Capacity: 12, Start: t0})
	_ = l.AddTenant(h(0), "a", 1)
	_ = l.AddTenant(h(0), "b", 1)
	_ = l.Submit(h(0), "a1", "a", 12, 1)
	_ = l.Start(h(0), "a1")
	_ = l.SetTenantWeight(h(2), "b", 2) // b's quota: 6 → 8 GPUs
	_ = l.Advance(h(4))

	for _, w := range [][2]int{{0, 2}, {2, 4}, {0, 4}, {1, 3}} {
		a, _ := l.TenantAccount("b", h(w[0]), h(w[1]))
		fmt.Printf("b [%dh, %dh): fair %s ρ %v\n", w[0], w[1], gpuHours(a.FairShare), a.Rho)
	}
	a, _ := l.TenantAccount("a", h(3), h(5)) // to may lie after Now(): extrapolated
	fmt.Printf("a [3h, 5h): alloc %s fair %s ρ %v\n", gpuHours(a.Alloc), gpuHours(a.FairShare), a.Rho)
	// Output:
	// b [0h, 2h): fair 12 GPU·h ρ 0.0000
	// b [2h, 4h): fair 16 GPU·h ρ 0.0000
	// b [0h, 4h): fair 28 GPU·h ρ 0.0000
	// b [1h, 3h): fair 14 GPU·h ρ 0.0000
	// a [3h, 5h): alloc 24 GPU·h fair 8 GPU·h ρ 3.0000
}

// With a half-life, old service fades: a tenant that was starved long ago
// but served lately looks fair again sooner than under unbounded history.
func ExampleHalfLife() {
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	for _, hist := range []ledger.History{ledger.Unbounded(), ledger.HalfLife(2 * time.Hour)} {
		l, _ := ledger.New(ledger.Config{Capacity: 8, Start: t0, History: hist})
		_ = l.AddTenant(h(0), "t", 1)
		_ = l.Submit(h(0), "j", "t", 8, 1) // waits 8 hours...
		_ = l.Start(h(8), "j")             // ...then runs 4 hours
		_ = l.Advance(h(12))
		a, _ := l.View(l.Now()).TenantAccount("t")
		fmt.Printf("%-16s alloc %5.1f GPU·h fair %5.1f GPU·h ρ %v\n", hist, float64(a.Alloc)/3600, float64(a.FairShare)/3600, a.Rho)
	}
	// Output:
	// unbounded        alloc  32.0 GPU·h fair  96.0 GPU·h ρ 0.3333
	// half-life 2h0m0s alloc  17.3 GPU·h fair  22.7 GPU·h ρ 0.7619
}

// A snapshot carries the whole ledger; the restored copy continues exactly
// as if it had never stopped. WriteFile and ReadFile do the same through a
// file, atomically.
func ExampleRestore() {
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	l, _ := ledger.New(ledger.Config{Capacity: 8, Start: t0})
	_ = l.AddTenant(t0, "t", 1)
	_ = l.Submit(t0, "j", "t", 4, 1)
	_ = l.Start(t0, "j")

	data, _ := l.MarshalBinary()
	back, err := ledger.Restore(data)
	if err != nil {
		panic(err)
	}
	_ = back.Stop(t0.Add(time.Hour), "j")
	a, _ := back.JobAccount("j", t0, t0.Add(2*time.Hour))
	fmt.Printf("alloc %s fair %s ρ %v\n", gpuHours(a.Alloc), gpuHours(a.FairShare), a.Rho)

	_, err = ledger.Restore(data[:len(data)-1])
	fmt.Println(errors.Is(err, ledger.ErrCorruptSnapshot))
	// Output:
	// alloc 4 GPU·h fair 8 GPU·h ρ 0.5000
	// true
}

// A long-lived ledger with unbounded history keeps every finished job unless
// told otherwise: read what you need of a job when it finishes, then Forget
// it. The tenant's account does not change, and the id is free again.
func ExampleLedger_Forget() {
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	l, _ := ledger.New(ledger.Config{Capacity: 8, Start: t0})
	_ = l.AddTenant(h(0), "t", 1)
	_ = l.Submit(h(0), "j", "t", 8, 1) // waits 1 hour, then runs 3
	_ = l.Start(h(1), "j")
	_ = l.Finish(h(4), "j", ledger.Completed)

	final, _ := l.JobAccount("j", h(0), h(4)) // the job's lifetime ρ_job
	before, _ := l.TenantAccount("t", h(0), h(4))
	fmt.Println(l.Forget("j"), final.Rho)

	_, err := l.JobAccount("j", h(0), h(4))
	after, _ := l.TenantAccount("t", h(0), h(4))
	fmt.Println(errors.Is(err, ledger.ErrUnknownJob), after == before)
	fmt.Println(l.Submit(h(4), "j", "t", 4, 1)) // the id may be used again
	// Output:
	// <nil> 0.7500
	// true true
	// <nil>
}

// visionLedger returns an Eq. 16 ledger of 8 GPUs from start, with one
// tenant, "vision", and a pending 4-GPU job of it for each id.
func visionLedger(start time.Time, ids ...ledger.JobID) *ledger.Ledger {
	l, err := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Capacity: 8, Start: start})
	if err == nil {
		err = l.AddTenant(start, "vision", 1)
	}
	for _, id := range ids {
		if err == nil {
			err = l.Submit(start, id, "vision", 4, 1)
		}
	}
	if err != nil {
		panic(err)
	}
	return l
}

// A scheduler reading the accounts of all of a tenant's candidates asks for
// them at once: the same accounts as JobAccount, with the lookups of a
// large ledger overlapped. A job the ledger does not know stops the batch.
func ExampleView_AppendJobAccounts() {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	l := visionLedger(start, "a", "b")
	if err := l.Start(start, "a"); err != nil {
		panic(err)
	}
	if err := l.Advance(start.Add(time.Hour)); err != nil {
		panic(err)
	}
	v := l.View(l.Now())
	accts, ok := v.AppendJobAccounts(nil, []ledger.JobID{"a", "b"})
	for i, a := range accts {
		fmt.Printf("job %d: alloc %s fair %s ρ %v\n", i, gpuHours(a.Alloc), gpuHours(a.FairShare), a.Rho)
	}
	fmt.Println("all known:", ok)
	ids := []ledger.JobID{"a", "nobody", "b"}
	accts, ok = v.AppendJobAccounts(accts[:0], ids)
	fmt.Println("all known:", ok, "- stopped at", ids[len(accts)])
	// Output:
	// job 0: alloc 4 GPU·h fair 4 GPU·h ρ 1.0000
	// job 1: alloc 0 GPU·h fair 4 GPU·h ρ 0.0000
	// all known: true
	// all known: false - stopped at nobody
}

// A scheduler applies a round's outcome at one time: the jobs it releases,
// then those it grants. Each call takes all of its jobs or, if one of them
// cannot switch, none.
func ExampleLedger_StartAll() {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	l := visionLedger(start, "a", "b", "c")
	if err := l.StartAll(start, []ledger.JobID{"a", "b"}); err != nil {
		panic(err)
	}
	round := start.Add(time.Hour)
	if err := l.StartAll(round, []ledger.JobID{"c", "a"}); err != nil {
		fmt.Println("rejected:", errors.Is(err, ledger.ErrInvalidTransition))
	}
	info, _ := l.Job("c")
	fmt.Println("c running after the rejected call:", info.Running)
	if err := l.StopAll(round, []ledger.JobID{"a"}); err != nil {
		panic(err)
	}
	if err := l.StartAll(round, []ledger.JobID{"c"}); err != nil {
		panic(err)
	}
	info, _ = l.Job("c")
	fmt.Println("c running:", info.Running)
	// Output:
	// rejected: true
	// c running after the rejected call: false
	// c running: true
}

// An organisation's tree under Eq. 8 (DemandAware) on 12 GPUs: ai (weight
// 2) and ops (weight 1) share the cluster; vision and nlp share ai. nlp
// needs 1 GPU of its quota of 4, and the 3 it cannot use flow to vision;
// ops has no work, and its quota is owed to no one.
func ExampleLedger_AddTenantUnder() {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	l, err := ledger.New(ledger.Config{Mode: ledger.DemandAware, Capacity: 12, Start: start})
	if err != nil {
		panic(err)
	}
	err = errors.Join(
		l.AddTenant(start, "ai", 2),
		l.AddTenant(start, "ops", 1),
		l.AddTenantUnder(start, "vision", "ai", 1),
		l.AddTenantUnder(start, "nlp", "ai", 1),
		l.Submit(start, "v1", "vision", 8, 1),
		l.Submit(start, "n1", "nlp", 1, 1),
	)
	if err != nil {
		panic(err)
	}
	for _, id := range []ledger.TenantID{"ai", "ops", "vision", "nlp"} {
		info, _ := l.Tenant(id)
		fmt.Printf("%-6s under %-3q quota %.0f, fair share %.0f GPUs\n", id, info.Parent, info.Quota, info.FairRate)
	}
	// Output:
	// ai     under ""  quota 8, fair share 8 GPUs
	// ops    under ""  quota 4, fair share 0 GPUs
	// vision under "ai" quota 4, fair share 7 GPUs
	// nlp    under "ai" quota 4, fair share 1 GPUs
}
