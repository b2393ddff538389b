//go:build unix

package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestAnUnwritableStateIsRefusedAtStart: a -state file the trainer could
// not flush to is an error before the first iteration, naming the flag.
func TestAnUnwritableStateIsRefusedAtStart(t *testing.T) {
	var paths []string
	if runtime.GOOS == "linux" {
		paths = append(paths, "/proc/self/job.snap") // no one may create files there, root included
	}
	if os.Geteuid() != 0 {
		ro := t.TempDir()
		if err := os.Chmod(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Join(ro, "job.snap"))
	}
	if len(paths) == 0 {
		t.Skip("no unwritable directory on this system for this user")
	}
	for _, path := range paths {
		var out, errb bytes.Buffer
		code := TrainerMain([]string{"-state", path, "-iters", "100"}, &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), "-state "+path) || out.Len() > 0 {
			t.Errorf("-state %s: exit %d, stdout %q, stderr %q", path, code, out.String(), errb.String())
		}
	}
}

// TestFlushEveryFlushesWhileTraining: with -flush-every the trainer writes
// snapshots while it trains, not only at the end, so a SIGKILL loses at
// most that much progress.
func TestFlushEveryFlushesWhileTraining(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.snap")
	var out, errb bytes.Buffer
	code := TrainerMain([]string{"-state", path, "-iters", "2000", "-pace", "100us", "-flush-every", "20ms"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	early := 0
	for l := range strings.Lines(out.String()) {
		if strings.HasPrefix(l, "flushed ") && l != "flushed 2000\n" {
			early++
		}
	}
	if early < 2 {
		t.Fatalf("%d flushes before the end, want several:\n%s", early, tail(out.String()))
	}
	if code := TrainerMain([]string{"-state", path, "-flush-every", "-1s"}, &out, &errb); code != 2 {
		t.Fatalf("-flush-every -1s: exit %d", code)
	}
}

func tail(s string) string {
	if len(s) > 500 {
		return "…" + s[len(s)-500:]
	}
	return s
}
