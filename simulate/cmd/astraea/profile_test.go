package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

func TestProfilesNameRealFlags(t *testing.T) {
	for _, p := range profiles() {
		// Applying the profile sets each of its flags (an unknown flag or
		// a bad value fails, here or, for a flag read as text, in
		// checkFlags).
		o, err := parseFlags([]string{"-profile", p.name}, io.Discard, io.Discard)
		if err == nil {
			err = checkFlags(o)
		}
		if err != nil {
			t.Errorf("profile %s: %v", p.name, err)
		}
		seen := map[string]bool{}
		for _, s := range p.settings {
			if seen[s.flag] {
				t.Errorf("profile %s sets -%s twice", p.name, s.flag)
			}
			seen[s.flag] = true
			if s.source == "" {
				t.Errorf("profile %s: -%s has no source", p.name, s.flag)
			}
		}
	}
}

func TestProfileValuesAndOverrides(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		admit string
		over  bool
	}{
		{"the default profile is paper, which owes from the tick", nil, "tick", false},
		{"v1 owes from the submission", []string{"-profile", "v1"}, "submit", false},
		{"a flag given overrides its profile's value", []string{"-profile", "v1", "-admit", "tick"}, "tick", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseFlags(c.args, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if o.admit != c.admit {
				t.Errorf("-admit %q, want %q", o.admit, c.admit)
			}
			for _, cv := range o.conv {
				if cv.Flag == "admit" && (cv.Overridden != c.over || cv.Value != c.admit) {
					t.Errorf("convention %+v, want value %q overridden %v", cv, c.admit, c.over)
				}
			}
		})
	}
	if _, err := parseFlags([]string{"-profile", "nope"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "-profile") {
		t.Errorf("unknown profile: error %v, want one naming -profile", err)
	}
}

func TestPhasesAggregateEveryPolicy(t *testing.T) {
	var rep report
	if err := json.Unmarshal([]byte(runArgs(t, "-json", "-jobs", "300", "-phases", "3", "-policy", "astraea,fifo")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Phases != 3 || len(rep.Runs) != 6 || len(rep.Aggregate) != 2 {
		t.Fatalf("phases %d, %d runs, %d aggregates; want 3, 6, 2", rep.Phases, len(rep.Runs), len(rep.Aggregate))
	}
	want := []float64{0, 10.0 / 3, 20.0 / 3}
	for i, r := range rep.Runs {
		if d := r.TickPhase - want[i%3]; d > 1e-6 || d < -1e-6 {
			t.Errorf("run %d at tick phase %v s, want %v", i, r.TickPhase, want[i%3])
		}
	}
	for i, a := range rep.Aggregate {
		if a.Policy != []string{"astraea", "fifo"}[i] || a.Runs != 3 {
			t.Errorf("aggregate %d: %s over %d runs", i, a.Policy, a.Runs)
		}
		for _, k := range []string{"sharing_loss_jobs", "jct_mean_seconds", "tenant_loss_eq8_1h", "tenant_loss_eq16_1h", "overhead_direct"} {
			b, ok := a.Metrics[k]
			if !ok {
				t.Errorf("%s: no %s", a.Policy, k)
				continue
			}
			// The band holds every run's value.
			for _, r := range rep.Runs[3*i : 3*i+3] {
				x := map[string]float64{"sharing_loss_jobs": r.Summary.SharingLossJobs, "jct_mean_seconds": r.Summary.JCT.Mean, "overhead_direct": r.Summary.Overhead.Direct}
				if v, ok := x[k]; ok && (v < b.Min || v > b.Max) {
					t.Errorf("%s %s: run value %v outside [%v, %v]", a.Policy, k, v, b.Min, b.Max)
				}
			}
			if !(b.Min <= b.Mean && b.Mean <= b.Max) {
				t.Errorf("%s %s: mean %v outside [%v, %v]", a.Policy, k, b.Mean, b.Min, b.Max)
			}
		}
	}
	text := runArgs(t, "-jobs", "300", "-phases", "2")
	if !strings.Contains(text, "tick phases: 2") || !strings.Contains(text, "runs") {
		t.Errorf("text output does not show the phases:\n%s", text)
	}
	for _, bad := range [][]string{{"-phases", "0"}, {"-phases", "-1"}, {"-phases", "1001"}} {
		if err := run(bad, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "-phases") {
			t.Errorf("run %v: error %v, want one naming -phases", bad, err)
		}
	}
}

func TestPolicyLayerFlagsNameThemselves(t *testing.T) {
	for _, c := range []struct{ flag, value string }{
		{"-placement", "scatter"}, {"-new-jobs", "largest"}, {"-starved-below", "2"}, {"-wait-first", "-1s"},
	} {
		err := run([]string{c.flag, c.value, "-jobs", "10", "-quiet"}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%s %s: error %v, want one naming %s", c.flag, c.value, err, c.flag)
		}
	}
}

// TestAuthorsProfileKeepsHourlyBuckets: the authors profile's accounts are
// the current hour and the 23 before it, as the authors' simulator keeps
// them, and a plain -history 24h still gives the continuous window.
func TestAuthorsProfileKeepsHourlyBuckets(t *testing.T) {
	for _, c := range []struct {
		args []string
		want ledger.History
	}{
		{[]string{"-profile", "authors"}, ledger.Buckets(24, time.Hour)},
		{[]string{"-profile", "authors", "-history", "24h"}, ledger.TrailingWindow(24 * time.Hour)},
		{[]string{"-profile", "paper"}, ledger.Unbounded()},
	} {
		o, err := parseFlags(c.args, io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if h, err := parseHistory(o.history); err != nil || h != c.want {
			t.Errorf("%q: history %v, %v; want %v", c.args, h, err, c.want)
		}
	}
}
