package metrics

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAFailedWriteKeepsThePreviousFile: whatever fails while an output file
// is written, the previous file stays whole, no partial or temporary file
// is left, and the error names the file.
func TestAFailedWriteKeepsThePreviousFile(t *testing.T) {
	boom := errors.New("disk full")
	tests := []struct {
		name  string
		write func(path string) error
	}{
		{"a CSV whose rows fail half-way", func(path string) error {
			return writeCSVFile(path, []string{"a"}, func(emit func(...string) error) error {
				for i := range 100000 {
					if err := emit(strings.Repeat("x", i%100)); err != nil {
						return err
					}
				}
				return boom
			})
		}},
		{"a figure whose writer fails half-way", func(path string) error {
			return writeAtomic(path, func(w io.Writer) error {
				w.Write([]byte(strings.Repeat("<svg>", 100000)))
				return boom
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "jobs.csv")
			if err := os.WriteFile(path, []byte("previous\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := tt.write(path)
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v, want the failure naming %s", err, path)
			}
			if got, _ := os.ReadFile(path); string(got) != "previous\n" {
				t.Fatalf("the previous file became %d bytes", len(got))
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Fatalf("%d files left in the directory", len(entries))
			}
		})
	}
	t.Run("a write that succeeds replaces the file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "jobs.csv")
		os.WriteFile(path, []byte("previous\n"), 0o600)
		if err := writeCSVFile(path, []string{"a"}, func(emit func(...string) error) error { return emit("1") }); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		st, _ := os.Stat(path)
		if string(got) != "a\n1\n" || st.Mode().Perm() != 0o644 {
			t.Fatalf("%q, mode %v", got, st.Mode())
		}
	})
}
