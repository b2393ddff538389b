package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/astraea-sched/astraea/ledger"
)

// ErrQuota reports a quota file that cannot be used: no tenant or value
// column, a duplicate tenant, a negative or non-numeric value, or no
// positive value at all. Row-level problems arrive as a *RowError wrapping
// ErrQuota.
var ErrQuota = errors.New("invalid quota table")

// quotaTenantColumns and quotaValueColumns are tried in order; a value
// column may also be named by prefix (gpus_official_<date>, quota_gpus_<n>).
var (
	quotaTenantColumns = []string{"tenant", "vc", "name", "cluster", "user", ""}
	quotaValueColumns  = []string{"weight", "share", "gpus_official", "quota", "gpus", "num", "node num", "nodes"}
)

// ReadQuotas reads tenant weights from a CSV file (gzip transparent): one
// row per tenant, a tenant column (tenant, vc, name, cluster, user, or an
// unnamed first column) and a value column, chosen in this order of
// preference: weight, share, gpus_official*, quota*, gpus*, num, node num,
// nodes. Only ratios matter — the ledger divides the capacity in proportion
// to the weights — so GPU counts, node counts and normalised shares are all
// valid.
//
// For the Venus official sizes (vc,gpus_official_2020_09_07,weight,...) it
// uses weight; for the derived tables (vc,...,share,quota_gpus_N) share; for
// the artifact's name,share files share; for vc,node num node counts.
func ReadQuotas(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer f.Close()
	return ParseQuotas(f, path)
}

// ParseQuotas reads a quota table from r as ReadQuotas does; name labels
// errors.
func ParseQuotas(r io.Reader, name string) (map[string]float64, error) {
	rd, gz, err := newRecords(r, name, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrQuota, err)
	}
	if gz != nil {
		defer gz.Close()
	}
	hdr, _, err := rd.read()
	if err == io.EOF {
		return nil, fmt.Errorf("trace: %s: header: %w: empty input", name, ErrQuota)
	}
	if err != nil {
		return nil, quotaErr(name, err)
	}
	h := make([]string, len(hdr))
	for i, s := range hdr {
		h[i] = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(s, "\ufeff")))
	}
	tcol := -1
	for _, want := range quotaTenantColumns {
		if i := slices.Index(h, want); i >= 0 && (want != "" || i == 0) {
			tcol = i
			break
		}
	}
	vcol := -1
	for _, want := range quotaValueColumns {
		for i, n := range h {
			if i != tcol && (n == want || strings.HasPrefix(n, want+"_")) {
				vcol = i
				break
			}
		}
		if vcol >= 0 {
			break
		}
	}
	if tcol < 0 || vcol < 0 {
		return nil, fmt.Errorf("trace: %s: %w: need a tenant column and a weight column, have %q", name, ErrQuota, excerpt(strings.Join(h, ",")))
	}
	out := make(map[string]float64)
	total := 0.0
	for {
		rec, line, err := rd.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, quotaErr(name, err)
		}
		if len(rec) <= max(tcol, vcol) {
			return nil, &RowError{File: name, Line: line, Column: h[len(rec)], Err: fmt.Errorf("%w: %w", ErrQuota, ErrMissingColumn)}
		}
		t := strings.TrimSpace(rec[tcol])
		if t == "" {
			return nil, &RowError{File: name, Line: line, Column: h[tcol], Err: fmt.Errorf("%w: %w", ErrQuota, ErrEmptyField)}
		}
		if _, dup := out[t]; dup {
			return nil, &RowError{File: name, Line: line, Column: h[tcol], Value: excerpt(t), Err: fmt.Errorf("%w: duplicate tenant", ErrQuota)}
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[vcol]), 64)
		if err != nil {
			return nil, &RowError{File: name, Line: line, Column: h[vcol], Value: excerpt(rec[vcol]), Err: fmt.Errorf("%w: %w", ErrQuota, ErrNumber)}
		}
		if !(v >= ledger.MinWeight && v <= ledger.MaxWeight) { // NaN fails; the ledger takes no other weight
			return nil, &RowError{File: name, Line: line, Column: h[vcol], Value: excerpt(rec[vcol]),
				Err: fmt.Errorf("%w: %w: outside [%v, %v]", ErrQuota, ErrWeight, ledger.MinWeight, ledger.MaxWeight)}
		}
		out[t] = v
		total += v
	}
	if !(total > 0) {
		return nil, fmt.Errorf("trace: %s: %w: no positive weight", name, ErrQuota)
	}
	return out, nil
}

// RequestedQuotas consumes src and returns each tenant's summed GPU
// requests, Σ GPUs over its jobs: the paper's quota rule for Philly, whose
// VC sizes were never published. Open the trace again to replay it.
func RequestedQuotas(src Source) (map[string]float64, error) {
	out := make(map[string]float64)
	if err := each(src, func(j Job) { out[j.Tenant] += float64(j.GPUs) }); err != nil {
		return nil, err
	}
	return out, nil
}

// EqualQuotas consumes src and gives every tenant that appears in it the
// weight 1.
func EqualQuotas(src Source) (map[string]float64, error) {
	out := make(map[string]float64)
	if err := each(src, func(j Job) { out[j.Tenant] = 1 }); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadAll drains src into a slice. It is a convenience for small traces and
// tests; the simulator streams instead.
func ReadAll(src Source) ([]Job, error) {
	var out []Job
	err := each(src, func(j Job) { out = append(out, j) })
	return out, err
}

// each calls fn on every job of src until io.EOF, which it reports as nil;
// any other error stops it and is returned.
func each(src Source, fn func(Job)) error {
	for {
		j, err := src.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		fn(j)
	}
}

// quotaErr makes a read error of a quota file match ErrQuota too, keeping
// the line it names.
func quotaErr(name string, err error) error {
	var re *RowError
	if errors.As(err, &re) {
		return &RowError{File: re.File, Line: re.Line, Column: re.Column, Value: re.Value, Err: fmt.Errorf("%w: %w", ErrQuota, re.Err)}
	}
	return fmt.Errorf("trace: %s: %w: %w", name, ErrQuota, err)
}
