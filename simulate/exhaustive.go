package simulate

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/astraea-sched/astraea/simulate/trace"
)

// ErrShortcut is matched by errors.Is for the difference CompareExhaustive
// finds between a run with the engine's shortcuts and the same run without
// them.
var ErrShortcut = errors.New("simulate: a shortcut changed the run")

// CompareExhaustive runs the jobs of newSource twice, each under a fresh
// policy from newPolicy: with cfg as given, and with cfg.Exhaustive set
// (no shortcut of the engine's, no trait of the policy's assumed). It
// returns the first run, and an error matching ErrShortcut that names the
// first difference unless the two runs are identical: every job record,
// tenant interval, utilization point, tenant total and count.
//
// It is the check a policy's author runs, on random workloads, to see that
// the Traits the policy declares hold: a trait the policy does not honour
// (say IdleWhenNothingFits for a policy that preempts at any tick) shows
// as a difference. Cost: two runs.
func CompareExhaustive(cfg Config, newSource func() trace.Source, newPolicy Constructor) (*Result, error) {
	var res [2]*Result
	for i := range res {
		c := cfg
		c.Exhaustive = i == 1
		p, err := newPolicy()
		if err != nil {
			return nil, err
		}
		if res[i], err = Run(c, newSource(), p); err != nil {
			return nil, err
		}
	}
	short, long := res[0], res[1]
	if err := firstDifference(short, long); err != nil {
		return short, fmt.Errorf("%w: %s (policy %s)", ErrShortcut, err, short.Run.Policy)
	}
	return short, nil
}

// firstDifference describes the first difference between a and b, or is
// nil when they are identical.
func firstDifference(a, b *Result) error {
	for i := range min(len(a.Run.Jobs), len(b.Run.Jobs)) {
		if x, y := a.Run.Jobs[i], b.Run.Jobs[i]; !reflect.DeepEqual(x, y) {
			return fmt.Errorf("job record %d: %+v with shortcuts, %+v without", i, x, y)
		}
	}
	switch {
	case len(a.Run.Jobs) != len(b.Run.Jobs):
		return fmt.Errorf("%d job records with shortcuts, %d without", len(a.Run.Jobs), len(b.Run.Jobs))
	case a.Stats != b.Stats:
		return fmt.Errorf("counts %+v with shortcuts, %+v without", a.Stats, b.Stats)
	case !reflect.DeepEqual(a.Run, b.Run):
		return errors.New("the tenant intervals, utilization or totals differ")
	case !reflect.DeepEqual(a.Excluded, b.Excluded):
		return errors.New("the excluded jobs differ")
	}
	return nil
}
