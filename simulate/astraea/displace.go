package astraea

import (
	"errors"
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/sched"
	"github.com/astraea-sched/astraea/simulate"
)

// blocked is a tenant's new job at which the round's fair stage left the
// tenant out of play: the job DisplaceYoung lets displace its tenant's
// young jobs.
type blocked struct {
	job    ledger.JobID
	tenant ledger.TenantID
	demand int
}

// watch is the round's Trace under DisplaceYoung: it records, in the
// round's order, each new job that made its tenant leave play in the fair
// stage.
func (p *Policy) watch(st sched.Step) {
	if st.Stage == sched.Fair && st.OutOfPlay && !st.Granted && st.Job.Leases == 0 {
		p.blocked = append(p.blocked, blocked{st.Job.Job, st.Job.Tenant, int(st.Job.Demand)})
	}
}

// displace runs after the round, on its cluster c: each blocked new job,
// in the round's order, may take the GPUs of its own tenant's running jobs
// whose lease began less than DisplaceYoung ago (the expiring jobs, which
// the round decided, excepted). If letting them all go makes it fit
// (placement.Cluster.PlaceWithout), those whose GPUs its placement uses are
// aborted (they lose the lease's work) and it is granted a lease. It
// returns the decision's grants and aborts, extended.
func (p *Policy) displace(s *simulate.State, c *placement.Cluster, lease time.Duration, gs []simulate.Grant, aborts []string) ([]simulate.Grant, []string, error) {
	for _, b := range p.blocked {
		if _, granted := c.Allocation(string(b.job)); granted {
			continue // by the backfill stage
		}
		young := p.young[:0]
		for _, js := range s.Running {
			if ledger.TenantID(js.Job.Tenant) != b.tenant || js.LeaseEnd.IsZero() || !js.LeaseEnd.After(s.Now) {
				continue
			}
			if s.Now.Sub(js.LeaseEnd.Add(-lease)) >= p.opt.DisplaceYoung {
				continue
			}
			if _, held := c.Allocation(js.Job.ID); held { // not aborted for an earlier one
				young = append(young, js)
			}
		}
		p.young = young
		if len(young) == 0 {
			continue
		}
		ids := p.ids[:0]
		for _, js := range young {
			ids = append(ids, js.Job.ID)
		}
		p.ids = ids
		q, err := c.PlaceWithout(b.demand, ids)
		if errors.Is(err, placement.ErrNoFit) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("astraea displace for %s: %w", b.job, err)
		}
		for _, js := range young {
			if !js.Placement.Overlaps(q) {
				continue
			}
			if _, err := c.Release(js.Job.ID); err != nil {
				return nil, nil, fmt.Errorf("astraea displace %s for %s: %w", js.Job.ID, b.job, err)
			}
			aborts = append(aborts, js.Job.ID)
		}
		if err := c.Allocate(string(b.job), q); err != nil {
			return nil, nil, fmt.Errorf("astraea displace for %s: %w", b.job, err)
		}
		gs = append(gs, simulate.Grant{Job: string(b.job), Placement: q, Lease: lease})
	}
	clear(p.young)
	return gs, aborts, nil
}
