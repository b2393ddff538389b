package astraea

import (
	"testing"
	"time"

	"github.com/astraea-sched/astraea/simulate"
)

// TestDisplaceYoung: on one 8-GPU node, job old (4 GPUs, tenant a) starts
// at 0; a new 8-GPU job of new's tenant arrives at submit. With
// DisplaceYoung 300 s a new job of old's own tenant that arrives 100 s into
// old's lease takes the node at once, and old loses those 100 s; one that
// arrives 400 s in, or one of another tenant, waits for old's lease to end.
func TestDisplaceYoung(t *testing.T) {
	for _, tc := range []struct {
		name        string
		tenant      string
		submit      int
		displaced   bool
		startsAfter time.Duration // a lower bound of the new job's start when not displaced
	}{
		{"own tenant, 100 s into the lease", "a", 100, true, 0},
		{"own tenant, 400 s into the lease", "a", 400, false, sec(900)},
		{"another tenant, 100 s into the lease", "b", 100, false, sec(900)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(1, 8, "a", "b")
			o := DefaultOptions()
			o.DisplaceYoung = 300 * time.Second
			p, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			r := mustRun(t, cfg, src(tj("old", "a", 4, 0, 2000), tj("new", tc.tenant, 8, tc.submit, 50)), p)
			old, nj := jobByID(t, r, "old"), jobByID(t, r, "new")
			start := nj.FirstStart.Sub(t0)
			if tc.displaced {
				if start != sec(tc.submit) || old.Lost != sec(tc.submit) || old.Checkpoint != 0 || old.Preemptions != 1 {
					t.Fatalf("new starts at %v (want %v); old %+v, want %v lost, no checkpoint, one preemption", start, sec(tc.submit), old, sec(tc.submit))
				}
				if r.Stats.Checkpoints != 0 {
					t.Fatalf("%d checkpoints written for an abort", r.Stats.Checkpoints)
				}
			} else if start < tc.startsAfter || old.Lost != 0 {
				t.Fatalf("new starts at %v (want after %v); old lost %v", start, tc.startsAfter, old.Lost)
			}
			for _, j := range r.Run.Jobs {
				if !j.Finished() {
					t.Errorf("job %s never finished", j.ID)
				}
			}
		})
	}
}

func TestDisplaceYoungTraitsAndErrors(t *testing.T) {
	o := DefaultOptions()
	o.DisplaceYoung = time.Minute
	p, _ := New(o)
	if tr := p.Traits(); tr != (simulate.Traits{ProgressBlind: true}) {
		t.Fatalf("a displacing policy declares %+v: it may act at any tick", tr)
	}
	o.DisplaceYoung = -1
	if _, err := New(o); err == nil {
		t.Fatal("a negative DisplaceYoung accepted")
	}
}
