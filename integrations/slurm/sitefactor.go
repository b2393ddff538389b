package slurm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strconv"
	"strings"

	"github.com/astraea-sched/astraea/ledger"
)

// Update is one `scontrol update JobId=N SiteFactor=V` command.
type Update struct {
	JobID      string
	Account    string
	SiteFactor int64
	Rank       int        // the account's rank; 0 when the account is not in the report
	Rho        ledger.Rho // the account's ρ (1 when not in the report)
}

// Args are scontrol's arguments: update JobId=N SiteFactor=V.
func (u Update) Args() []string {
	return []string{"update", "JobId=" + u.JobID, "SiteFactor=" + strconv.FormatInt(u.SiteFactor, 10)}
}

// String is the command line, ready for a shell.
func (u Update) String() string { return "scontrol " + strings.Join(u.Args(), " ") }

// SiteFactorFor maps a rank among n ranked accounts to a site factor, the
// way Slurm's Fair Tree turns ranks into a fair-share factor: linearly, the
// best rank (1, the lowest ρ, the account owed the most) gets maxFactor and
// the last rank (n) gets 0:
//
//	V = round(maxFactor × (n − rank) ÷ (n − 1)),  n > 1;   V = maxFactor when n = 1.
//
// Accounts with equal ρ share a rank and so a factor. A rank outside [1, n]
// gets 0, and so does every rank when maxFactor lies outside
// [0, MaxSiteFactor] (SiteFactors refuses such a maximum).
func SiteFactorFor(rank, n int, maxFactor int64) int64 {
	if rank < 1 || rank > n || maxFactor < 0 || maxFactor > MaxSiteFactor {
		return 0
	}
	if n == 1 {
		return maxFactor
	}
	return int64(math.Round(float64(maxFactor) * float64(n-rank) / float64(n-1)))
}

// MaxSiteFactor is the largest SiteFactor scontrol accepts (Slurm takes
// ±2147483645). It also keeps the arithmetic of [SiteFactorFor] exact: a
// maximum of 2^63−1 printed a negative factor.
const MaxSiteFactor = 2147483645

// SiteFactors returns one Update per pending job, in input order, with the
// factor of its rank in rows (see [SiteFactorFor]; n = the ranked rows). A
// job is matched to the row of its user's association ("account|user")
// when the job names a user and rows have one, else to its account's, and
// then to the row its jobs are charged to (Row.Charge). A job whose
// account is not in rows, or whose row is not ranked, gets factor 0 and
// Rank 0. A maxFactor outside [0, MaxSiteFactor] is ErrSiteFactor.
// Complexity O(rows + jobs).
func SiteFactors(rows []Row, pending []PendingJob, maxFactor int64) ([]Update, error) {
	if maxFactor < 0 || maxFactor > MaxSiteFactor {
		return nil, fmt.Errorf("%w: maximum %d outside [0, %d]", ErrSiteFactor, maxFactor, MaxSiteFactor)
	}
	byKey := make(map[string]Row, len(rows))
	ranked := 0
	for _, r := range rows {
		byKey[Assoc{Account: r.Account, User: r.User}.key()] = r
		if r.Rank > 0 {
			ranked++
		}
	}
	out := make([]Update, 0, len(pending))
	for _, p := range pending {
		u := Update{JobID: p.ID, Account: p.Account, Rho: 1}
		r, ok := byKey[Assoc{Account: p.Account, User: p.User}.key()]
		if !ok || p.User == "" {
			r, ok = byKey[p.Account]
		}
		if ok && r.Charge != "" {
			r, ok = byKey[r.Charge]
		}
		if ok && r.Rank > 0 {
			u.Rank, u.Rho = r.Rank, r.Rho
			u.SiteFactor = SiteFactorFor(r.Rank, ranked, maxFactor)
		}
		out = append(out, u)
	}
	return out, nil
}

// Runner runs one command; Apply uses it to call scontrol. Tests inject a
// fake, [ExecRunner] runs the real program.
type Runner func(ctx context.Context, name string, args ...string) error

// ExecRunner runs the command with os/exec, its output discarded unless it
// fails, in which case the output is part of the error.
func ExecRunner(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Apply runs `scontrol update ...` for every update through run, with
// scontrol the program's path (e.g. "scontrol"). It goes on after a failure
// (a job may have started meanwhile) and returns every failure joined, each
// naming its job.
func Apply(ctx context.Context, run Runner, scontrol string, updates []Update) error {
	var errs []error
	for _, u := range updates {
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		if err := run(ctx, scontrol, u.Args()...); err != nil {
			errs = append(errs, fmt.Errorf("slurm: job %s: %w", u.JobID, err))
		}
	}
	return errors.Join(errs...)
}
