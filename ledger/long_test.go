package ledger

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/internal/oracle"
)

// Long seeded histories cross many breakpoint chunks and exercise trimming;
// the results must still match the oracle at the end.
func TestLongHistoryAgainstOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("long history test skipped in -short mode")
	}
	for _, tc := range []struct {
		name             string
		hist             History
		window, halfLife int64
		buckets          int64 // of width window, when > 0
	}{
		{"unbounded", Unbounded(), 0, 0, 0},
		{"trailing", TrailingWindow(2000 * time.Second), int64(2000 * time.Second), 0, 0},
		{"buckets", Buckets(4, 500*time.Second), int64(500 * time.Second), 0, 4},
		{"half-life", HalfLife(900 * time.Second), 0, int64(900 * time.Second), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 5))
			l := mustNew(t, Config{Mode: QuotaShare, Capacity: 24, History: tc.hist})
			o := oracle.New(true, 24, tc.window, tc.halfLife)
			if tc.buckets > 0 {
				o = oracle.NewBuckets(true, 24, tc.buckets, tc.window)
			}
			now := int64(0)
			at := func() time.Time { return t0.Add(time.Duration(now)) }
			apply := func(err error, k oracle.Kind) {
				t.Helper()
				if kindOf(err) != k {
					t.Fatalf("ledger %v, oracle %q", err, k)
				}
			}
			for _, tn := range []string{"a", "b", "c"} {
				apply(l.AddTenant(at(), TenantID(tn), 1), o.AddTenant(now, tn, 1))
			}
			next := 0
			var active []string
			for step := range 1500 {
				now += int64(r.IntN(20)+1) * 1e9
				switch op := r.IntN(10); {
				case op < 2 || len(active) < 3:
					id := fmt.Sprintf("j%d", next)
					next++
					tn := []string{"a", "b", "c"}[r.IntN(3)]
					d := 1 << r.IntN(4)
					apply(l.Submit(at(), JobID(id), TenantID(tn), GPUs(d), 1), o.Submit(now, id, tn, d, 1))
					active = append(active, id)
				case op < 3:
					k := r.IntN(len(active))
					id := active[k]
					active = append(active[:k], active[k+1:]...)
					apply(l.Finish(at(), JobID(id), Completed), o.Finish(now, id, true))
				case op < 4:
					id := active[r.IntN(len(active))]
					w := []float64{0.5, 1, 2}[r.IntN(3)]
					apply(l.SetJobWeight(at(), JobID(id), w), o.SetJobWeight(now, id, w))
				case op < 5 && step%50 == 0:
					c := 16 + r.IntN(16)
					apply(l.SetCapacity(at(), GPUs(c)), o.SetCapacity(now, c))
				default:
					id := active[r.IntN(len(active))]
					if info, _ := o.Job(id); info.Running {
						apply(l.Stop(at(), JobID(id)), o.Stop(now, id))
					} else {
						apply(l.Start(at(), JobID(id)), o.Start(now, id))
					}
				}
			}
			do(t, l, nil)
			begin := o.Begin()
			if !l.Begin().Equal(t0.Add(time.Duration(begin))) {
				t.Fatalf("Begin %v, oracle %v", l.Begin(), begin)
			}
			span := now - begin
			windows := [][2]int64{{begin, now}, {begin + span/3, begin + 2*span/3}, {now - 1e9, now + 60e9}}
			cmp := func(what string, got, want float64, w [2]int64) {
				scale := 32 * sec(w[1]-w[0])
				if math.Abs(got-want) > modelTol*max(1, math.Abs(want), scale) {
					t.Fatalf("%s %v: ledger %v, oracle %v", what, w, got, want)
				}
			}
			for _, w := range windows {
				for _, tn := range o.Tenants() {
					a, err := l.TenantAccount(TenantID(tn), t0.Add(time.Duration(w[0])), t0.Add(time.Duration(w[1])))
					do(t, l, err)
					oa, of, _ := o.TenantAccount(tn, w[0], w[1])
					cmp("tenant "+tn+" alloc", float64(a.Alloc), oa, w)
					cmp("tenant "+tn+" fair", float64(a.FairShare), of, w)
				}
				for i, id := range o.Jobs() {
					if i%7 != 0 { // a sample keeps the naive oracle fast
						continue
					}
					a, err := l.JobAccount(JobID(id), t0.Add(time.Duration(w[0])), t0.Add(time.Duration(w[1])))
					do(t, l, err)
					oa, of, _ := o.JobAccount(id, w[0], w[1])
					cmp("job "+id+" alloc", float64(a.Alloc), oa, w)
					cmp("job "+id+" fair", float64(a.FairShare), of, w)
				}
			}
		})
	}
}
