// Command astraea-slurm replays Slurm accounting into an astraea ledger and
// prints, per account, the GPU-hours used and owed and the long-term
// fairness ratio ρ, like sshare does for Slurm's own fair share. Given the
// pending jobs (squeue), it prints, or with -apply runs, the
// `scontrol update JobId=N SiteFactor=V` commands that raise the priority of
// the accounts owed the most.
//
// Usage:
//
//	sacct -a -X -D -P -o JobIDRaw,Account,AllocTRES,ReqTRES,Submit,Start,End,State,User -S 2024-05-01 > sacct.txt
//	sshare -a -P > sshare.txt
//	sinfo -h -N -o "%n|%G" > sinfo.txt
//	astraea-slurm -sacct sacct.txt -sshare sshare.txt -sinfo sinfo.txt -from 2024-05-01T00:00:00
//
//	squeue -h -t PD -o "%i|%a|%b|%u|%P" > squeue.txt
//	astraea-slurm -sacct sacct.txt -sshare sshare.txt -sinfo sinfo.txt -squeue squeue.txt [-apply]
//
// A cron job continues a saved ledger, reading only the accounting since
// the previous run:
//
//	S=$(astraea-slurm -state ledger.state -state-time 2>/dev/null || echo 2024-05-01)
//	sacct ... -S "$S" > sacct.txt
//	astraea-slurm -state ledger.state -sacct sacct.txt -sshare sshare.txt -sinfo sinfo.txt
//
// Run with -h for every flag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"strings"
	"time"

	"github.com/astraea-sched/astraea/integrations/slurm"
	"github.com/astraea-sched/astraea/internal/rfc3339"
	"github.com/astraea-sched/astraea/ledger"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, time.Now(), slurm.ExecRunner); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "astraea-slurm:", err)
		}
		os.Exit(2)
	}
}

