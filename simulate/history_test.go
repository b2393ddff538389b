package simulate

import (
	"errors"
	"strings"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
)

// watcher is greedy, renewing, and records tenant a's account at each tick.
type watcher struct {
	greedy
	alloc map[int]ledger.GPUSeconds // by second since t0
}

func (w *watcher) Schedule(s *State) (Decision, error) {
	a, _ := s.Accounts.TenantAccount("a")
	w.alloc[int(s.Now.Sub(t0).Seconds())] = a.Alloc
	return w.greedy.Schedule(s)
}

// TestHistoryWindowsThePolicysAccounts: with Config.History a trailing
// window of 100 s, a policy reads a tenant's account over the last 100 s
// only (one GPU running: 100 GPU·s, not all since the start), while the
// results' ρ are read from books that remember everything.
func TestHistoryWindowsThePolicysAccounts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		history ledger.History
		at500   ledger.GPUSeconds
	}{
		{"unbounded", ledger.Unbounded(), 500},
		{"a 100 s window", ledger.TrailingWindow(sec(100)), 100},
		// at 500 s two 100 s buckets are [400, 500) and [500, 500)
		{"two 100 s buckets", ledger.Buckets(2, sec(100)), 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(1, 8, "a")
			cfg.History = tc.history
			cfg.Lease = sec(50)
			w := &watcher{greedy: greedy{lease: sec(50), renew: true}, alloc: map[int]ledger.GPUSeconds{}}
			r, err := Run(cfg, src(tj("j", "a", 1, 0, 1000)), w)
			if err != nil {
				t.Fatal(err)
			}
			if got := w.alloc[500]; got != tc.at500 {
				t.Fatalf("tenant a's Alloc read at 500 s: %v, want %v (all reads %v)", got, tc.at500, w.alloc)
			}
			if n, _ := tc.history.Bucketed(); n > 0 {
				// at 550 s the buckets are [400, 500) and [500, 550)
				if got := w.alloc[550]; got != 150 {
					t.Fatalf("tenant a's Alloc read at 550 s: %v, want 150 (all reads %v)", got, w.alloc)
				}
			}
			if len(r.Run.Jobs) != 1 || r.Run.Jobs[0].Rho != 1 {
				t.Fatalf("job records %+v, want one job at ρ 1", r.Run.Jobs)
			}
		})
	}
}

func TestHistoryMustBePositive(t *testing.T) {
	for name, h := range map[string]ledger.History{
		"a zero window":       ledger.TrailingWindow(0),
		"no buckets":          ledger.Buckets(0, sec(100)),
		"a zero bucket width": ledger.Buckets(24, 0),
	} {
		cfg := testConfig(1, 8, "a")
		cfg.History = h
		if _, err := Run(cfg, src(tj("j", "a", 1, 0, 10)), &greedy{}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "History") {
			t.Fatalf("%s: %v, want ErrConfig naming History", name, err)
		}
	}
}
