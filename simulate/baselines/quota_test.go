package baselines

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/simulate"
	"pgregory.net/rapid"
)

// The largest-remainder split is checked against its definition in exact
// rational arithmetic: every tenant gets ⌊share⌋ or ⌈share⌉ of the exact
// share w ÷ Σw × M, the total is M, and a tenant rounded up never has a
// smaller fractional part than one rounded down (equal parts: the earlier
// name first).
func TestCapacitiesLargestRemainder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(t, "tenants")
		quotas := map[string]float64{}
		for i := range n {
			// Small integer weights keep the float shares exact, so the
			// rational oracle and the code see the same numbers.
			quotas[fmt.Sprintf("t%d", i)] = float64(rapid.IntRange(0, 12).Draw(t, "weight"))
		}
		m := rapid.IntRange(0, 40).Draw(t, "gpus")
		got := Capacities(quotas, m)
		sum := new(big.Rat)
		for _, w := range quotas {
			sum.Add(sum, new(big.Rat).SetFloat64(w))
		}
		if len(got) != n {
			t.Fatalf("%d capacities for %d tenants: %v", len(got), n, got)
		}
		total := 0
		type part struct {
			name string
			frac *big.Rat
			up   bool
		}
		var parts []part
		for name, w := range quotas {
			total += got[name]
			if sum.Sign() == 0 || m == 0 {
				if got[name] != 0 {
					t.Fatalf("%s: %d GPUs with no weight or no GPUs", name, got[name])
				}
				continue
			}
			share := new(big.Rat).Mul(new(big.Rat).Quo(new(big.Rat).SetFloat64(w), sum), new(big.Rat).SetInt64(int64(m)))
			floor := new(big.Int).Quo(share.Num(), share.Denom())
			frac := new(big.Rat).Sub(share, new(big.Rat).SetInt(floor))
			switch f := floor.Int64(); {
			case int64(got[name]) == f:
				parts = append(parts, part{name, frac, false})
			case int64(got[name]) == f+1 && frac.Sign() > 0:
				parts = append(parts, part{name, frac, true})
			default:
				t.Fatalf("%s: %d GPUs, exact share %s (all %v, quotas %v)", name, got[name], share.FloatString(3), got, quotas)
			}
		}
		if want := m; sum.Sign() == 0 {
			want = 0
			if total != want {
				t.Fatalf("total %d, want 0", total)
			}
		} else if total != want {
			t.Fatalf("total %d, want %d (%v, quotas %v)", total, want, got, quotas)
		}
		for _, u := range parts {
			for _, d := range parts {
				if !u.up || d.up {
					continue
				}
				if c := u.frac.Cmp(d.frac); c < 0 || c == 0 && u.name > d.name {
					t.Fatalf("%s rounded up (fraction %s) before %s (fraction %s): %v, quotas %v",
						u.name, u.frac.FloatString(3), d.name, d.frac.FloatString(3), got, quotas)
				}
			}
		}
	})
}

// A tenant without a positive quota (absent, zero, negative or NaN) holds the
// mean weight of the tenants with one, so it is neither starved nor
// favoured; with no quotas at all everyone holds 1.
func TestGandivaFairTickets(t *testing.T) {
	s := &simulate.State{Quotas: map[string]float64{"a": 2, "b": 4, "c": -1, "d": math.NaN(), "e": 0}}
	got := tickets(s, []string{"a", "b", "c", "d", "e", "f"})
	want := map[string]float64{"a": 2, "b": 4, "c": 3, "d": 3, "e": 3, "f": 3}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("tickets[%s] = %v, want %v (all %v)", k, got[k], v, got)
		}
	}
	if got := tickets(&simulate.State{}, []string{"x"}); got["x"] != 1 {
		t.Errorf("no quotas: tickets[x] = %v, want 1", got["x"])
	}
}

func TestGandivaFairRejectsNegativeQuantum(t *testing.T) {
	if _, err := NewGandivaFair(GandivaFairConfig{Quantum: -time.Second}); !errors.Is(err, ErrConfig) {
		t.Errorf("NewGandivaFair(Quantum: -1s) = %v, want ErrConfig", err)
	}
	if _, err := NewGandivaFair(GandivaFairConfig{Quantum: time.Second}); err != nil {
		t.Errorf("NewGandivaFair(Quantum: 1s) = %v", err)
	}
}

// Inside a tenant the least recently run job is chosen at each boundary, so
// two long jobs on one GPU take turns: the second starts at the first
// boundary, and the first comes back at the next one.
func TestGandivaFairRoundRobinInsideTenant(t *testing.T) {
	q := 900 * time.Second
	cfg := simConfig(1, 1, map[string]float64{"a": 1})
	res := run(t, cfg, mustPolicy(NewGandivaFair(GandivaFairConfig{Quantum: q}))(t),
		job("a1", "a", 1, 0, 3*900), job("a2", "a", 1, 1, 3*900))
	a1, a2 := record(t, res, "a1"), record(t, res, "a2")
	if !a1.FirstStart.Equal(at(0)) {
		t.Errorf("a1 first started at %v, want t0", a1.FirstStart.Sub(t0))
	}
	if got := a2.FirstStart.Sub(t0); got < q || got > q+time.Minute {
		t.Errorf("a2 first started after %v, want at the first boundary %v (plus the suspension's checkpoint)", got, q)
	}
	if !a2.FirstStart.Before(a1.End) {
		t.Errorf("no turns: a1 ran %v–%v before a2 started at %v", a1.FirstStart.Sub(t0), a1.End.Sub(t0), a2.FirstStart.Sub(t0))
	}
	if a1.Preemptions == 0 || a2.Preemptions == 0 {
		t.Errorf("preemptions a1 %d, a2 %d; want both suspended at least once", a1.Preemptions, a2.Preemptions)
	}
}

func TestConfigErrorText(t *testing.T) {
	_, err := NewGandivaFair(GandivaFairConfig{Quantum: -time.Second})
	if got, want := err.Error(), "baselines: gandiva-fair: Quantum = -1s: must not be negative"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
}

// A zero Quantum slices at the engine's lease.
func TestGandivaFairQuantumDefaultsToTheLease(t *testing.T) {
	cfg := simConfig(1, 1, map[string]float64{"a": 1})
	cfg.Lease = 300 * time.Second
	res := run(t, cfg, mustPolicy(NewGandivaFair(GandivaFairConfig{}))(t),
		job("a1", "a", 1, 0, 3*900), job("a2", "a", 1, 1, 3*900))
	if got := record(t, res, "a2").FirstStart.Sub(t0); got < cfg.Lease || got > cfg.Lease+time.Minute {
		t.Errorf("a2 first started after %v, want at the first boundary, the lease %v (plus a checkpoint)", got, cfg.Lease)
	}
}
