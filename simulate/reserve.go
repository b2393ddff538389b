package simulate

import (
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/sched"
)

// DefaultReserveAfter is how long the astraea-reserve variant lets the most
// under-served tenant's blocked gang wait before it holds nodes for it. A
// shorter wait starts large gangs sooner at a growing cost to tenant
// fairness on a saturated cluster (the nodes drained for a gang of one
// tenant serve no other tenant meanwhile): on the Venus snapshot, with 30
// minutes the average JCT is 19,783 s but 53 % of the tenant-hours are
// losses; with one hour 21,899 s and 45 %; with two hours 29,627 s and
// 44 %; without reservations 34,498 s and 42 %.
const DefaultReserveAfter = time.Hour

// scheduleReserving is Schedule with reservations (AstraeaOptions.ReserveAfter):
// one full round per tick through a sched.Reserver, without the shortcuts,
// which read the engine's free counts (a drained node would mislead them).
// The jobs the reserver releases from the held nodes are preempted like
// any expiring job the round does not renew.
func (a *Astraea) scheduleReserving(s *State) (Decision, error) {
	lease := grantedLease(s.Lease)
	acc := a.accounts(s)
	cands := a.cands[:0]
	for _, js := range s.Pending {
		cands = append(cands, a.candidate(js, false))
	}
	for _, js := range s.Expiring {
		cands = append(cands, a.candidate(js, true))
	}
	a.cands = cands
	a.place.reset(s)
	a.place.nodes = nil
	res, err := a.reserver.Round(&a.rounds, s.Now, sched.Input{Accounts: acc, Candidates: cands, Lease: lease, Placer: &a.place}, a.opts)
	clear(a.cands)
	if err != nil {
		return Decision{}, fmt.Errorf("astraea round: %w", err)
	}
	if err := undoRound(s.Cluster, res); err != nil {
		return Decision{}, fmt.Errorf("astraea round: %w", err)
	}
	return a.decision(res, lease, nil), nil
}

// The round's Placer holds nodes for a reservation on the engine's cluster
// (sched.Holder).

func (p *inPlace) HoldFor(d int) ([]string, error) { return p.c.HoldFor(d) }

func (p *inPlace) PlaceOn(d int, nodes []string) (placement.Placement, error) {
	return p.c.PlaceOn(d, nodes)
}

func (p *inPlace) DrainNode(id string) error   { return p.c.DrainNode(id) }
func (p *inPlace) UndrainNode(id string) error { return p.c.UndrainNode(id) }
