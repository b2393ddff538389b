package baselines

import "github.com/astraea-sched/astraea/simulate"

// Entry names one baseline with its default configuration.
type Entry struct {
	Name    string // the policy's Name()
	Summary string // one line for a command's help text
	// New builds a fresh policy value. Policies keep state between ticks, so
	// every simulation needs its own.
	New simulate.Constructor
}

// All returns every baseline with its default configuration, in the order of
// the ASTRAEA paper's comparison (FIFO first as the reference). It builds a
// new table on every call; there is no package-level registry to mutate.
func All() []Entry {
	return []Entry{
		{"fifo", "one global queue in submission order, no preemption (reference)",
			func() (simulate.Policy, error) { return NewFIFO(FIFOConfig{}), nil }},
		{"yarn-cs", "static capacity per tenant, FIFO inside it, no preemption (YARN capacity scheduler)",
			func() (simulate.Policy, error) { return NewYARNCS(YARNConfig{}), nil }},
		{"hived", "guaranteed cells per tenant, opportunistic jobs on idle cells (HiveD, OSDI '20)",
			func() (simulate.Policy, error) { return NewHiveD(HiveDConfig{}) }},
		{"allox", "shortest remaining time among the tenants furthest below fair share (AlloX, EuroSys '20)",
			func() (simulate.Policy, error) { return NewAlloX(DefaultAlloXConfig()) }},
		{"tiresias-l", "two-dimensional least attained service, 2 queues (Tiresias-L, NSDI '19)",
			func() (simulate.Policy, error) { return NewTiresias(DefaultTiresiasConfig()) }},
		{"themis", "finish-time fairness with leases, f = 0.8 (Themis, NSDI '20)",
			func() (simulate.Policy, error) { return NewThemis(DefaultThemisConfig()) }},
		{"gandiva-fair", "gang-aware stride scheduling of tenant tickets (Gandiva_fair, EuroSys '20)",
			func() (simulate.Policy, error) { return NewGandivaFair(GandivaFairConfig{}) }},
	}
}

// Constructors returns [All] as a name → constructor map, the shape of
// astraea.Policies, so that a command can merge the baselines with the
// ASTRAEA policy and its ablations ("astraea-eq8", "astraea-single",
// "astraea-nocredit"), which package astraea provides.
func Constructors() map[string]simulate.Constructor {
	all := All()
	m := make(map[string]simulate.Constructor, len(all))
	for _, e := range all {
		m[e.Name] = e.New
	}
	return m
}

// Lookup returns the entry named name from [All].
func Lookup(name string) (Entry, bool) {
	for _, e := range All() {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}
