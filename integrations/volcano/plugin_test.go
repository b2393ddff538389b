package volcano

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"volcano.sh/apis/pkg/apis/scheduling"
	"volcano.sh/volcano/pkg/scheduler/api"

	"github.com/astraea-sched/astraea/ledger"
)

func queueInfo(name string, created time.Time) *api.QueueInfo {
	return &api.QueueInfo{UID: api.QueueID(name), Name: name, Weight: 1,
		Queue: &scheduling.Queue{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)}}}
}

func jobInfo(id string, created time.Time) *api.JobInfo {
	return &api.JobInfo{UID: api.JobID(id), CreationTimestamp: metav1.NewTime(created)}
}

func TestQueueOrder(t *testing.T) {
	acc := func(alloc, fair ledger.GPUSeconds) ledger.Account {
		return ledger.Account{Alloc: alloc, FairShare: fair, Rho: ledger.Ratio(alloc, fair)}
	}
	for name, tc := range map[string]struct {
		a, b   ledger.Account
		credit ledger.GPUSeconds // pre-credit of qa
		aFirst time.Time         // qa's creation; qb's is t1
		want   int
	}{
		"the lower ρ goes first":                     {acc(100, 200), acc(150, 200), 0, t1, -1},
		"the higher ρ goes after":                    {acc(300, 200), acc(150, 200), 0, t1, +1},
		"a pre-credit counts as received":            {acc(100, 200), acc(150, 200), 100, t1, +1},
		"equal ρ: the earlier created queue first":   {acc(100, 200), acc(100, 200), 0, t2, +1},
		"equal ρ and creation: the name decides":     {acc(100, 200), acc(100, 200), 0, t1, -1},
		"+Inf (served while owed nothing) goes last": {acc(1, 0), acc(500, 200), 0, t1, +1},
	} {
		t.Run(name, func(t *testing.T) {
			p := &plugin{
				tenant: map[ledger.TenantID]ledger.Account{"qa": tc.a, "qb": tc.b},
				credit: map[ledger.TenantID]ledger.GPUSeconds{"qa": tc.credit},
			}
			qa, qb := queueInfo("qa", tc.aFirst), queueInfo("qb", t1)
			if got := p.queueOrder(qa, qb); got != tc.want {
				t.Fatalf("queueOrder(qa, qb) = %d, want %d", got, tc.want)
			}
			if got := p.queueOrder(qb, qa); got != -tc.want {
				t.Fatalf("queueOrder(qb, qa) = %d, want %d: not antisymmetric", got, -tc.want)
			}
		})
	}
}

func TestJobOrder(t *testing.T) {
	for name, tc := range map[string]struct {
		a, b     jobKey
		aCreated time.Time
		want     int
		idA, idB string
	}{
		"a new job goes before one that ran, whatever the ρ": {jobKey{fresh: true, rho: 1}, jobKey{rho: 0.2}, t1, -1, "ns/b", "ns/a"},
		"between jobs that ran, the lower ρ first":           {jobKey{rho: 0.5}, jobKey{rho: 0.2}, t1, +1, "ns/a", "ns/b"},
		"equal: the earlier created first":                   {jobKey{rho: 1}, jobKey{rho: 1}, t0, -1, "ns/b", "ns/a"},
		"equal and created together: the id decides":         {jobKey{rho: 1}, jobKey{rho: 1}, t1, -1, "ns/a", "ns/b"},
	} {
		t.Run(name, func(t *testing.T) {
			ja, jb := jobInfo(tc.idA, tc.aCreated), jobInfo(tc.idB, t1)
			p := &plugin{job: map[api.JobID]jobKey{ja.UID: tc.a, jb.UID: tc.b}}
			if got := p.jobOrder(ja, jb); got != tc.want {
				t.Fatalf("jobOrder = %d, want %d", got, tc.want)
			}
			if got := p.jobOrder(jb, ja); got != -tc.want {
				t.Fatalf("reversed jobOrder = %d, want %d", got, -tc.want)
			}
		})
	}
}
