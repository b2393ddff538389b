package ledger

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func smallLedger(t *testing.T) *Ledger {
	t.Helper()
	l, err := New(Config{Mode: QuotaShare, Capacity: 8, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.AddTenant(t0, "x", 1); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestSnapshotFileErrorsMatchTheirSentinels(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadFile(filepath.Join(dir, "missing"))
	var e *Error
	if !errors.Is(err, ErrSnapshotFile) || !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &e) || e.Op != "ReadFile" {
		t.Errorf("reading a missing file: %v, want *Error matching ErrSnapshotFile and fs.ErrNotExist", err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("not a snapshot at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(bad); !errors.Is(err, ErrCorruptSnapshot) || !errors.As(err, &e) || e.Op != "ReadFile" {
		t.Errorf("reading a damaged file: %v, want *Error matching ErrCorruptSnapshot", err)
	}
	if err := smallLedger(t).WriteFile(filepath.Join(dir, "no", "such", "dir", "s")); !errors.Is(err, ErrSnapshotFile) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("writing into a missing directory: %v, want ErrSnapshotFile and fs.ErrNotExist", err)
	}
}

func TestWriteFileKeepsTheModeAndCleansLeftovers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.snap")
	l := smallLedger(t)
	if err := l.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("a new file has mode %v, want 0600", st.Mode().Perm())
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	// Two leftovers of killed writes of this path, and one of another.
	for _, n := range []string{".ledger.snap.tmp-1", ".ledger.snap.tmp-2", ".other.tmp-1"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("torn"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("rewriting reset the mode to %v, want 0640", st.Mode().Perm())
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) != 1 || filepath.Base(left[0]) != ".other.tmp-1" {
		t.Errorf("files left: %v, want only the other target's leftover", left)
	}
	if _, err := ReadFile(path); err != nil {
		t.Errorf("the rewritten snapshot does not read back: %v", err)
	}
}
