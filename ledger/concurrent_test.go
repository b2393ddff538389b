package ledger

import (
	"bytes"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

// TestConcurrentQueries backs the promise of the Ledger's doc: queries may
// run concurrently with each other while no event is applied. Goroutines
// ask every kind of query at once and must get what one goroutine gets
// alone; under `go test -race` a query that wrote anything would also be
// reported.
func TestConcurrentQueries(t *testing.T) {
	for _, h := range []History{Unbounded(), TrailingWindow(40 * time.Second), Buckets(4, 10*time.Second), HalfLife(time.Minute)} {
		t.Run(h.String(), func(t *testing.T) {
			l := mustNew(t, Config{Mode: QuotaShare, Capacity: 16, History: h})
			var jobs []JobID
			for k := range 4 {
				do(t, l, l.AddTenant(t0, TenantID(fmt.Sprintf("t%d", k)), float64(k+1)))
			}
			for i := range 60 {
				id := JobID(fmt.Sprintf("j%02d", i))
				jobs = append(jobs, id)
				do(t, l, l.Submit(ts(float64(i)), id, TenantID(fmt.Sprintf("t%d", i%4)), GPUs(1+i%3), 1))
				if i%2 == 0 {
					do(t, l, l.Start(ts(float64(i)+0.5), id))
				}
				if i%5 == 4 {
					do(t, l, l.Finish(ts(float64(i)+0.7), jobs[i-3], Completed))
				}
			}
			do(t, l, l.Advance(ts(70)))
			ask := func() string {
				var b bytes.Buffer
				v := l.View(l.Now())
				from := l.Begin()
				for k := range 4 {
					id := TenantID(fmt.Sprintf("t%d", k))
					a, err := l.TenantAccount(id, from, l.Now())
					va, ok := v.TenantAccount(id)
					q, _ := v.TenantQuota(id)
					r, _ := v.TenantFairRate(id)
					info, _ := l.Tenant(id)
					fmt.Fprintln(&b, a, err, va, ok, q, r, info)
				}
				for _, id := range jobs {
					a, err := l.JobAccount(id, from, l.Now())
					va, ok := v.JobAccount(id)
					r, _ := v.JobFairRate(id)
					info, _ := l.Job(id)
					fmt.Fprintln(&b, a, err, va, ok, r, info)
				}
				batch, ok := v.AppendJobAccounts(nil, jobs)
				fmt.Fprintln(&b, batch, ok)
				c, err := l.ClusterAccount(from, l.Now())
				snap, _ := l.MarshalBinary()
				fmt.Fprintln(&b, c, err, len(snap), l.Check())
				return b.String()
			}
			want := ask()
			var wg sync.WaitGroup
			got := make([]string, 8)
			for g := range got {
				wg.Go(func() { got[g] = ask() })
			}
			wg.Wait()
			for g, s := range got {
				if !reflect.DeepEqual(s, want) {
					t.Fatalf("goroutine %d saw other answers than one goroutine alone", g)
				}
			}
		})
	}
}
