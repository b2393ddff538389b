package main

import (
	"fmt"
	"os"
	"time"

	"github.com/astraea-sched/astraea/lease"
	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// flagError is a flag value the command refuses. Its message starts with
// the flag's name, as the user typed it, not the Go field it sets; it
// matches the sentinel of the setting it would have made (simulate.ErrConfig
// or trace.ErrSyntheticConfig), so that a check here and the library's own
// check are the same error to errors.Is.
type flagError struct {
	flag string // without the dash
	msg  string
	err  error
}

func (e *flagError) Error() string { return "-" + e.flag + " " + e.msg }
func (e *flagError) Unwrap() error { return e.err }

// checkFlags refuses the first bad numeric flag value, in the order of the
// checks below, before anything is read or run. simulate.Config.Validate
// stays the backstop for what these checks do not cover.
func checkFlags(o options) error {
	span := func(d time.Duration) bool { return d >= 0 && d <= lease.MaxSpan }
	var herr *historyError
	historyMsg := ""
	if _, err := parseHistory(o.history); err != nil {
		herr = err.(*historyError)
		historyMsg = herr.Error()
	}
	for _, c := range []struct {
		ok        bool
		flag, msg string
		err       error
	}{
		{o.nodes > 0, "nodes", fmt.Sprintf("must be > 0 (got %d)", o.nodes), simulate.ErrConfig},
		{o.nodes <= simulate.MaxNodes, "nodes", fmt.Sprintf("must be at most %d (got %d)", simulate.MaxNodes, o.nodes), simulate.ErrConfig},
		{o.gpn > 0, "gpus-per-node", fmt.Sprintf("must be > 0 (got %d)", o.gpn), simulate.ErrConfig},
		{o.gpn <= simulate.MaxClusterGPUs/max(o.nodes, 1), "gpus-per-node", fmt.Sprintf("%d × -nodes %d must be at most %d GPUs", o.gpn, o.nodes, simulate.MaxClusterGPUs), simulate.ErrConfig},
		{o.interval > 0, "interval", fmt.Sprintf("must be > 0 (got %v)", o.interval), simulate.ErrConfig},
		{o.lease > 0, "lease", fmt.Sprintf("must be > 0 (got %v)", o.lease), simulate.ErrConfig},
		{span(o.checkpoint), "checkpoint", fmt.Sprintf("must lie in [0, %v] (got %v)", lease.MaxSpan, o.checkpoint), simulate.ErrConfig},
		{span(o.cold), "coldstart", fmt.Sprintf("must lie in [0, %v] (got %v)", lease.MaxSpan, o.cold), simulate.ErrConfig},
		{span(o.iteration), "iteration", fmt.Sprintf("must lie in [0, %v] (got %v)", lease.MaxSpan, o.iteration), simulate.ErrConfig},
		// A resumed job would spend its whole lease in cold start, or a
		// renewed one in its checkpoint, and never progress.
		{o.lease > o.cold, "lease", fmt.Sprintf("%v must be longer than -coldstart %v", o.lease, o.cold), simulate.ErrConfig},
		{!o.checkpointOnRenew || o.lease > o.checkpoint, "lease",
			fmt.Sprintf("%v must be longer than -checkpoint %v (or -checkpoint-on-renew=false)", o.lease, o.checkpoint), simulate.ErrConfig},
		{o.trace != "" || o.jobs >= 0, "jobs", fmt.Sprintf("must be ≥ 0 (got %d)", o.jobs), trace.ErrSyntheticConfig},
		{o.trace != "" || o.jobs <= trace.MaxSyntheticJobs, "jobs", fmt.Sprintf("must be ≤ %d (got %d)", trace.MaxSyntheticJobs, o.jobs), trace.ErrSyntheticConfig},
		{o.spreadSlowdown > 0 && o.spreadSlowdown <= 1, "spread-slowdown", fmt.Sprintf("must lie in (0, 1], 1 for no slowdown (got %v)", o.spreadSlowdown), simulate.ErrConfig},
		{herr == nil, "history", historyMsg, herr},
		{o.parallel >= 0, "parallel", fmt.Sprintf("must be ≥ 0, 0 for one policy per processor (got %d)", o.parallel), simulate.ErrConfig},
	} {
		if !c.ok {
			return &flagError{flag: c.flag, msg: c.msg, err: c.err}
		}
	}
	return nil
}

// checkOutDir makes the -out directory and proves it writable with a file
// it creates and removes, so that a read-only or missing directory fails
// before the simulation, not after it.
func checkOutDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("-out %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".astraea-probe-")
	if err != nil {
		return fmt.Errorf("-out %s is not writable: %w", dir, err)
	}
	name := f.Name()
	err = f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("-out %s is not writable: %w", dir, err)
	}
	return nil
}
