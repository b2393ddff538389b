package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/simulate"
)

// FuzzSelectPolicies checks the -policy parser on any list: a selection is
// not empty, names each policy once, and is the list's names in order
// (blank entries and spaces around names dropped); a list it refuses has
// no name, an unknown name or a name twice.
func FuzzSelectPolicies(f *testing.F) {
	for _, s := range []string{"astraea", "all", "astraea,fifo", " astraea , fifo ,", "", ",", "astraea,astraea",
		"nosuch", "ALL", "all,fifo", "astraea-reserve", "fifo,\tthemis", "astraea,,tiresias"} {
		f.Add(s)
	}
	cons := constructors()
	cons[reservePolicy] = nil // only its name matters here
	f.Fuzz(func(t *testing.T, list string) {
		var fields []string
		for n := range strings.SplitSeq(list, ",") {
			if n = strings.TrimSpace(n); n != "" {
				fields = append(fields, n)
			}
		}
		names, err := selectPolicies(list, cons)
		if err != nil {
			unknown := slices.ContainsFunc(fields, func(n string) bool { _, ok := cons[n]; return !ok })
			twice := len(slices.Compact(slices.Sorted(slices.Values(fields)))) < len(fields)
			if list == "all" || len(fields) > 0 && !unknown && !twice {
				t.Fatalf("selectPolicies(%q) refuses a list of known names, each once: %v", list, err)
			}
			return
		}
		if len(names) == 0 {
			t.Fatalf("selectPolicies(%q) selects no policy", list)
		}
		for i, n := range names {
			if _, ok := cons[n]; !ok {
				t.Fatalf("selectPolicies(%q) selects the unknown policy %q", list, n)
			}
			if slices.Index(names, n) != i {
				t.Fatalf("selectPolicies(%q) selects %q twice", list, n)
			}
		}
		if list != "all" && !slices.Equal(names, fields) {
			t.Fatalf("selectPolicies(%q) = %q, want %q", list, names, fields)
		}
	})
}

// FuzzFlagValues checks the command's checks of the -metrics, -admit,
// -reserve-after and -policy values on any text: run refuses the first bad
// value in that order with the error of that flag, and with only good
// values it goes on to read the trace (which is missing, so no simulation
// runs).
func FuzzFlagValues(f *testing.F) {
	f.Add("eq16", "submit", "1h", "astraea")
	f.Add("eq8", "tick", "90s", "all")
	f.Add("eq9", "submit", "1h", "astraea")
	f.Add("eq16", "arrival", "1h", "astraea")
	f.Add("eq16", "submit", "0s", "astraea")
	f.Add("eq16", "submit", "-1ns", "astraea")
	f.Add("eq16", "submit", "an hour", "astraea")
	f.Add("eq16", "submit", "1h", "astraea,astraea")
	f.Add("-json", "-quiet", "-1h", "-out")
	cons := constructors()
	cons[reservePolicy] = nil
	f.Fuzz(func(t *testing.T, metricsMode, admit, reserveAfter, policies string) {
		err := run([]string{"-metrics", metricsMode, "-admit", admit, "-reserve-after", reserveAfter, "-policy", policies,
			"-trace", "does-not-exist.csv", "-quota", "requested", "-quiet"}, io.Discard, io.Discard)
		if err == nil {
			t.Fatal("run on a missing trace succeeded")
		}
		d, derr := time.ParseDuration(reserveAfter)
		_, aerr := simulate.ParseAdmission(admit)
		_, perr := selectPolicies(policies, cons)
		var want func(error) bool
		switch {
		case derr != nil:
			want = func(err error) bool { return errors.Is(err, errUsage) }
		case metricsMode != "eq16" && metricsMode != "eq8":
			want = func(err error) bool { return strings.HasPrefix(err.Error(), "-metrics ") }
		case aerr != nil:
			want = func(err error) bool {
				return errors.Is(err, simulate.ErrConfig) && strings.HasPrefix(err.Error(), "-admit: ")
			}
		case d <= 0:
			want = func(err error) bool { return strings.HasPrefix(err.Error(), "-reserve-after ") }
		case perr != nil:
			want = func(err error) bool { return err.Error() == perr.Error() }
		default:
			want = func(err error) bool { return errors.Is(err, fs.ErrNotExist) }
		}
		if !want(err) {
			t.Fatalf("run -metrics %q -admit %q -reserve-after %q -policy %q: %v", metricsMode, admit, reserveAfter, policies, err)
		}
	})
}

