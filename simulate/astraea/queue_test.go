package astraea

import (
	"testing"

	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// The policy's queue follows the pending list: a job writing its
// checkpoint (charged for its GPUs, so its ρ_job may rise) stays out until
// it is done; a job that left goes; the same jobs of another run replace
// the first run's.
func TestQueueFollowsThePendingList(t *testing.T) {
	p, err := New(DefaultOptions())
	must(t, err)
	job := func(id string, sub, leases int, holding bool) *simulate.JobState {
		return &simulate.JobState{Job: trace.Job{ID: id, Tenant: "x", GPUs: 1, Submit: ts(sub)}, Leases: leases, Ran: leases > 0, Holding: holding}
	}
	a, b, c := job("a", 0, 0, false), job("b", 1, 2, true), job("c", 2, 1, false)
	step := func(want int, pending ...*simulate.JobState) {
		t.Helper()
		must(t, p.sync(pending))
		if got := p.queue.Len(); got != want {
			t.Fatalf("%d jobs queued, want %d", got, want)
		}
	}
	step(2, a, b, c)
	b.Holding = false
	step(3, a, b, c)
	c.Leases++ // ran between two ticks
	step(3, a, b, c)
	step(2, b, c)
	step(0)
	step(3, job("a", 0, 0, false), job("b", 1, 0, false), job("c", 2, 0, false))
	step(3, job("a", 0, 0, false), job("b", 1, 0, false), job("c", 2, 0, false))
}
