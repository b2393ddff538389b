// Package testtraces locates the real cluster traces that reproduction and
// reader tests use. The traces are data, not part of the module: they live in
// a folder beside the checkout (../shared/traces, relative to the directory
// holding go.mod) or wherever $ASTRAEA_TRACES points.
package testtraces

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Env is the environment variable that overrides the trace folder.
const Env = "ASTRAEA_TRACES"

// Find returns the trace folder, or an error saying where it looked. It
// starts from the working directory (a package directory under `go test`).
func Find() (string, error) {
	if d := os.Getenv(Env); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return "", errors.New("$" + Env + "=" + d + " is not a directory")
		}
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
	d := filepath.Join(dir, "..", "shared", "traces")
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return "", errors.New("no trace folder at ../shared/traces beside the module root (set $" + Env + ")")
	}
	return d, nil
}

// Dir returns the trace folder for a test. When it is absent the test is
// skipped with a message saying so, except under CI=true, where a missing
// folder fails the test: CI must never pass by skipping the reproduction.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := Find()
	if err == nil {
		return d
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("real traces required under CI=true: %v", err)
	}
	t.Skipf("skipping: real traces not found: %v", err)
	return ""
}
