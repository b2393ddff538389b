package baselines

import (
	"testing"
	"time"

	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/astraea"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// TestEveryPolicyKeepsEngineInvariants runs every baseline on a small
// synthetic Venus-like workload with the engine's invariant checks (ledger,
// placement, decisions) on at every tick, and checks that every job finishes.
func TestEveryPolicyKeepsEngineInvariants(t *testing.T) {
	syn := trace.DefaultSynthetic()
	syn.Jobs = 300
	syn.Span = 12 * time.Hour
	for _, e := range All() {
		t.Run(e.Name, func(t *testing.T) {
			p, err := e.New()
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != e.Name {
				t.Errorf("Name() = %q, table says %q", p.Name(), e.Name)
			}
			cfg := simulate.DefaultConfig(8, 8, trace.SyntheticQuotas())
			cfg.Check = true
			cfg.CheckEvery = 1
			res, err := simulate.Run(cfg, trace.Synthetic(syn), p)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, j := range res.Run.Jobs {
				if j.Finished() {
					n++
				}
			}
			if n+len(res.Excluded) != syn.Jobs {
				t.Errorf("%d jobs finished and %d excluded of %d", n, len(res.Excluded), syn.Jobs)
			}
			t.Logf("%s: %d ticks, %d preemptions, %d renewals", e.Name, res.Stats.Ticks, res.Stats.Preemptions, res.Stats.Renewals)
		})
	}
}

func TestTableIsFresh(t *testing.T) {
	a, b := All(), All()
	a[0].Name = "changed"
	if b[0].Name == "changed" {
		t.Error("All shares its table between calls")
	}
	if _, ok := Lookup("themis"); !ok {
		t.Error("Lookup(themis) failed")
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup(nope) succeeded")
	}
	if got := len(Constructors()); got != len(All()) {
		t.Errorf("Constructors has %d entries, All %d", got, len(All()))
	}
}

func TestAblationsMatchAstraeaPolicies(t *testing.T) {
	pols := astraea.Policies()
	for _, e := range Ablations() {
		if e.New == nil {
			t.Fatalf("%s has no constructor", e.Name)
		}
		p, err := e.New()
		if err != nil {
			t.Fatal(err)
		}
		if p.Name() != e.Name {
			t.Errorf("Name() = %q, want %q", p.Name(), e.Name)
		}
		if _, ok := pols[e.Name]; !ok {
			t.Errorf("astraea.Policies has no %q", e.Name)
		}
	}
}

// The policies that skip progress refreshes must not read it: they are the
// ones whose decisions depend only on pending jobs' values and placements.
var (
	_ simulate.TraitsReporter = (*FIFO)(nil)
	_ simulate.TraitsReporter = (*YARNCS)(nil)
	_ simulate.TraitsReporter = (*HiveD)(nil)
	_ simulate.TraitsReporter = (*AlloX)(nil)
	_ simulate.TraitsReporter = (*GandivaFair)(nil)
)
