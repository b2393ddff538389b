package simulate

import (
	"maps"
	"slices"

	"github.com/astraea-sched/astraea/ledger"
)

// Constructor builds a fresh policy for one run. Policies may keep state
// between ticks, so every run needs its own value.
type Constructor func() (Policy, error)

// AccountsModer is implemented by a policy that must read its accounts in a
// given ledger mode (for example the Eq. 8 variant of ASTRAEA); [Run] then
// keeps the ledger policies see in that mode, overriding Config.Accounts.
type AccountsModer interface {
	AccountsMode() ledger.Mode
}

// PolicyNames returns the keys of m, sorted.
func PolicyNames(m map[string]Constructor) []string {
	return slices.Sorted(maps.Keys(m))
}
