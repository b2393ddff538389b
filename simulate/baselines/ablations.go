package baselines

import (
	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/simulate"
)

// Ablations returns the three ASTRAEA ablations of the paper's discussion,
// built on package simulate's ASTRAEA policy (simulate.NewAstraea), each
// changing one option of simulate.DefaultAstraeaOptions:
//
//   - "astraea-eq8": tenant accounts by Eq. 8 (fair share = min(demand,
//     quota)) instead of Eq. 16 (quota, accruing while idle);
//   - "astraea-single": no tenant level, Phase 2 over all jobs (the job
//     ledger alone);
//   - "astraea-nocredit": no pre-credit of demand × lease after a grant, so
//     a tenant can be picked again in the same round without seeing what it
//     was just given.
//
// The names match simulate.Policies, so either table gives the same runs.
func Ablations() []Entry {
	with := func(name string, change func(*simulate.AstraeaOptions)) simulate.Constructor {
		return func() (simulate.Policy, error) {
			o := simulate.DefaultAstraeaOptions()
			o.Name = name
			change(&o)
			return simulate.NewAstraea(o)
		}
	}
	return []Entry{
		{"astraea-eq8", "ASTRAEA with Eq. 8 (demand-aware) tenant accounts",
			with("astraea-eq8", func(o *simulate.AstraeaOptions) { o.Accounts = ledger.DemandAware })},
		{"astraea-single", "ASTRAEA without the tenant level (job ledger only)",
			with("astraea-single", func(o *simulate.AstraeaOptions) { o.SingleLevel = true })},
		{"astraea-nocredit", "ASTRAEA without the lease pre-credit",
			with("astraea-nocredit", func(o *simulate.AstraeaOptions) { o.NoPreCredit = true })},
	}
}
