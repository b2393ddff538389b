package baselines

import (
	"github.com/astraea-sched/astraea/simulate/astraea"
)

// Ablations returns the three ASTRAEA ablations of the paper's discussion,
// package astraea's policy with one option of astraea.DefaultOptions
// changed:
//
//   - "astraea-eq8": tenant accounts by Eq. 8 (fair share = min(demand,
//     quota)) instead of Eq. 16 (quota, accruing while idle);
//   - "astraea-single": no tenant level, Phase 2 over all jobs (the job
//     ledger alone);
//   - "astraea-nocredit": no pre-credit of demand × lease after a grant, so
//     a tenant can be picked again in the same round without seeing what it
//     was just given.
//
// The constructors are those of astraea.Policies, so either table gives the
// same runs.
func Ablations() []Entry {
	p := astraea.Policies()
	return []Entry{
		{"astraea-eq8", "ASTRAEA with Eq. 8 (demand-aware) tenant accounts", p["astraea-eq8"]},
		{"astraea-single", "ASTRAEA without the tenant level (job ledger only)", p["astraea-single"]},
		{"astraea-nocredit", "ASTRAEA without the lease pre-credit", p["astraea-nocredit"]},
	}
}
