package sched

import (
	"fmt"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
)

// accounts is a hand-built Accounts with fair rates.
type accounts struct {
	tenants map[ledger.TenantID]ledger.Account
	jobs    map[ledger.JobID]ledger.Account
	rates   map[ledger.TenantID]float64
}

func newAccounts() *accounts {
	return &accounts{
		tenants: map[ledger.TenantID]ledger.Account{},
		jobs:    map[ledger.JobID]ledger.Account{},
		rates:   map[ledger.TenantID]float64{},
	}
}

func (a *accounts) tenant(id ledger.TenantID, alloc, fair ledger.GPUSeconds, rate float64) {
	a.tenants[id] = ledger.Account{Alloc: alloc, FairShare: fair, Rho: ledger.Ratio(alloc, fair)}
	a.rates[id] = rate
}

func (a *accounts) job(id ledger.JobID, rho ledger.Rho) {
	a.jobs[id] = ledger.Account{Alloc: ledger.GPUSeconds(float64(rho) * 1000), FairShare: 1000, Rho: rho}
}

func (a *accounts) TenantAccount(id ledger.TenantID) (ledger.Account, bool) {
	acct, ok := a.tenants[id]
	return acct, ok
}

func (a *accounts) JobAccount(id ledger.JobID) (ledger.Account, bool) {
	acct, ok := a.jobs[id]
	return acct, ok
}

func (a *accounts) TenantFairRate(id ledger.TenantID) (float64, bool) {
	r, ok := a.rates[id]
	return r, ok
}

// plainAccounts hides TenantFairRate.
type plainAccounts struct{ a *accounts }

func (p plainAccounts) TenantAccount(id ledger.TenantID) (ledger.Account, bool) {
	return p.a.TenantAccount(id)
}
func (p plainAccounts) JobAccount(id ledger.JobID) (ledger.Account, bool) { return p.a.JobAccount(id) }

// opaquePlacer hides everything but the Placer interface (no clone, no
// Allocation, no Free), to exercise the round's fallbacks.
type opaquePlacer struct{ p placement.Placer }

func (o opaquePlacer) Place(d int) (placement.Placement, error)        { return o.p.Place(d) }
func (o opaquePlacer) Fits(d int) bool                                 { return o.p.Fits(d) }
func (o opaquePlacer) Allocate(id string, p placement.Placement) error { return o.p.Allocate(id, p) }
func (o opaquePlacer) Release(id string) (placement.Placement, error)  { return o.p.Release(id) }

// withoutPlacerOnly adds the cluster's PlaceWithout to an opaquePlacer: the
// optimistic look in one call, still without a clone.
type withoutPlacerOnly struct {
	opaquePlacer
	c *placement.Cluster
}

func (w withoutPlacerOnly) PlaceWithout(d int, ids []string) (placement.Placement, error) {
	return w.c.PlaceWithout(d, ids)
}

// clonerPlacer gives an opaquePlacer a ClonePlacer: the optimistic view
// as a copy of the cluster, taken once per round.
type clonerPlacer struct {
	opaquePlacer
	c *placement.Cluster
}

func (p clonerPlacer) ClonePlacer() placement.Placer {
	c := p.c.Clone()
	return clonerPlacer{opaquePlacer{c}, c}
}

// cluster returns a cluster of nodes nodes of gpus GPUs each; tb is a
// testing.TB or a *rapid.T.
func cluster(tb interface {
	Helper()
	Fatal(...any)
}, nodes, gpus int) *placement.Cluster {
	tb.Helper()
	ns := make([]placement.Node, nodes)
	for i := range ns {
		ns[i] = placement.Node{ID: fmt.Sprintf("node-%d", i+1), GPUs: gpus}
	}
	c, err := placement.NewCluster(ns)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// verifyCluster calls Check on the cluster.
func verifyCluster(tb testing.TB, c *placement.Cluster) {
	tb.Helper()
	if err := c.Check(); err != nil {
		tb.Fatalf("cluster invariant: %v", err)
	}
}

func slot(node string, gpus ...int) placement.Slot { return placement.Slot{Node: node, GPUs: gpus} }

// The ledger's View is the accounting a round reads by default.
var (
	_ Accounts         = ledger.View{}
	_ FairRater        = ledger.View{}
	_ placement.Placer = (*placement.Cluster)(nil)
)

func samePlacement(a, b placement.Placement) bool { return a.Equal(b) }

// gpuKey names one GPU of a node.
type gpuKey struct {
	node string
	gpu  int
}
