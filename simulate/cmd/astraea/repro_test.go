package main

import (
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/astraea-sched/astraea/internal/testtraces"
	"github.com/astraea-sched/astraea/simulate/metrics"
)

// fig builds the figures of policies whose sharing loss and mean JCT are
// given.
func fig(t *testing.T, vals map[string][2]float64) figures {
	t.Helper()
	f := figures{}
	for p, v := range vals {
		a, err := metrics.AggregateRuns(metrics.Summary{Policy: p, SharingLossJobs: v[0], JCT: metrics.Stats{Mean: v[1]}})
		if err != nil {
			t.Fatal(err)
		}
		f[p] = a
	}
	return f
}

func TestReproChecks(t *testing.T) {
	f := fig(t, map[string][2]float64{"astraea": {0.07, 100}, "themis": {0.2, 90}, "yarn-cs": {0.7, 300}})
	for _, c := range []struct {
		name  string
		check check
		ok    bool
	}{
		{"the fewest sharing-loss jobs holds", lowest("astraea", "sharing_loss_jobs", "loss"), true},
		{"the lowest JCT fails when another policy is lower", lowest("astraea", "jct_mean_seconds", "JCT"), false},
		{"a ratio inside the tolerance holds", ratio("themis", "astraea", "sharing_loss_jobs", 2.8, 0.3), true},
		{"a ratio outside the tolerance fails", ratio("yarn-cs", "astraea", "sharing_loss_jobs", 2.8, 0.3), false},
		{"an ordering that rises holds", ordered("sharing_loss_jobs", "loss", []string{"astraea"}, []string{"themis", "yarn-cs"}), true},
		{"an ordering that does not rise fails", ordered("jct_mean_seconds", "JCT", []string{"astraea", "themis"}, []string{"yarn-cs"}), false},
		{"a bound met holds", atMost("astraea", "sharing_loss_jobs", 0.071, "loss"), true},
		{"a bound missed fails", atMost("themis", "sharing_loss_jobs", 0.071, "loss"), false},
		{"a policy that did not run fails", lowest("hived", "sharing_loss_jobs", "loss"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, detail := c.check.eval(f)
			if ok != c.ok || detail == "" {
				t.Errorf("%s: %v (%s), want %v with a detail", c.check.name, ok, detail, c.ok)
			}
		})
	}
}

// Under the authors' profile each of the paper's tenant-loss figures is
// also set beside the loss over the last 24 hourly buckets, right after the
// fixed 1 h one; under the others the claims are as written.
func TestReproClaimsOfTheAuthorsProfile(t *testing.T) {
	venus := experiments()[0]
	if got := claimsFor(venus, "paper"); len(got) != len(venus.claims) {
		t.Fatalf("paper: %d claims, want %d", len(got), len(venus.claims))
	}
	got := claimsFor(venus, "authors")
	n := 0
	for i, c := range got {
		if c.Metric != windowLossKey {
			continue
		}
		n++
		if prev := got[i-1]; prev.Metric != "tenant_loss_eq8_1h" || prev.Policy != c.Policy || prev.Paper != c.Paper {
			t.Errorf("claim %d %+v follows %+v", i, c, prev)
		}
	}
	if n != 5 || len(got) != len(venus.claims)+5 {
		t.Errorf("authors: %d window claims of %d, want 5 of %d", n, len(got), len(venus.claims)+5)
	}
}

// Under the authors' profile each check of the tenant loss over fixed hours
// is followed by the same check over the last 24 hourly buckets, which
// reads that figure: ASTRAEA lowest there, and the paper's order.
func TestReproChecksOfTheAuthorsProfile(t *testing.T) {
	venus := experiments()[0]
	if got := checksFor(venus, "paper"); len(got) != len(venus.checks) {
		t.Fatalf("paper: %d checks, want %d", len(got), len(venus.checks))
	}
	got := checksFor(venus, "authors")
	if len(got) != len(venus.checks)+2 {
		t.Fatalf("authors: %d checks, want %d", len(got), len(venus.checks)+2)
	}
	// ASTRAEA lowest over the window although not over fixed hours; the
	// order holds over the window only.
	f := figures{}
	for p, v := range map[string][2]float64{
		"astraea": {0.09, 0.05}, "allox": {0.07, 0.06}, "gandiva-fair": {0.08, 0.07},
		"yarn-cs": {0.40, 0.45}, "tiresias-l": {0.50, 0.49},
	} {
		f[p] = metrics.Aggregate{Policy: p, Metrics: map[string]metrics.Band{
			"tenant_loss_eq8_1h": {Mean: v[0], Min: v[0], Max: v[0]},
			windowLossKey:        {Mean: v[1], Min: v[1], Max: v[1]},
		}}
	}
	n := 0
	for i, c := range got {
		if c.key != windowLossKey {
			continue
		}
		n++
		prev := got[i-1]
		if prev.key != "tenant_loss_eq8_1h" {
			t.Errorf("check %q follows %q", c.name, prev.name)
		}
		if ok, detail := prev.eval(f); ok {
			t.Errorf("%q holds over fixed hours: %s", prev.name, detail)
		}
		if ok, detail := c.eval(f); !ok {
			t.Errorf("%q fails over the window: %s", c.name, detail)
		}
	}
	if n != 2 {
		t.Errorf("%d window checks, want 2", n)
	}
}

