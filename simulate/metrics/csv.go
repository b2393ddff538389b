package metrics

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// ErrDuplicatePolicy reports two runs with the same policy name given to
// WriteCSV or WriteFigures: their rows and lines could not be told apart.
var ErrDuplicatePolicy = errors.New("metrics: duplicate policy name")

// CSV file names written by WriteCSV.
const (
	JobsCSV        = "jobs.csv"
	TenantsCSV     = "tenants.csv"
	UtilizationCSV = "utilization.csv"
)

// WriteCSV writes three CSV files into dir (created if needed), each with a
// leading policy column so that runs of several policies sit side by side:
//
//   - jobs.csv: policy,job,tenant,gpus,submit,first_start,end,run_s,held_s,
//     queue_s,jct_s,slowdown,rho,preemptions,state — one row per job,
//     sorted by (submit, job); times RFC 3339 UTC, empty when unset; ρ
//     "+Inf" when infinite; slowdown with a 1 s minimum divisor.
//   - tenants.csv: policy,tenant,interval_s,from,to,alloc_gpu_s,fair_gpu_s,
//     rho — one row per (tenant, interval), sorted by (interval length,
//     from, tenant).
//   - utilization.csv: policy,at,used,capacity — occupancy steps in time
//     order.
//
// Runs appear in the order given. Numbers use the shortest exact decimal
// form, so equal runs give byte-identical files. A name (policy, job,
// tenant, state) that a spreadsheet would read as a formula — one that
// starts with =, +, -, @, a tab or a carriage return — is written with a
// leading apostrophe, as OWASP's CSV-injection guidance suggests, so that a
// trace's tenant "=1+2" opens as text.
func WriteCSV(dir string, runs ...Run) error {
	if err := checkPolicies(runs); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	err := writeCSVFile(filepath.Join(dir, JobsCSV),
		[]string{"policy", "job", "tenant", "gpus", "submit", "first_start", "end", "run_s", "held_s", "queue_s", "jct_s", "slowdown", "rho", "preemptions", "state"},
		func(emit func(...string) error) error {
			for _, r := range runs {
				jobs := slices.Clone(r.Jobs)
				slices.SortStableFunc(jobs, cmpJobs)
				for _, j := range jobs {
					var queue, jct, slow string
					if j.Finished() || !j.FirstStart.IsZero() {
						queue = secs(j.Queueing())
					}
					if j.Finished() {
						jct = secs(j.JCT())
						slow = ffmt(j.Slowdown(time.Second))
					}
					if err := emit(text(r.Policy), text(j.ID), text(j.Tenant), strconv.Itoa(j.GPUs), tfmt(j.Submit), tfmt(j.FirstStart), tfmt(j.End),
						secs(j.Run), secs(j.Held), queue, jct, slow, rfmt(j.Rho), strconv.Itoa(j.Preemptions), text(j.State)); err != nil {
						return err
					}
				}
			}
			return nil
		})
	if err != nil {
		return err
	}
	err = writeCSVFile(filepath.Join(dir, TenantsCSV),
		[]string{"policy", "tenant", "interval_s", "from", "to", "alloc_gpu_s", "fair_gpu_s", "rho"},
		func(emit func(...string) error) error {
			for _, r := range runs {
				ts := slices.Clone(r.Tenants)
				slices.SortStableFunc(ts, cmpIntervals)
				for _, t := range ts {
					if err := emit(text(r.Policy), text(t.Tenant), secs(t.IntervalLength()), tfmt(t.From), tfmt(t.To),
						ffmt(float64(t.Account.Alloc)), ffmt(float64(t.Account.FairShare)), rfmt(t.Rho())); err != nil {
						return err
					}
				}
			}
			return nil
		})
	if err != nil {
		return err
	}
	return writeCSVFile(filepath.Join(dir, UtilizationCSV), []string{"policy", "at", "used", "capacity"},
		func(emit func(...string) error) error {
			for _, r := range runs {
				pts := slices.Clone(r.Util)
				slices.SortStableFunc(pts, cmpUtil)
				for _, p := range pts {
					if err := emit(text(r.Policy), tfmt(p.At), strconv.Itoa(p.Used), strconv.Itoa(p.Capacity)); err != nil {
						return err
					}
				}
			}
			return nil
		})
}

func cmpIntervals(a, b TenantInterval) int {
	return cmp.Or(cmp.Compare(a.IntervalLength(), b.IntervalLength()), a.From.Compare(b.From), cmp.Compare(a.Tenant, b.Tenant))
}

// text makes a name safe to open in a spreadsheet (see WriteCSV): it
// prefixes an apostrophe when the name starts with a formula character.
func text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func checkPolicies(runs []Run) error {
	seen := map[string]bool{}
	for _, r := range runs {
		if seen[r.Policy] {
			return fmt.Errorf("%w: %q", ErrDuplicatePolicy, r.Policy)
		}
		seen[r.Policy] = true
	}
	return nil
}

func writeCSVFile(path string, header []string, rows func(emit func(...string) error) error) error {
	return writeAtomic(path, func(out io.Writer) error {
		w := csv.NewWriter(out)
		if err := w.Write(header); err != nil {
			return err
		}
		if err := rows(func(rec ...string) error { return w.Write(rec) }); err != nil {
			return err
		}
		w.Flush()
		return w.Error()
	})
}

func tfmt(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func secs(d time.Duration) string { return ffmt(d.Seconds()) }

func ffmt(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func rfmt(r ledger.Rho) string {
	if r.IsInf() {
		return "+Inf"
	}
	return ffmt(float64(r))
}
