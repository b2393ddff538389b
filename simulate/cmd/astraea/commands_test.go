package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// knownCommands is the list an unknown command's error gives: every
// command of the table, then help.
func knownCommands() string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return strings.Join(append(names, "help"), ", ")
}

func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		err      error    // matched with errors.Is; nil: success
		stdout   []string // substrings of stdout
		stderr   []string // substrings of stderr
		noStdout bool
		noStderr bool
	}{
		{name: "-h prints the commands and the flags on stdout", args: []string{"-h"}, err: flag.ErrHelp,
			stdout: []string{"usage: astraea", "simulate", "help", "flags of simulate:", "-nodes"}, noStderr: true},
		{name: "-help is -h", args: []string{"-help"}, err: flag.ErrHelp, stdout: []string{"flags of simulate:"}, noStderr: true},
		{name: "help lists the commands", args: []string{"help"},
			stdout: []string{"usage: astraea", "simulate", "astraea help COMMAND"}, noStderr: true},
		{name: "help simulate is simulate -h", args: []string{"help", "simulate"}, err: flag.ErrHelp,
			stdout: []string{"flags of simulate:", "-policy"}, noStderr: true},
		{name: "simulate -h is the same", args: []string{"simulate", "-h"}, err: flag.ErrHelp,
			stdout: []string{"flags of simulate:"}, noStderr: true},
		{name: "an unknown command lists the known ones", args: []string{"simulat"}, err: errUsage,
			stderr: []string{`unknown command "simulat"`, "(known: " + knownCommands() + ")"}, noStdout: true},
		{name: "help of an unknown command lists the known ones", args: []string{"help", "nosuch"}, err: errUsage,
			stderr: []string{`unknown command "nosuch"`, "known: simulate"}, noStdout: true},
		{name: "an unknown flag is named, with a hint", args: []string{"-bogus"}, err: errUsage,
			stderr: []string{"-bogus", "astraea help simulate"}, noStdout: true},
		{name: "an argument after the flags is named", args: []string{"-jobs", "5", "extra"}, err: errUsage,
			stderr: []string{`unexpected argument "extra"`}, noStdout: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(tc.args, &out, &errOut)
			if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
				t.Fatalf("run %q: error %v, want %v", tc.args, err, tc.err)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, out.String())
				}
			}
			for _, s := range tc.stderr {
				if !strings.Contains(errOut.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, errOut.String())
				}
			}
			if tc.noStdout && out.Len() > 0 {
				t.Errorf("stdout: %q", out.String())
			}
			if tc.noStderr && errOut.Len() > 0 {
				t.Errorf("stderr: %q", errOut.String())
			}
		})
	}
}

// The usage lists every command of the table, so that a command added
// there is listed without more.
func TestUsageListsEveryCommand(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"help"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, c := range commands() {
		if !strings.Contains(out.String(), "  "+c.name+" ") || !strings.Contains(out.String(), c.summary) {
			t.Errorf("the usage lacks %s:\n%s", c.name, out.String())
		}
	}
}

