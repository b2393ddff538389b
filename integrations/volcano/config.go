package volcano

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"volcano.sh/volcano/pkg/scheduler/framework"

	"github.com/astraea-sched/astraea/ledger"
)

// The plugin's arguments, as keys of `arguments:` under `- name: astraea` in
// the scheduler configuration. Every value is a string.
const (
	// ArgMode is the tenant fair-share equation: "eq16" (the default: a
	// queue is owed its weighted share of the cluster all the time, what
	// the paper's simulator uses to pick tenants) or "eq8" (owed at most
	// its demand, so an idle queue accrues no debt).
	ArgMode = "astraea.mode"
	// ArgHistory is how much of the past the accounts remember:
	// "unbounded" (the default), "window=DURATION" (a trailing window,
	// e.g. "window=168h") or "half-life=DURATION" (exponential decay, as
	// Slurm's PriorityDecayHalfLife, e.g. "half-life=24h").
	ArgHistory = "astraea.history"
	// ArgLease is how long a newly allocated gang is expected to hold its
	// GPUs: inside a session, each allocated gang pre-credits its queue
	// with GPUs × lease, so that the next pick already sees the queue as
	// served. A Go duration, default "15m"; "0s" turns the pre-credit off.
	ArgLease = "astraea.lease"
	// ArgSnapshot is a file the accounts are written to at every session
	// close (atomically) and read from at the first session, so that a
	// restarted scheduler keeps its history. Empty (the default): none.
	ArgSnapshot = "astraea.snapshot"
	// ArgResource is the extended resource that counts GPUs in pod
	// requests and node allocatable, default "nvidia.com/gpu".
	ArgResource = "astraea.resource"
)

// DefaultResource is the GPU resource name unless ArgResource says otherwise.
const DefaultResource = "nvidia.com/gpu"

// DefaultLease is the pre-credit lease unless ArgLease says otherwise: the
// paper's 900 s.
const DefaultLease = 15 * time.Minute

// ErrArgument is matched (errors.Is) by every error of ParseArguments.
var ErrArgument = errors.New("astraea: bad plugin argument")

// Config is the plugin's configuration, read from its arguments.
type Config struct {
	Mode     ledger.Mode    // tenant fair share: QuotaShare (Eq. 16) or DemandAware (Eq. 8)
	History  ledger.History // how long the accounts remember
	Lease    time.Duration  // pre-credit per allocated gang, GPUs × Lease; 0 for none
	Snapshot string         // snapshot file; "" for none
	Resource string         // GPU resource name in pod requests and node allocatable
}

// DefaultConfig is the configuration of a plugin given no arguments.
func DefaultConfig() Config {
	return Config{
		Mode:     ledger.QuotaShare,
		History:  ledger.Unbounded(),
		Lease:    DefaultLease,
		Resource: DefaultResource,
	}
}

// ParseArguments reads the plugin's arguments over DefaultConfig. An
// unknown key (a typo would otherwise be ignored), a value that is not a
// string, or a string that does not parse is an error matching ErrArgument
// that names the key; keys are checked in sorted order, so the error is
// always the first bad key's.
func ParseArguments(args framework.Arguments) (Config, error) {
	c := DefaultConfig()
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s, ok := args[k].(string)
		if !ok {
			return Config{}, argError(k, args[k], "want a string")
		}
		var err error
		switch k {
		case ArgMode:
			c.Mode, err = parseMode(s)
		case ArgHistory:
			c.History, err = parseHistory(s)
		case ArgLease:
			c.Lease, err = time.ParseDuration(s)
			if err == nil && c.Lease < 0 {
				err = errors.New("negative")
			}
		case ArgSnapshot:
			c.Snapshot = s
		case ArgResource:
			if s == "" {
				err = errors.New("empty")
			}
			c.Resource = s
		default:
			err = fmt.Errorf("unknown key; known: %s", strings.Join(argKeys, ", "))
		}
		if err != nil {
			return Config{}, argError(k, s, err.Error())
		}
	}
	return c, nil
}

var argKeys = []string{ArgHistory, ArgLease, ArgMode, ArgResource, ArgSnapshot}

func argError(key string, v any, why string) error {
	return fmt.Errorf("%w %s: %#v: %s", ErrArgument, key, v, why)
}

func parseMode(s string) (ledger.Mode, error) {
	switch s {
	case "eq16":
		return ledger.QuotaShare, nil
	case "eq8":
		return ledger.DemandAware, nil
	}
	return 0, errors.New(`want "eq16" or "eq8"`)
}

func parseHistory(s string) (ledger.History, error) {
	if s == "unbounded" {
		return ledger.Unbounded(), nil
	}
	kind, dur, ok := strings.Cut(s, "=")
	if ok && (kind == "window" || kind == "half-life") {
		d, err := time.ParseDuration(dur)
		switch {
		case err != nil:
			return ledger.History{}, err
		case d <= 0:
			return ledger.History{}, errors.New("duration must be positive")
		case kind == "window":
			return ledger.TrailingWindow(d), nil
		default:
			return ledger.HalfLife(d), nil
		}
	}
	return ledger.History{}, errors.New(`want "unbounded", "window=DURATION" or "half-life=DURATION"`)
}

// sameAccounts reports whether two configurations keep the same accounts:
// a change of mode or history needs a new ledger.
func (c Config) sameAccounts(o Config) bool {
	return c.Mode == o.Mode && c.History == o.History
}
