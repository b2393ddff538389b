package metrics

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestWriteCSV(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	runs := twoRuns()
	if err := WriteCSV(dir, runs...); err != nil {
		t.Fatal(err)
	}
	// The directory is made as MkdirAll(0o755) makes one under the umask.
	ref := filepath.Join(t.TempDir(), "ref")
	if err := os.MkdirAll(ref, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dir)
	rst, _ := os.Stat(ref)
	if err != nil || st.Mode() != rst.Mode() {
		t.Fatalf("output directory mode %v (%v), want %v", st.Mode(), err, rst.Mode())
	}
	jobs := readCSV(t, filepath.Join(dir, JobsCSV))
	if len(jobs) != 1+2*5 {
		t.Fatalf("%d job rows, want 11", len(jobs))
	}
	// Rows of the first run, sorted by (submit, id): a, b, c, d, e.
	want := [][]string{
		{"astraea", "a", "x", "1", "2020-09-07T00:00:00Z", "2020-09-07T00:00:00Z", "2020-09-07T00:01:40Z", "100", "0", "0", "100", "1", "1", "0", "COMPLETED"},
		{"astraea", "b", "x", "2", "2020-09-07T00:00:00Z", "2020-09-07T00:01:40Z", "2020-09-07T00:05:00Z", "200", "0", "100", "300", "1.5", "0.5", "0", "FAILED"},
		{"astraea", "c", "y", "1", "2020-09-07T00:00:10Z", "2020-09-07T00:00:20Z", "2020-09-07T00:00:20Z", "0", "0", "10", "10", "10", "1", "0", ""},
	}
	for i, w := range want {
		if got := jobs[1+i]; !equal(got, w) {
			t.Errorf("row %d:\n got %q\nwant %q", i+1, got, w)
		}
	}
	if e := jobs[5]; e[1] != "e" || e[6] != "" || e[9] != "" || e[10] != "" {
		t.Errorf("an unfinished job must leave end, queue and JCT empty: %q", e)
	}
	if jobs[6][0] != "yarn-cs" {
		t.Errorf("second run's rows must follow the first's: %q", jobs[6])
	}
	tenants := readCSV(t, filepath.Join(dir, TenantsCSV))
	if len(tenants) != 1+2*4 || !equal(tenants[1], []string{"astraea", "x", "3600", "2020-09-07T00:00:00Z", "2020-09-07T01:00:00Z", "1800", "3600", "0.5"}) {
		t.Errorf("tenants.csv: %q", tenants[:2])
	}
	util := readCSV(t, filepath.Join(dir, UtilizationCSV))
	if len(util) != 1+2*3 || !equal(util[2], []string{"astraea", "2020-09-07T00:01:40Z", "8", "8"}) {
		t.Errorf("utilization.csv: %q", util)
	}
	// Deterministic.
	dir2 := t.TempDir()
	if err := WriteCSV(dir2, runs...); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{JobsCSV, TenantsCSV, UtilizationCSV} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(dir2, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two writes", f)
		}
	}
	if err := WriteCSV(dir, runs[0], runs[0]); !errors.Is(err, ErrDuplicatePolicy) {
		t.Errorf("duplicate policies: %v", err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCSVNamesCannotBeFormulas(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"=1+2", "'=1+2"}, {"+cmd", "'+cmd"}, {"-2", "'-2"}, {"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"}, {"\rx", "'\rx"}, {"vcJsw", "vcJsw"}, {"", ""}, {"a=b", "a=b"},
	} {
		if got := text(c.in); got != c.want {
			t.Errorf("text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	dir := t.TempDir()
	r := Run{Policy: "p", Jobs: []JobRecord{{ID: "@j", Tenant: "=1+2", GPUs: 1, Submit: at(0), End: at(10), Run: 10 * time.Second, Rho: 1}}}
	if err := WriteCSV(dir, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, JobsCSV))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "p,'@j,'=1+2,1,") {
		t.Errorf("jobs.csv does not neutralise the names:\n%s", b)
	}
}

// A file that cannot be written fails WriteCSV, whichever of the three it
// is; none is dropped silently.
func TestWriteCSVReportsAFailedFile(t *testing.T) {
	for _, name := range []string{JobsCSV, TenantsCSV, UtilizationCSV} {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil { // a directory where the file goes
			t.Fatal(err)
		}
		if err := WriteCSV(dir, twoRuns()...); err == nil {
			t.Errorf("%s: WriteCSV succeeded though the file cannot be written", name)
		}
	}
}

// A job that started and has not ended has its queueing time; one that
// has neither started nor ended has none.
func TestWriteCSVQueueingOfUnfinishedJobs(t *testing.T) {
	r := Run{Policy: "p", Jobs: []JobRecord{
		{ID: "a", Tenant: "x", GPUs: 1, Submit: at(0), FirstStart: at(30)},
		{ID: "b", Tenant: "x", GPUs: 1, Submit: at(0)},
	}}
	dir := t.TempDir()
	if err := WriteCSV(dir, r); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, filepath.Join(dir, JobsCSV))
	col := slices.Index(recs[0], "queue_s")
	if len(recs) != 3 || col < 0 || recs[1][col] != "30" || recs[2][col] != "" {
		t.Errorf("jobs %v, want a queueing of 30 s for a, none for b", recs)
	}
}
