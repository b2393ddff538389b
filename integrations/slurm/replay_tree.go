package slurm

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// addTreeTenants registers every association of t that is a tenant (not
// Fairshare=parent, not root) under its effective parent, parents first.
// It returns which associations are kept out of the ledger: those with 0
// shares and everything below them.
func addTreeTenants(l *ledger.Ledger, t *Tree, at time.Time) ([]bool, error) {
	excluded := make([]bool, t.Len())
	for i := 1; i < t.Len(); i++ {
		a := t.assocs[i]
		e := t.eff[i]
		if e > 0 && excluded[e] {
			excluded[i] = true
		}
		if a.UseParent || excluded[i] {
			continue
		}
		if a.Shares == 0 {
			excluded[i] = true
			continue
		}
		parent := ledger.TenantID("")
		if e > 0 {
			parent = ledger.TenantID(t.assocs[e].key())
		}
		if err := ensureTenant(l, at, ledger.TenantID(a.key()), parent, a.Shares); err != nil {
			return nil, fmt.Errorf("%w (association on line %d)", err, a.Line)
		}
	}
	return excluded, nil
}

// treeRows reads every association's account over [from, to) and ranks
// the leaves (see Row.Rank).
func treeRows(l *ledger.Ledger, t *Tree, excluded []bool, zeroUse map[string]ledger.GPUSeconds, from, to time.Time) ([]Row, error) {
	n := t.Len()
	rows := make([]Row, n)
	depth := make([]int, n)
	// Children after parents in tree order: fill the tenants first, then
	// sum Fairshare=parent and excluded inner rows bottom up.
	for i := 1; i < n; i++ {
		a := t.assocs[i]
		depth[i] = depth[t.parent[i]] + 1
		r := Row{Account: a.Account, User: a.User, Depth: depth[i], UseParent: a.UseParent,
			RawShares: a.Shares, NormShares: t.norm(i)}
		if c, ok := t.charge(a.Account, a.User); ok && (c == i || (a.UseParent && a.User != "")) {
			r.Charge = t.assocs[c].key()
		}
		if !a.UseParent && !excluded[i] {
			acct, err := l.TenantAccount(ledger.TenantID(a.key()), from, to)
			if err != nil {
				return nil, fmt.Errorf("slurm: replay: %w", err)
			}
			r.Used, r.Owed, r.Rho = acct.Alloc, acct.FairShare, acct.Rho
		}
		rows[i] = r
	}
	for i := n - 1; i >= 1; i-- {
		if t.assocs[i].UseParent || excluded[i] {
			if excluded[i] && !t.assocs[i].UseParent {
				rows[i].Used += zeroUse[t.assocs[i].key()]
			}
			if t.assocs[i].User == "" || !t.assocs[i].UseParent {
				rows[i].Rho = ledger.Ratio(rows[i].Used, rows[i].Owed)
			} else {
				rows[i].Rho = 1 // its use is its account's
			}
		}
		if p := t.parent[i]; p > 0 && (t.assocs[p].UseParent || excluded[p]) {
			rows[p].Used += rows[i].Used
			rows[p].Owed += rows[i].Owed
		}
	}
	rankTree(t, rows)
	return rows[1:], nil
}

// rankTree ranks the leaves of the accounting: a walk from the root visits
// each node's tenant children by ρ, then key; leaves get 1, 2, ... in visit
// order, and consecutive sibling leaves of equal ρ share a rank.
func rankTree(t *Tree, rows []Row) {
	next := 1
	var walk func(i int)
	walk = func(i int) {
		kids := t.tenantChildren(i)
		slices.SortStableFunc(kids, func(a, b int) int {
			return cmp.Or(rows[a].Rho.Compare(rows[b].Rho), cmp.Compare(t.assocs[a].key(), t.assocs[b].key()))
		})
		prev := -1
		for _, c := range kids {
			if t.inner[c] {
				walk(c)
				prev = -1
				continue
			}
			if prev >= 0 && rows[prev].Rho.Compare(rows[c].Rho) == 0 {
				rows[c].Rank = rows[prev].Rank
			} else {
				rows[c].Rank = next
			}
			next++
			prev = c
		}
	}
	walk(0)
}
