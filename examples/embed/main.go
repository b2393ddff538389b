// Command embed shows how to keep an astraea ledger beside a scheduler you
// already have. The scheduler here is deliberately plain: its own job queue,
// its own pool of 16 GPUs, its own event loop, no astraea placement and no
// astraea rounds. The ledger only listens: the scheduler reports every
// submission, start, stop and finish at the time it happens, and reads the
// accounts back whenever it decides what to run next.
//
// Each decision point orders the teams by their long-term fairness ratio ρ
// (ledger.View(now).TenantAccount, lowest first, then name), and the waiting
// jobs of a team by their own ρ (lowest first, then submission time, then
// id), and starts every job that fits in that order. When GPUs disappear
// (a node goes to maintenance) it stops jobs of the best-served team first.
//
// The script is one day of a toy cluster with three teams, every time
// explicit, so the output is the same on every run. At midnight it prints the
// day's report (GPU-hours used, GPU-hours owed, ρ per team), writes the ledger
// to a snapshot file, "restarts" by reading that file back, and finishes the
// jobs still running with the restored ledger.
//
// Run it with:
//
//	go run ./examples/embed
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

func main() {
	dir, err := os.MkdirTemp("", "astraea-embed-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	if err := run(os.Stdout, filepath.Join(dir, "ledger.snap")); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

// day0 is the midnight the script starts at.
var day0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// run plays the scripted day, writes the snapshot to snap, restarts from it
// and drains the queue, printing everything to w.
func run(w io.Writer, snap string) error {
	s, err := NewScheduler(day0, 16, Teams(), w)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "A 16-GPU cluster, teams %s, day %s (times UTC)\n\n", teamList(Teams()), day0.Format("2006-01-02"))
	midnight := day0.Add(24 * time.Hour)
	if err := s.Run(Script(), midnight); err != nil {
		return err
	}
	fmt.Fprintln(w)
	before := s.Report(day0, midnight)
	fmt.Fprint(w, before)

	// Snapshot and restart. A real scheduler persists its own queue in its
	// own store; the ledger has WriteFile (atomic) and ReadFile.
	if err := s.Ledger.WriteFile(snap); err != nil {
		return err
	}
	restored, err := ledger.ReadFile(snap)
	if err != nil {
		return err
	}
	s.Ledger = restored
	after := s.Report(day0, midnight)
	same := "identical"
	if after != before {
		same = "DIFFERENT"
	}
	fmt.Fprintf(w, "\nsnapshot written and read back at %s: accounts %s\n\n", clock(midnight), same)

	end, err := s.Drain()
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, s.Report(day0, end))
	return nil
}
