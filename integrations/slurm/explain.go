package slurm

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/sched"
)

// Waiting is a pending job and why it waits, as an astraea round over the
// free GPUs of its partition sees it.
type Waiting struct {
	PendingJob
	// Tenant is the ledger tenant the job is charged to; "" when it has
	// none (no association, or one with 0 shares).
	Tenant ledger.TenantID
	// Next is true when the round would start the job now: it is first in
	// fair order among the jobs that fit.
	Next bool
	// Why says why it waits (or "next in fair order" when Next).
	Why string
}

// Explain runs one astraea round (sched.Round) per partition over the
// pending jobs and returns, in input order, why each waits. The round reads
// the report's ledger, walks its tenant tree (sched.Options.Parent) and
// pre-credits each grant for lease; its cluster is the partition's nodes
// with their free GPUs (GPUs − GresUsed; all GPUs when sinfo did not report
// the use). A job submitted to several partitions is tried in the first;
// one whose partition is "" is tried on every node, and so is every job
// when sinfo listed no partitions. A job array pending as
// one squeue line is one candidate (its next task). Partitions that share
// nodes each see those nodes' free GPUs, since Slurm will give them to
// only one: the round is a per-partition explanation, not a plan.
// tree is the report's tree, nil for flat weights. Complexity: one round
// per partition, O(jobs log jobs) each.
func Explain(rep *Report, tree *Tree, pending []PendingJob, nodes []Node, lease time.Duration) ([]Waiting, error) {
	if rep == nil || rep.Ledger == nil {
		return nil, fmt.Errorf("slurm: explain: no replayed ledger")
	}
	if lease <= 0 {
		return nil, fmt.Errorf("slurm: explain: lease %v must be > 0", lease)
	}
	l := rep.Ledger
	out := make([]Waiting, len(pending))
	byPart := map[string][]int{}
	var parts []string
	seen := map[string]bool{}
	for i, p := range pending {
		w := Waiting{PendingJob: p}
		if seen[p.ID] {
			w.Why = "listed twice"
			out[i] = w
			continue
		}
		seen[p.ID] = true
		id, ok := ledger.TenantID(p.Account), true
		if tree != nil {
			id, ok = tree.Tenant(p.Account, p.User)
		}
		info, held := l.Tenant(id)
		switch {
		case !ok:
			w.Why = "no association with this account and user"
		case !held || !info.Registered || info.Children > 0:
			w.Why = "its association has no shares"
		case p.GPUs == 0:
			w.Why = "needs no GPUs"
		default:
			w.Tenant = id
			part, _, _ := strings.Cut(p.Partition, ",")
			if _, known := byPart[part]; !known {
				parts = append(parts, part)
			}
			byPart[part] = append(byPart[part], i)
		}
		out[i] = w
	}
	view := l.View(l.Now())
	opts := sched.Options{}
	if tree != nil {
		opts.Parent = view.TenantParent
	}
	partitioned := false // whether sinfo listed partitions at all
	for _, n := range nodes {
		partitioned = partitioned || len(n.Partitions) > 0
	}
	for _, part := range parts {
		idx := byPart[part]
		var pn []placement.Node
		known := false // whether sinfo listed the partition
		for _, n := range nodes {
			if part != "" && partitioned && !slices.Contains(n.Partitions, part) {
				continue
			}
			known = true
			free := n.GPUs
			if n.Used >= 0 {
				free -= n.Used
			}
			if free > 0 {
				pn = append(pn, placement.Node{ID: n.Name, GPUs: free})
			}
		}
		if len(pn) == 0 {
			why := "no free GPU in partition " + part
			if !known {
				why = "sinfo lists no partition " + part
			}
			for _, i := range idx {
				out[i].Why = why
			}
			continue
		}
		cluster, err := placement.NewCluster(pn)
		if err != nil {
			return nil, fmt.Errorf("slurm: explain: partition %s: %w", part, err)
		}
		cands := make([]sched.Candidate, 0, len(idx))
		for _, i := range idx {
			c := sched.Candidate{Job: ledger.JobID(pending[i].ID), Tenant: out[i].Tenant, Demand: ledger.GPUs(pending[i].GPUs)}
			if info, ok := l.Job(c.Job); ok {
				c.Submit = info.Submit
			}
			cands = append(cands, c)
		}
		res, err := sched.Round(sched.Input{Accounts: pendingAccounts{view}, Candidates: cands, Lease: lease, Placer: cluster}, opts)
		if err != nil {
			return nil, fmt.Errorf("slurm: explain: partition %s: %w", part, err)
		}
		at := map[ledger.JobID]int{}
		for _, i := range idx {
			at[ledger.JobID(pending[i].ID)] = i
		}
		for k, g := range res.Grants {
			i := at[g.Job]
			out[i].Next = true
			out[i].Why = fmt.Sprintf("next in fair order (%d of %d that fit)", k+1, len(res.Grants))
		}
		for _, w := range res.Waiting {
			out[at[w.Job]].Why = w.Reason.String()
		}
	}
	return out, nil
}

// pendingAccounts is the accounting of an explaining round: the ledger's
// accounts, and for a pending job the ledger has not seen (sacct had not
// listed it), an account with nothing received and nothing owed.
type pendingAccounts struct{ v ledger.View }

func (a pendingAccounts) TenantAccount(id ledger.TenantID) (ledger.Account, bool) {
	return a.v.TenantAccount(id)
}

func (a pendingAccounts) JobAccount(id ledger.JobID) (ledger.Account, bool) {
	if acct, ok := a.v.JobAccount(id); ok {
		return acct, true
	}
	return ledger.Account{Rho: ledger.Ratio(0, 0)}, true
}