// dispatch gives a named command the arguments after its name, and the
// first command everything when the first argument is a flag or there is
// none.
func TestDispatchRoutesByName(t *testing.T) {
	var got []string
	record := func(name string) func([]string, io.Writer, io.Writer, func(int)) error {
		return func(args []string, _, _ io.Writer, _ func(int)) error {
			got = append([]string{name}, args...)
			return nil
		}
	}
	cmds := []command{{"first", "the default", record("first")}, {"second", "another", record("second")}}
	for _, tc := range []struct{ args, want []string }{
		{nil, []string{"first"}},
		{[]string{"-x", "1"}, []string{"first", "-x", "1"}},
		{[]string{"first", "-y"}, []string{"first", "-y"}},
		{[]string{"second", "-z", "a"}, []string{"second", "-z", "a"}},
		{[]string{"help", "second"}, []string{"second", "-h"}},
	} {
		got = nil
		if err := dispatch(cmds, tc.args, io.Discard, io.Discard, nil); err != nil {
			t.Fatalf("dispatch %q: %v", tc.args, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("dispatch %q ran %q, want %q", tc.args, got, tc.want)
		}
	}
}

// A bad flag value is reported under the flag's name, not the Go field it
// sets, and matches the sentinel of the setting.
func TestBadFlagValuesNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the error's beginning
		err  error
	}{
		{[]string{"-nodes", "0"}, "-nodes must be > 0", simulate.ErrConfig},
		{[]string{"-gpus-per-node", "-1"}, "-gpus-per-node must be > 0", simulate.ErrConfig},
		{[]string{"-nodes", "9223372036854775807"}, "-nodes must be at most 1048576", simulate.ErrConfig},
		{[]string{"-nodes", "10000000"}, "-nodes must be at most 1048576", simulate.ErrConfig},
		{[]string{"-gpus-per-node", "9223372036854775807"}, "-gpus-per-node 9223372036854775807 × -nodes 100 must be at most 16777216 GPUs", simulate.ErrConfig},
		{[]string{"-nodes", "1048576", "-gpus-per-node", "17"}, "-gpus-per-node 17 × -nodes 1048576 must be at most", simulate.ErrConfig},
		{[]string{"-interval", "0s"}, "-interval must be > 0", simulate.ErrConfig},
		{[]string{"-lease", "0s"}, "-lease must be > 0", simulate.ErrConfig},
		{[]string{"-checkpoint", "-1s"}, "-checkpoint must lie in [0, ", simulate.ErrConfig},
		{[]string{"-coldstart", "-1s"}, "-coldstart must lie in [0, ", simulate.ErrConfig},
		{[]string{"-iteration", "-1s"}, "-iteration must lie in [0, ", simulate.ErrConfig},
		{[]string{"-lease", "20s", "-coldstart", "30s"}, "-lease 20s must be longer than -coldstart 30s", simulate.ErrConfig},
		{[]string{"-lease", "5s", "-coldstart", "1s", "-checkpoint", "5s"}, "-lease 5s must be longer than -checkpoint 5s", simulate.ErrConfig},
		{[]string{"-jobs", "-1"}, "-jobs must be ≥ 0", trace.ErrSyntheticConfig},
		{[]string{"-jobs", "1000000000000"}, "-jobs must be ≤ 1048576", trace.ErrSyntheticConfig},
		{[]string{"-parallel", "-2"}, "-parallel must be ≥ 0", simulate.ErrConfig},
		{[]string{"-spread-slowdown", "0"}, "-spread-slowdown must lie in (0, 1]", simulate.ErrConfig},
		{[]string{"-spread-slowdown", "1.5"}, "-spread-slowdown must lie in (0, 1]", simulate.ErrConfig},
		{[]string{"-spread-slowdown", "NaN"}, "-spread-slowdown must lie in (0, 1]", simulate.ErrConfig},
		{[]string{"-history", "-1h"}, `-history "-1h": a window must be ≥ 0`, simulate.ErrConfig},
		{[]string{"-history", "a day"}, `-history "a day": want a duration`, simulate.ErrConfig},
		{[]string{"-history", "0x1h"}, `-history "0x1h": the bucket count must be a whole number ≥ 1`, simulate.ErrConfig},
		{[]string{"-history", "24x0s"}, `-history "24x0s": the bucket width must be > 0`, simulate.ErrConfig},
		{[]string{"-history", "-2x1h"}, `-history "-2x1h": want a duration`, simulate.ErrConfig},
		{[]string{"-history", "x1h"}, `-history "x1h": want a duration`, simulate.ErrConfig},
		{[]string{"-history", "99999999999x1h"}, `-history "99999999999x1h": the buckets span more than`, simulate.ErrConfig},
	} {
		var out bytes.Buffer
		err := run(append(tc.args, "-quiet"), &out, io.Discard)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, tc.err) {
			t.Errorf("run %q: error %v, want one starting %q and matching %v", tc.args, err, tc.want, tc.err)
		}
		if out.Len() > 0 {
			t.Errorf("run %q printed %q before refusing", tc.args, out.String())
		}
	}
	// Accepted edge values: zero overheads, -checkpoint as long as the
	// lease when renewals are not charged, -parallel 0.
	for _, args := range [][]string{
		{"-checkpoint", "0s", "-coldstart", "0s", "-iteration", "0s"},
		{"-lease", "5s", "-checkpoint", "5s", "-checkpoint-on-renew=false", "-coldstart", "1s"},
		{"-parallel", "0"},
		{"-spread-slowdown", "0.8"},
		{"-spread-slowdown", "1"},
		{"-nodes", "1048576", "-gpus-per-node", "16"},
		{"-history", "0"},
		{"-history", "24h"},
		{"-history", "24x1h"},
		{"-history", "1x1ns"},
	} {
		if err := checkFlags(mustParse(t, args...)); err != nil {
			t.Errorf("%q refused: %v", args, err)
		}
	}
}

func mustParse(t *testing.T, args ...string) options {
	t.Helper()
	o, err := parseFlags(args, io.Discard, io.Discard)
	if err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return o
}

// TestAnUnwritableOutIsRefusedFirst: an -out directory the command cannot
// write to is refused under the flag's name before anything runs.
func TestAnUnwritableOutIsRefusedFirst(t *testing.T) {
	var dirs []string
	if runtime.GOOS == "linux" {
		dirs = append(dirs, "/proc/self") // a directory no one may create files in, root included
	}
	if os.Geteuid() != 0 {
		ro := t.TempDir()
		if err := os.Chmod(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, ro)
	}
	if len(dirs) == 0 {
		t.Skip("no unwritable directory on this system for this user")
	}
	for _, dir := range dirs {
		var out bytes.Buffer
		err := run([]string{"-out", dir, "-quiet", "-jobs", "50"}, &out, io.Discard)
		if err == nil || !strings.HasPrefix(err.Error(), "-out "+dir+" is not writable") {
			t.Errorf("-out %s: %v", dir, err)
		}
		if out.Len() > 0 {
			t.Errorf("-out %s: printed %q before refusing", dir, out.String())
		}
	}
}

// TestSkippingEveryRowShowsTheSkips: when -lenient skips every row of a
// trace, the error reports the skips, not a missing quota.
func TestSkippingEveryRowShowsTheSkips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(path, []byte("tenant,job,gpus,submit,duration\na,j1,x,0,100\na,j2,1,-,10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run([]string{"-trace", path, "-lenient", "-quiet"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "skipped all 2 rows") || !strings.Contains(err.Error(), "invalid number: 1") ||
		!strings.Contains(err.Error(), "invalid time: 1") {
		t.Fatalf("%v, want the skip counts", err)
	}
}