func TestReproNeedsTraces(t *testing.T) {
	t.Setenv(tracesEnv, "")
	for _, args := range [][]string{nil, {"-only", "mars", "-traces", "x"}} {
		if err := runRepro(args, io.Discard, io.Discard, nil); err == nil || !strings.Contains(err.Error(), "repro") {
			t.Errorf("repro %v: error %v", args, err)
		}
	}
	if err := runRepro([]string{"-traces", t.TempDir()}, io.Discard, io.Discard, nil); err == nil || !strings.Contains(err.Error(), "-traces must hold") {
		t.Errorf("repro on an empty folder: error %v", err)
	}
}

// TestReproVenus runs the paper's Venus experiment as `astraea repro` does
// (every policy at 5 tick phases, the paper profile) and asserts the
// paper's claims that this reproduction meets; docs/reproduction.md gives
// the full table, and those it does not meet. Its 40 simulations take a
// few minutes of CPU, more than `go test ./...` should, so it runs only
// with ASTRAEA_REPRO=1: CI runs it in a step of its own
// (.ci/integration.d/repro.sh), with a timeout of its own.
func TestReproVenus(t *testing.T) {
	// The paper's claims this reproduction meets (docs/reproduction.md
	// lists the others with their measured values); a run is deterministic,
	// so each must hold on every machine.
	reproMustHold(t, "paper", 5, []string{
		"astraea has the lowest share of sharing-loss jobs of all policies",
		"themis ÷ astraea of sharing_loss_jobs is 2.8 ± 30 %",
		"astraea's direct preemption overhead is at most 1.00 %",
	})
}

// TestReproVenusAuthors holds the authors profile to what the README claims
// of it, at its own single tick phase.
func TestReproVenusAuthors(t *testing.T) {
	reproMustHold(t, "authors", 1, []string{
		"astraea has the lowest share of sharing-loss jobs of all policies",
		"themis ÷ astraea of sharing_loss_jobs is 2.8 ± 30 %",
		"yarn-cs ÷ astraea of sharing_loss_jobs is 10.3 ± 30 %",
		"astraea has the lowest tenant loss (Eq. 8, last 24 × 1 h, hourly) of all policies",
		"astraea's direct preemption overhead is at most 1.00 %",
	})
}

// reproMustHold runs the Venus experiment under profile at phases tick
// phases and fails unless every named check is there and holds.
func reproMustHold(t *testing.T, profile string, phases int, checks []string) {
	t.Helper()
	if os.Getenv("ASTRAEA_REPRO") != "1" {
		t.Skip("the Venus experiment (8 policies at each tick phase) runs with ASTRAEA_REPRO=1 (CI: .ci/integration.d/repro.sh)")
	}
	dir := testtraces.Dir(t)
	var sb strings.Builder
	args := []string{"-traces", dir, "-only", "venus", "-json", "-quiet", "-profile", profile, "-phases", strconv.Itoa(phases)}
	if err := runRepro(args, &sb, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	var rep reproReport
	if err := json.Unmarshal([]byte(sb.String()), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Experiments) != 1 || rep.Phases != phases || rep.Profile != profile {
		t.Fatalf("%d experiments, %d phases, profile %q", len(rep.Experiments), rep.Phases, rep.Profile)
	}
	e := rep.Experiments[0]
	if len(e.Report.Aggregate) != 8 {
		t.Fatalf("%d policies, want 8", len(e.Report.Aggregate))
	}
	for _, c := range e.Checks {
		t.Logf("%v %s (%s)", c.OK, c.Check, c.Detail)
	}
	for _, c := range e.Claims {
		t.Logf("%s %s: paper %.3f, ours %.3f [%.3f–%.3f]", c.Metric, c.Policy, c.Paper, c.Ours.Mean, c.Ours.Min, c.Ours.Max)
	}
	mustHold := map[string]bool{}
	for _, c := range checks {
		mustHold[c] = true
	}
	for _, c := range e.Checks {
		if mustHold[c.Check] && !c.OK {
			t.Errorf("the paper's claim %q no longer holds under %s: %s", c.Check, profile, c.Detail)
		}
		delete(mustHold, c.Check)
	}
	for c := range mustHold {
		t.Errorf("no check %q", c)
	}
}
