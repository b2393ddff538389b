package ledger

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkAddTenantsFlat adds n idle tenants of weight 1, one a second, to
// a QuotaShare ledger: every add changes every quota. It reports seconds
// per whole build ("s/build").
func BenchmarkAddTenantsFlat(b *testing.B) {
	for _, n := range []int{10_000, 70_000, 1_000_000} {
		b.Run(fmt.Sprintf("tenants=%d", n), func(b *testing.B) {
			ids := make([]TenantID, n)
			for i := range ids {
				ids[i] = TenantID(fmt.Sprintf("t%07d", i))
			}
			c := startCPU(b)
			for range b.N {
				l, err := New(Config{Mode: QuotaShare, Capacity: 8000, Start: t0})
				if err != nil {
					b.Fatal(err)
				}
				for i, id := range ids {
					if err := l.AddTenant(t0.Add(time.Duration(i)*time.Second), id, 1); err != nil {
						b.Fatal(err)
					}
				}
			}
			c.stop()
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/build")
		})
	}
}

// BenchmarkLateJoinSnapshot builds a QuotaShare ledger whose n tenants join
// one a minute and each run one job for a while after joining, then
// reports the snapshot's bytes ("snap-B"), the bytes per event
// ("snap-B/event") and the heap in use after the build ("heap-B").
func BenchmarkLateJoinSnapshot(b *testing.B) {
	for _, n := range []int{2_000, 8_000} {
		b.Run(fmt.Sprintf("tenants=%d", n), func(b *testing.B) {
			var size, heap uint64
			events := 0
			for range b.N {
				l, err := New(Config{Mode: QuotaShare, Capacity: 8 * GPUs(n), Start: t0})
				if err != nil {
					b.Fatal(err)
				}
				events = 0
				must := func(err error) {
					events++
					if err != nil {
						b.Fatal(err)
					}
				}
				for i := range n {
					at := t0.Add(time.Duration(i) * time.Minute)
					id := TenantID(fmt.Sprintf("t%05d", i))
					j := JobID(fmt.Sprintf("t%05d/0", i))
					must(l.AddTenant(at, id, float64(1+i%4)))
					must(l.Submit(at, j, id, 8, 1))
					must(l.Start(at, j))
					if i >= 10 { // the job of tenant i−10 ends
						must(l.Finish(at, JobID(fmt.Sprintf("t%05d/0", i-10)), Completed))
					}
				}
				snap, err := l.MarshalBinary()
				if err != nil {
					b.Fatal(err)
				}
				size = uint64(len(snap))
				runtime.GC()
				heap = liveHeap()
				runtime.KeepAlive(l)
			}
			b.ReportMetric(float64(size), "snap-B")
			b.ReportMetric(float64(size)/float64(events), "snap-B/event")
			b.ReportMetric(float64(heap), "heap-B")
		})
	}
}
