package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate"
)

func TestLayerFlagsRejectBadValues(t *testing.T) {
	for _, c := range []struct {
		args []string
		want error
	}{
		{[]string{"-placement", "fewest"}, placement.ErrInvalidMode},
		{[]string{"-new-jobs", "largest"}, simulate.ErrConfig},
	} {
		var out, errOut bytes.Buffer
		if err := run(append([]string{"-jobs", "50", "-quiet"}, c.args...), &out, &errOut); !errors.Is(err, c.want) {
			t.Errorf("run %v: %v, want %v", c.args, err, c.want)
		}
	}
}

// TestLayerFlagsReachEveryPolicy: on a queued synthetic workload,
// -placement spread changes the schedule of ASTRAEA and of a baseline
// (every policy places through the engine's cluster), -placement firstfit
// too, and ASTRAEA's otherwise than spread does, and -new-jobs smallest
// changes ASTRAEA's.
func TestLayerFlagsReachEveryPolicy(t *testing.T) {
	base := []string{"-json", "-jobs", "800", "-nodes", "10", "-overhead=false", "-policy", "astraea,tiresias-l",
		"-placement", "strict", "-new-jobs", "fifo"} // not the profile's: a later flag overrides
	runs := map[string][]runReport{}
	for name, extra := range map[string][]string{
		"default":  nil,
		"spread":   {"-placement", "spread"},
		"firstfit": {"-placement", "firstfit"},
		"smallest": {"-new-jobs", "smallest"},
	} {
		var r report
		if err := json.Unmarshal([]byte(runArgs(t, append(slices.Clone(base), extra...)...)), &r); err != nil {
			t.Fatal(err)
		}
		runs[name] = r.Runs
	}
	jct := func(name string, i int) float64 { return runs[name][i].Summary.JCT.Mean }
	if jct("default", 0) == jct("spread", 0) || jct("default", 1) == jct("spread", 1) {
		t.Errorf("-placement spread changed nothing: avg JCT astraea %v → %v, tiresias-l %v → %v",
			jct("default", 0), jct("spread", 0), jct("default", 1), jct("spread", 1))
	}
	// Both spreading modes admit a gang exactly when enough GPUs are
	// free, so without a spread slowdown only where the gang goes tells
	// them apart: ASTRAEA's preemptions, which look at the nodes.
	if jct("default", 0) == jct("firstfit", 0) || jct("default", 1) == jct("firstfit", 1) || jct("firstfit", 0) == jct("spread", 0) {
		t.Errorf("-placement firstfit: avg JCT astraea %v (spread %v, strict %v), tiresias-l %v (strict %v)",
			jct("firstfit", 0), jct("spread", 0), jct("default", 0), jct("firstfit", 1), jct("default", 1))
	}
	if jct("default", 0) == jct("smallest", 0) {
		t.Errorf("-new-jobs smallest changed nothing for astraea: avg JCT %v", jct("default", 0))
	}
	if jct("default", 1) != jct("smallest", 1) {
		t.Errorf("-new-jobs smallest changed tiresias-l: avg JCT %v → %v", jct("default", 1), jct("smallest", 1))
	}
}
