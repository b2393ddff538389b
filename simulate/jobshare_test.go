package simulate

import (
	"errors"
	"strings"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
)

// rateWatcher is greedy, renewing, and records job j's fair rate in the
// policy's accounts at each tick.
type rateWatcher struct {
	greedy
	rate map[int]float64 // by second since t0
}

func (w *rateWatcher) Schedule(s *State) (Decision, error) {
	if r, ok := s.Accounts.JobFairRate("j"); ok {
		w.rate[int(s.Now.Sub(t0).Seconds())] = r
	}
	return w.greedy.Schedule(s)
}

// TestJobShareSplitsThePolicysAccounts: one 1-GPU job alone in a tenant
// owning the whole 8-GPU node is owed 1 GPU under the capped rule and all
// 8 under the split one, in the accounts the policy reads; the results'
// ρ_job is read under the capped rule either way (the job ran all its
// life: ρ 1).
func TestJobShareSplitsThePolicysAccounts(t *testing.T) {
	for _, tc := range []struct {
		share ledger.JobShare
		rate  float64
	}{
		{ledger.CappedJobShare, 1},
		{ledger.SplitJobShare, 8},
	} {
		t.Run(tc.share.String(), func(t *testing.T) {
			cfg := testConfig(1, 8, "a")
			cfg.JobShare = tc.share
			cfg.Lease = sec(50)
			w := &rateWatcher{greedy: greedy{lease: sec(50), renew: true}, rate: map[int]float64{}}
			r, err := Run(cfg, src(tj("j", "a", 1, 0, 1000)), w)
			if err != nil {
				t.Fatal(err)
			}
			if got := w.rate[500]; got != tc.rate {
				t.Fatalf("job j's fair rate read at 500 s: %v, want %v (all reads %v)", got, tc.rate, w.rate)
			}
			if len(r.Run.Jobs) != 1 || r.Run.Jobs[0].Rho != 1 {
				t.Fatalf("job records %+v, want one job at ρ 1", r.Run.Jobs)
			}
		})
	}
}

func TestJobShareMustBeKnown(t *testing.T) {
	cfg := testConfig(1, 8, "a")
	cfg.JobShare = 9
	if _, err := Run(cfg, src(tj("j", "a", 1, 0, 10)), &greedy{}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "JobShare(9)") {
		t.Fatalf("an unknown job share rule: %v, want ErrConfig naming it", err)
	}
}
