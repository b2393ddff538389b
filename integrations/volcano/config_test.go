package volcano

import (
	"errors"
	"strings"
	"testing"
	"time"

	"volcano.sh/volcano/pkg/scheduler/framework"

	"github.com/astraea-sched/astraea/ledger"
)

func TestParseArguments(t *testing.T) {
	def := DefaultConfig()
	for name, tc := range map[string]struct {
		args framework.Arguments
		want Config
		bad  string // the key the error must name; "" if none
	}{
		"no arguments give the defaults": {nil, def, ""},
		"eq8 is demand-aware": {framework.Arguments{ArgMode: "eq8"},
			Config{ledger.DemandAware, ledger.Unbounded(), DefaultLease, "", DefaultResource}, ""},
		"every key at once": {framework.Arguments{ArgMode: "eq16", ArgHistory: "half-life=24h", ArgLease: "5m",
			ArgSnapshot: "/var/lib/astraea/l.json", ArgResource: "amd.com/gpu"},
			Config{ledger.QuotaShare, ledger.HalfLife(24 * time.Hour), 5 * time.Minute, "/var/lib/astraea/l.json", "amd.com/gpu"}, ""},
		"a trailing window":                   {framework.Arguments{ArgHistory: "window=168h"}, withHistory(def, ledger.TrailingWindow(168*time.Hour)), ""},
		"a zero lease turns pre-credit off":   {framework.Arguments{ArgLease: "0s"}, withLease(def, 0), ""},
		"an unknown mode":                     {framework.Arguments{ArgMode: "eq9"}, Config{}, ArgMode},
		"a misspelt key":                      {framework.Arguments{"astraea.leas": "5m"}, Config{}, "astraea.leas"},
		"a number where a string is due":      {framework.Arguments{ArgLease: 900}, Config{}, ArgLease},
		"a negative lease":                    {framework.Arguments{ArgLease: "-1m"}, Config{}, ArgLease},
		"a window of zero":                    {framework.Arguments{ArgHistory: "window=0s"}, Config{}, ArgHistory},
		"a history kind unknown":              {framework.Arguments{ArgHistory: "decay=1h"}, Config{}, ArgHistory},
		"an empty resource name":              {framework.Arguments{ArgResource: ""}, Config{}, ArgResource},
		"the first bad key in order is named": {framework.Arguments{ArgMode: "x", ArgHistory: "y"}, Config{}, ArgHistory},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseArguments(tc.args)
			if tc.bad != "" {
				if !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), tc.bad+":") {
					t.Fatalf("err = %v, want ErrArgument naming %s", err, tc.bad)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func withHistory(c Config, h ledger.History) Config { c.History = h; return c }
func withLease(c Config, d time.Duration) Config    { c.Lease = d; return c }

// FuzzParseArguments checks that any string value of any key parses or is
// refused with ErrArgument naming that key, never a panic, and that a
// parsed history or lease is valid for a ledger.
func FuzzParseArguments(f *testing.F) {
	for _, seed := range []struct{ key, value string }{
		{ArgMode, "eq16"}, {ArgHistory, "window=1h"}, {ArgHistory, "half-life=-1s"},
		{ArgLease, "15m"}, {ArgResource, "nvidia.com/gpu"}, {"astraea.x", ""},
	} {
		f.Add(seed.key, seed.value)
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		c, err := ParseArguments(framework.Arguments{key: value})
		if err != nil {
			if !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), key) {
				t.Fatalf("err = %v: not ErrArgument naming %q", err, key)
			}
			return
		}
		if c.Lease < 0 || c.Resource == "" {
			t.Fatalf("accepted %+v", c)
		}
		if _, err := ledger.New(ledger.Config{Mode: c.Mode, History: c.History, Start: t0}); err != nil {
			t.Fatalf("accepted a configuration the ledger refuses: %v", err)
		}
	})
}