// run is the whole command with its environment as parameters, for tests.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, wallNow time.Time, runner slurm.Runner) error {
	fs := flag.NewFlagSet("astraea-slurm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		sacctPath  = fs.String("sacct", "-", "sacct -P output (`file`, - for stdin): "+slurm.SacctFormat)
		ssharePath = fs.String("sshare", "", "`file` of `"+slurm.SshareCommand+"` output: the tree of accounts and users, with their RawShares")
		assocPath  = fs.String("assoc", "", "`file` of `"+slurm.AssocCommand+"` output: the tree, instead of -sshare")
		weightPath = fs.String("weights", "", "`file` of account,weight lines (instead of -sshare)")
		capacity   = fs.Int("capacity", 0, "cluster GPUs M (or use -sinfo)")
		sinfoPath  = fs.String("sinfo", "", "`file` of `"+slurm.SinfoCommand+"` output: capacity = Σ GPUs")
		squeuePath = fs.String("squeue", "", "`file` of `"+slurm.SqueueCommand+"` output: print scontrol SiteFactor updates instead of the report")
		modeFlag   = fs.String("mode", "demand", "fair share: demand (Eq. 8, min(demand, quota)) or quota (Eq. 16, quota accrues while idle)")
		fromFlag   = fs.String("from", "", "window start (`time` "+slurm.TimeLayout+" in -tz, or RFC 3339); default the earliest submission")
		toFlag     = fs.String("to", "", "window end (`time`); default -now")
		nowFlag    = fs.String("now", "", "when the accounting was taken (`time`): running jobs are billed up to it; default the current time")
		tzFlag     = fs.String("tz", "Local", "time `zone` of Slurm's times (IANA name, Local or UTC)")
		halfLife   = fs.Duration("halflife", 0, "decay old usage with this half-life (like PriorityDecayHalfLife), e.g. 168h")
		format     = fs.String("format", "text", "report format: text, csv or json")
		lenient    = fs.Bool("lenient", false, "skip bad lines and count them instead of failing")
		maxFactor  = fs.Int64("sitefactor-max", 1000, "SiteFactor of the account owed the most; the last rank gets 0")
		apply      = fs.Bool("apply", false, "with -squeue: run the scontrol commands instead of only printing them")
		scontrol   = fs.String("scontrol", "scontrol", "scontrol `program` used by -apply")
		reportPath = fs.String("report", "", "with -squeue: also write the report, with why each pending job waits, to this `file`")
		leaseFlag  = fs.Duration("lease", time.Hour, "with -squeue: the lease the explaining round pre-credits per grant")
		statePath  = fs.String("state", "", "ledger snapshot `file`: continue it if it exists (give sacct -S its time, see -state-time), then save it")
		stateTime  = fs.Bool("state-time", false, "print the time of the -state snapshot (for sacct -S) and exit")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: astraea-slurm -sacct FILE (-sshare FILE | -weights FILE) (-capacity N | -sinfo FILE) [flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *maxFactor < 0 || *maxFactor > slurm.MaxSiteFactor {
		return fmt.Errorf("-sitefactor-max must lie in [0, %d], not %d: %w", slurm.MaxSiteFactor, *maxFactor, slurm.ErrSiteFactor)
	}
	loc, err := time.LoadLocation(*tzFlag)
	if err != nil {
		return fmt.Errorf("-tz: %w", err)
	}
	opts := slurm.Options{Location: loc, Lenient: *lenient}
	var mode ledger.Mode
	switch *modeFlag {
	case "demand":
		mode = ledger.DemandAware
	case "quota":
		mode = ledger.QuotaShare
	default:
		return fmt.Errorf("-mode %q: want demand or quota", *modeFlag)
	}
	var resume *ledger.Ledger
	if *statePath != "" {
		if resume, err = ledger.ReadFile(*statePath); errors.Is(err, iofs.ErrNotExist) {
			resume, err = nil, nil
		}
		if err != nil {
			return fmt.Errorf("-state: %w", err)
		}
	}
	if *stateTime {
		if resume == nil {
			return errors.New("-state-time needs an existing -state file")
		}
		_, err := fmt.Fprintln(stdout, resume.Now().In(loc).Format(slurm.TimeLayout))
		return err
	}
	now := wallNow
	if *nowFlag != "" {
		if now, err = parseTime(*nowFlag, loc); err != nil {
			return fmt.Errorf("-now: %w", err)
		}
	}
	var from, to time.Time
	if *fromFlag != "" {
		if from, err = parseTime(*fromFlag, loc); err != nil {
			return fmt.Errorf("-from: %w", err)
		}
	}
	if *toFlag != "" {
		if to, err = parseTime(*toFlag, loc); err != nil {
			return fmt.Errorf("-to: %w", err)
		}
	}
	warn := func(what string, s slurm.Skipped) {
		if s.Total() > 0 {
			fmt.Fprintf(stderr, "astraea-slurm: %s: skipped %d lines: %s\n", what, s.Total(), s)
		}
	}

	// Weights: a tree (sshare, sacctmgr) or a flat list.
	var weights map[string]float64
	var tree *slurm.Tree
	given := 0
	for _, p := range []string{*ssharePath, *assocPath, *weightPath} {
		if p != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return errors.New("use one of -sshare, -assoc and -weights")
	case *ssharePath != "":
		err = withFile(*ssharePath, stdin, func(r io.Reader) error {
			var sk slurm.Skipped
			tree, sk, err = slurm.ParseShareTree(r, opts)
			warn("sshare", sk)
			return err
		})
	case *assocPath != "":
		err = withFile(*assocPath, stdin, func(r io.Reader) error {
			var sk slurm.Skipped
			tree, sk, err = slurm.ParseAssoc(r, opts)
			warn("sacctmgr", sk)
			return err
		})
	case *weightPath != "":
		err = withFile(*weightPath, stdin, func(r io.Reader) error {
			var sk slurm.Skipped
			weights, sk, err = slurm.ParseWeights(r, opts)
			warn("weights", sk)
			return err
		})
	}
	if err != nil {
		return err
	}

	// Capacity.
	m := *capacity
	var nodes []slurm.Node
	if *sinfoPath != "" {
		if m != 0 {
			return errors.New("use -capacity or -sinfo, not both")
		}
		err = withFile(*sinfoPath, stdin, func(r io.Reader) error {
			var sk slurm.Skipped
			nodes, m, sk, err = slurm.ParseSinfo(r, opts)
			warn("sinfo", sk)
			return err
		})
		if err != nil {
			return err
		}
	}
	if m <= 0 {
		return errors.New("the cluster has no GPUs: give -capacity N or -sinfo FILE")
	}

	// Accounting.
	var jobs []slurm.Job
	err = withFile(*sacctPath, stdin, func(r io.Reader) error {
		recs, sk, err := slurm.ParseSacct(r, opts)
		if err != nil {
			return err
		}
		warn("sacct", sk)
		jobs, sk, err = slurm.GroupJobs(recs, *lenient)
		warn("sacct jobs", sk)
		return err
	})
	if err != nil {
		return err
	}
	if tree != nil && !anyUser(jobs) {
		// Accounting without the User column: charge jobs to accounts.
		if tree, err = tree.WithoutUsers(); err != nil {
			return err
		}
		if len(jobs) > 0 {
			fmt.Fprintln(stderr, "astraea-slurm: sacct has no User column: users left out of the tree")
		}
	}
	rep, err := slurm.Replay(jobs, slurm.Config{Mode: mode, Capacity: ledger.GPUs(m), Weights: weights, Tree: tree,
		Now: now, From: from, To: to, HalfLife: *halfLife, Lenient: *lenient,
		Resume: resume, Persist: *statePath != ""})
	if err != nil {
		return err
	}
	if *statePath != "" {
		if err := rep.Ledger.WriteFile(*statePath); err != nil {
			return fmt.Errorf("-state: %w", err)
		}
	}
	warn("accounts", rep.Skipped)
	rep.Partitions = slurm.Partitions(nodes)
	if ig := slurm.Skipped(rep.Ignored); ig.Total() > 0 {
		fmt.Fprintf(stderr, "astraea-slurm: %d jobs without effect on the window: %s\n", ig.Total(), ig)
	}

	if *squeuePath == "" {
		if *apply {
			return errors.New("-apply needs -squeue")
		}
		return slurm.WriteReport(stdout, rep, *format)
	}
	var pending []slurm.PendingJob
	err = withFile(*squeuePath, stdin, func(r io.Reader) error {
		var sk slurm.Skipped
		pending, sk, err = slurm.ParsePending(r, opts)
		warn("squeue", sk)
		return err
	})
	if err != nil {
		return err
	}
	if *reportPath != "" {
		if len(nodes) == 0 {
			nodes = []slurm.Node{{Name: "cluster", GPUs: m, Used: -1}}
		}
		if rep.Pending, err = slurm.Explain(rep, tree, pending, nodes, *leaseFlag); err != nil {
			return err
		}
		f, err := os.Create(*reportPath)
		if err != nil {
			return err
		}
		if err := slurm.WriteReport(f, rep, *format); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	updates, err := slurm.SiteFactors(rep.Rows, pending, *maxFactor)
	if err != nil {
		return err
	}
	for _, u := range updates {
		fmt.Fprintln(stdout, u)
	}
	if *apply {
		return slurm.Apply(ctx, runner, *scontrol, updates)
	}
	return nil
}

// anyUser reports whether some job names its user.
func anyUser(jobs []slurm.Job) bool {
	for _, j := range jobs {
		if j.User != "" {
			return true
		}
	}
	return false
}

// withFile calls f with the named file, or with stdin for "-".
func withFile(path string, stdin io.Reader, f func(io.Reader) error) error {
	if path == "-" {
		return f(stdin)
	}
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	return f(file)
}

// timeError is parseTime's error: the text at fault. It matches
// slurm.ErrBadTime with errors.Is.
type timeError struct{ s string }

func (e *timeError) Error() string {
	return fmt.Sprintf("%q: want %s, RFC 3339 or a date", e.s, slurm.TimeLayout)
}

// Unwrap returns slurm.ErrBadTime.
func (e *timeError) Unwrap() error { return slurm.ErrBadTime }

// parseTime accepts Slurm's layout (in loc), RFC 3339 and a bare date. An
// error is a *timeError.
func parseTime(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.ParseInLocation(slurm.TimeLayout, s, loc); err == nil {
		return t, nil
	}
	if t, err := rfc3339.Parse(s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		return t, nil
	}
	return time.Time{}, &timeError{s}
}
