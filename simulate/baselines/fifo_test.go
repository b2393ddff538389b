package baselines

import (
	"testing"
)

func TestFIFO(t *testing.T) {
	quotas := map[string]float64{"a": 1, "b": 1}
	t.Run("jobs start in submission order", func(t *testing.T) {
		res := run(t, simConfig(1, 8, quotas), NewFIFO(FIFOConfig{}),
			job("j1", "a", 8, 0, 100),
			job("j2", "b", 4, 1, 100),
			job("j3", "a", 4, 2, 50),
			job("j4", "b", 8, 3, 10),
		)
		prev := record(t, res, "j1").FirstStart
		for _, id := range []string{"j2", "j3", "j4"} {
			r := record(t, res, id)
			if r.FirstStart.Before(prev) {
				t.Errorf("%s started at %v, before its predecessor at %v", id, r.FirstStart, prev)
			}
			prev = r.FirstStart
			if r.Preemptions != 0 {
				t.Errorf("%s preempted %d times; FIFO never preempts", id, r.Preemptions)
			}
		}
	})
	t.Run("strict FIFO blocks behind the head, backfill does not", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			backfill bool
			smallBig bool // small job starts before the big one
		}{
			{"strict", false, false},
			{"backfill", true, true},
		} {
			res := run(t, simConfig(1, 8, quotas), NewFIFO(FIFOConfig{Backfill: tc.backfill}),
				job("long", "a", 4, 0, 1000),
				job("big", "b", 8, 1, 10),
				job("small", "a", 2, 2, 10),
			)
			small, big := record(t, res, "small"), record(t, res, "big")
			if got := small.FirstStart.Before(big.FirstStart); got != tc.smallBig {
				t.Errorf("%s: small started at %v, big at %v", tc.name, small.FirstStart, big.FirstStart)
			}
		}
	})
}