// FuzzParseGrid checks the grid file reader on any text: it refuses with
// errGrid, naming the file, or returns flags without dashes or spaces and
// values without commas or surrounding spaces.
func FuzzParseGrid(f *testing.F) {
	for _, s := range []string{"lease = 600s, 900s\n-nodes=140\n", "# c\n\nnodes = 60..200/20", "x", "a=1\na=2", "= 1", "a = 1..2", "a = 1m..3m/1m # c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		raw, err := parseGrid(strings.NewReader(text), "g")
		if err != nil {
			if !errors.Is(err, errGrid) || !strings.Contains(err.Error(), "g") {
				t.Fatalf("parseGrid: %v, want errGrid naming the file", err)
			}
			return
		}
		for k, vals := range raw {
			if k == "" || strings.ContainsAny(k, " \t=#") || strings.HasPrefix(k, "-") {
				t.Fatalf("flag name %q", k)
			}
			for _, v := range vals {
				if v == "" || strings.Contains(v, ",") || strings.TrimSpace(v) != v {
					t.Fatalf("-%s value %q", k, v)
				}
			}
		}
	})
}

// FuzzParseShard checks -shard on any value and environment index: a
// shard it accepts has 0 ≤ index < count; a refusal is errShard.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"", "0/1", "3/4", "4/4", "env/3", "-1/2", "1/-2", "env/0"} {
		f.Add(s, "2")
	}
	f.Fuzz(func(t *testing.T, s, index string) {
		sh, err := parseShard(s, func(k string) string {
			if k == "JOB_COMPLETION_INDEX" {
				return index
			}
			return ""
		})
		if err != nil {
			if !errors.Is(err, errShard) {
				t.Fatalf("parseShard(%q): %v, want errShard", s, err)
			}
			return
		}
		if sh.count < 1 || sh.index < 0 || sh.index >= sh.count {
			t.Fatalf("parseShard(%q) = %+v", s, sh)
		}
	})
}

// FuzzParseHistory checks the -history parser on any text: it refuses with
// a *historyError naming the text and matching simulate.ErrConfig, or
// returns the ledger history the text spells: a duration ≥ 0 is a trailing
// window (0 the whole run), NxD is N buckets of D, and each prints back as
// a value it reads the same again.
func FuzzParseHistory(f *testing.F) {
	for _, s := range []string{"0", "0s", "24h", "24x1h", "1x1ns", "-1h", "x1h", "24x", "24x-1h", "+2x1h", "2x3x1h", "0x1h", "99999999999x1h", "1h30m", "24X1h", " 24h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseHistory(s)
		if err != nil {
			var he *historyError
			if !errors.As(err, &he) || he.text != s || !errors.Is(err, simulate.ErrConfig) || !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("parseHistory(%q): %v, want a *historyError naming the text", s, err)
			}
			return
		}
		if _, lerr := ledger.New(ledger.Config{History: h}); lerr != nil {
			t.Fatalf("parseHistory(%q) = %v, which the ledger refuses: %v", s, h, lerr)
		}
		count, width, bucketed := strings.Cut(s, "x")
		var again string
		if n, w := h.Bucketed(); n > 0 {
			if !bucketed {
				t.Fatalf("parseHistory(%q) = %v without an x", s, h)
			}
			if d, _ := time.ParseDuration(width); d != w || strconv.Itoa(n) != strings.TrimLeft(count, "0") {
				t.Fatalf("parseHistory(%q) = %d buckets of %v", s, n, w)
			}
			again = fmt.Sprintf("%dx%v", n, w)
		} else {
			d, perr := time.ParseDuration(s)
			if bucketed || perr != nil || d != h.Window() {
				t.Fatalf("parseHistory(%q) = %v, not the duration", s, h)
			}
			again = h.Window().String()
		}
		if h2, err := parseHistory(again); err != nil || h2 != h {
			t.Fatalf("parseHistory(%q) = %v, but %q reads %v, %v", s, h, again, h2, err)
		}
	})
}
