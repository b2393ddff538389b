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

// Policies returns the policies of this package by name: "astraea" (the
// paper's configuration) and its variants "astraea-eq8" (Eq. 8 tenant
// accounts), "astraea-single" (job ledger only, no tenant phase),
// "astraea-nocredit" (no lease pre-credit) and the extension
// "astraea-reserve" (reservations for starving gangs after
// DefaultReserveAfter; see AstraeaOptions.ReserveAfter). The map is built
// on every call; a command adds other packages' policies (the baselines)
// to its own copy.
func Policies() map[string]Constructor {
	m := make(map[string]Constructor, 5)
	for _, o := range astraeaVariants() {
		m[o.Name] = func() (Policy, error) { return NewAstraea(o) }
	}
	return m
}

// PolicyNames returns the keys of m, sorted.
func PolicyNames(m map[string]Constructor) []string {
	return slices.Sorted(maps.Keys(m))
}
