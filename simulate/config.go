package simulate

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/lease"
	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
)

// Defaults of the reference configuration (section 6 of the design and the
// paper's experiments: a 10 s scheduling interval and 900 s leases). The paper
// does not publish its checkpoint and cold-start times; the defaults here are
// this project's choice: a checkpoint flushes an in-memory snapshot (10 s) and
// a cold start reloads it from network storage and warms up (30 s).
const (
	DefaultInterval   = 10 * time.Second
	DefaultLease      = 900 * time.Second
	DefaultCheckpoint = 10 * time.Second
	DefaultColdStart  = 30 * time.Second
	DefaultCheckEvery = 1024
)

// DefaultIntervals are the tenant interval lengths over which per-tenant ρ is
// measured. The paper does not state its interval lengths.
var defaultIntervals = [...]time.Duration{time.Hour, 6 * time.Hour, 24 * time.Hour}

// DefaultIntervals returns the tenant interval lengths 1 h, 6 h and 24 h.
func DefaultIntervals() []time.Duration { return slices.Clone(defaultIntervals[:]) }

// Config describes the simulated cluster and its scheduling parameters. Build
// it with [DefaultConfig] and change what differs: several fields have
// meaningful zero values (a zero Checkpoint is a run without overheads).
type Config struct {
	// Nodes is the cluster. If empty, NodeCount nodes of GPUsPerNode GPUs are
	// built, named "node-0000", "node-0001", ...
	Nodes       []placement.Node
	NodeCount   int
	GPUsPerNode int

	// Interval is the scheduling tick. Ticks fall at Start + TickPhase +
	// k·Interval for k = 0, 1, …
	Interval time.Duration
	// TickPhase offsets the tick grid from Start, in [0, Interval). The
	// paper fixes the interval, not where its grid lies relative to the
	// submissions; a run is one sample of that choice, and results that
	// vary with it are reported over several phases (the command's
	// -phases). Zero puts a tick at Start, as the authors' simulator does.
	TickPhase time.Duration
	// Lease is the lease a policy grants per job from its (re)start; the
	// engine only passes it to policies in State.Lease.
	Lease time.Duration
	// Checkpoint is how long a job whose lease is not renewed (or that is
	// preempted) keeps its GPUs to write its checkpoint. Billed, no progress.
	Checkpoint time.Duration
	// ColdStart is how long a resumed job holds its GPUs before it makes
	// progress again (restore and warm-up). Billed, no progress. A job's
	// first start has no cold start.
	ColdStart time.Duration
	// Iteration is the length of one training iteration. A checkpoint
	// stores whole iterations, so a preempted job loses the partial
	// iteration in flight: that work is run again after the restore, and
	// is reported in Stats.LostGPUSeconds. Zero (the default) means
	// progress is continuous and a checkpoint loses nothing.
	//
	// Every job's progress follows the lease package's model
	// (lease.Progress with these overheads): it makes progress at one
	// second per second (SpreadSlowdown for a spread gang) while it holds
	// its GPUs and is neither in a cold start nor writing a checkpoint.
	Iteration time.Duration
	// CheckpointOnRenew also charges Checkpoint at lease ends that are
	// renewed (the job pauses in place while it writes the checkpoint). The
	// paper checkpoints at every lease end, because the scheduler decides
	// renewal only at the boundary, so DefaultConfig turns it on; a renewed
	// job still never pays a cold start. With it, Checkpoint must be shorter
	// than the lease (as ColdStart must be in any case), or a renewed job
	// would never progress.
	CheckpointOnRenew bool

	// Admit is when a submitted job enters the ledgers, from which
	// its fair share (and its tenant's demand, under Eq. 8) accrues: at its
	// submission (AdmitOnSubmit, the zero value) or at the first tick
	// that sees it (AdmitAtTick). Queueing delay, JCT and slowdown count
	// from the submission either way.
	Admit Admission

	// Quotas maps each tenant to its weight; quotas are M × w ÷ Σw. Every
	// tenant of the trace must have a positive weight here.
	Quotas map[string]float64
	// DropOverQuota leaves out, counted in Result.Excluded with reason
	// ExcludedOverQuota, every job that asks for more GPUs than its
	// tenant's quota M·w/Σw. The paper does not say what becomes of such
	// jobs; the authors' public simulator drops them without a word (on
	// the Venus snapshot at 800 GPUs, 557 jobs and 12 % of the GPU time).
	// False (the default) runs them: they borrow beyond the quota. (The
	// authors' simulator rounds quotas down to whole GPUs; for a whole
	// demand d, d > q exactly when d > ⌊q⌋, so the rule is the same.)
	DropOverQuota bool
	// Accounts is the fairness mode of the ledger policies read
	// (ledger.QuotaShare, Eq. 16, is what the paper's simulator used).
	Accounts ledger.Mode
	// History is how much of the past the policies' accounts remember:
	// the zero value (ledger.Unbounded) is the paper's ratio over the
	// whole run; ledger.Buckets(24, time.Hour) is the authors' simulator,
	// which selects over its last 24 hourly buckets (buckets aligned on
	// Start), and ledger.TrailingWindow(24 * time.Hour) its continuous
	// approximation.
	// The results' ρ are read from unbounded books either way.
	History ledger.History
	// JobShare is how the policies' accounts divide a tenant's fair share
	// among its active jobs: the zero value (ledger.CappedJobShare) is the
	// paper's min(D_i, F_j·w_i/Σw); ledger.SplitJobShare drops the cap,
	// as the authors' simulator does (a tenant's quota split equally over
	// its active jobs). It changes which job a policy picks, not what is
	// measured: the results' ρ_job are read under the capped rule either
	// way.
	JobShare ledger.JobShare
	// Metrics is the fairness mode of the ledger the job and tenant ρ in the
	// results are read from. When it differs from Accounts the engine keeps
	// a second ledger for the metrics.
	Metrics ledger.Mode
	// Intervals are the tenant interval lengths of the per-tenant ρ records.
	// Only whole intervals that begin by the last submission are kept
	// (after it the trace has no new demand and, under Eq. 16, idle tenants
	// would only accumulate loss).
	Intervals []time.Duration

	// Start is the beginning of history and of tick alignment; zero means
	// the first job's submit time.
	Start time.Time

	// Check runs ledger.Check and placement.Cluster.Check every CheckEvery
	// ticks and at the end (cheap invariants are always checked).
	Check      bool
	CheckEvery int

	// Progress, if set, is called as jobs finish (at most every 256 jobs
	// and once at the end) with the number of jobs done and the simulated
	// time. It must not retain the engine's state.
	Progress func(done int, now time.Time)

	// Placement is how gangs are placed, by every policy: on the fewest
	// nodes they could occupy on an empty cluster (placement.Strict, the
	// default), on the fewest nodes the free GPUs allow
	// (placement.FewestNodes, which spreads a gang when no node holds it),
	// or first fit over the nodes in order (placement.FirstFit, which
	// spreads in that order a gang it cannot consolidate).
	Placement placement.Mode
	// SpreadSlowdown is the rate s, in (0, 1], at which a job placed on
	// more nodes than its minimum (placement.Cluster.Beyond > 0) makes
	// progress: s seconds of work per second held, from its start or
	// resume until it is placed again. A renewal keeps its placement and
	// its rate; a resume recomputes it from the new placement. The paper
	// says a spread gang runs slower (section 3) but gives no figure; 1
	// (DefaultConfig) models no slowdown, and so does 0, so that a zero
	// Config runs as before. The time it costs is reported per job
	// (metrics.JobRecord.Spread) and in total (Stats.SpreadGPUSeconds).
	// It applies in either placement mode: under Strict a gang larger
	// than a node may also land on more nodes than it needs when no
	// smaller set of nodes is free.
	SpreadSlowdown float64
	// Exhaustive makes the engine take none of its shortcuts and ignore
	// every trait a policy declares (see Traits): each tick with anything
	// to decide calls the policy. Results must not differ (tests and
	// CompareExhaustive compare).
	Exhaustive bool
}

// Admission says when a submitted job enters the ledgers (Config.Admit).
//
// The paper's simulator handles, at each scheduling round, the jobs
// submitted during the interval before it; the paper does not say whether
// a job is owed its fair share from its submission or from that round.
// The choice moves every job's ρ_job by up to one interval of fair share:
// a 100 s job submitted just after a tick and started at the next one has
// ρ_job ≈ 0.91 from its submission (a sharing loss under the 0.95
// threshold), 1 from the round. On traces rich in short jobs it moves the
// share of sharing-loss jobs more than any policy parameter (ASTRAEA's on
// the Venus snapshot: 36 % from submission, 22 % from the tick).
type Admission uint8

const (
	// AdmitOnSubmit starts a job's accounts at its trace submission time:
	// ρ_job counts the wait for the next tick.
	AdmitOnSubmit Admission = iota
	// AdmitAtTick starts them at the first scheduling tick at or after the
	// submission, when a policy first sees the job: a job started at that
	// tick has ρ_job = 1 whatever the interval.
	AdmitAtTick
)

// String returns "submit" or "tick", the command's -admit values.
func (a Admission) String() string {
	switch a {
	case AdmitOnSubmit:
		return "submit"
	case AdmitAtTick:
		return "tick"
	}
	return fmt.Sprintf("Admission(%d)", uint8(a))
}

// ParseAdmission is the inverse of String: "submit" or "tick". Any other
// text is an error matching ErrConfig.
func ParseAdmission(s string) (Admission, error) {
	for _, a := range []Admission{AdmitOnSubmit, AdmitAtTick} {
		if s == a.String() {
			return a, nil
		}
	}
	return 0, configErr("admission %q: want submit or tick", s)
}

// DefaultConfig returns the reference configuration on nodes × gpusPerNode
// GPUs: 10 s ticks, 900 s leases, a 10 s checkpoint at every lease end, 30 s
// cold starts on resume, Eq. 16
// accounts and metrics, tenant intervals of 1 h, 6 h and 24 h, no spread
// slowdown.
func DefaultConfig(nodes, gpusPerNode int, quotas map[string]float64) Config {
	return Config{
		NodeCount:         nodes,
		GPUsPerNode:       gpusPerNode,
		Interval:          DefaultInterval,
		Lease:             DefaultLease,
		Checkpoint:        DefaultCheckpoint,
		ColdStart:         DefaultColdStart,
		CheckpointOnRenew: true,
		Quotas:            quotas,
		Accounts:          ledger.QuotaShare,
		Metrics:           ledger.QuotaShare,
		Intervals:         DefaultIntervals(),
		CheckEvery:        DefaultCheckEvery,
		SpreadSlowdown:    1,
	}
}

// ErrConfig is matched by errors.Is for an invalid Config.
var ErrConfig = errors.New("simulate: invalid config")

func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
}

// Validate reports whether Run would accept c, without reading a trace:
// the error Run would return for c before its first event, matching
// ErrConfig. A command checks its flags with it before it spends any time
// on a run. O(nodes).
func (c Config) Validate() error {
	_, err := c.cluster()
	return err
}

// cluster checks c and builds its cluster from its nodes.
func (c *Config) cluster() (*placement.Cluster, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	nodes, err := c.nodes()
	if err != nil {
		return nil, err
	}
	cl, err := placement.NewCluster(nodes, placement.WithMode(c.Placement))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return cl, nil
}

// MaxNodes and MaxClusterGPUs bound the cluster a run simulates, so that a
// configuration is refused before anything is allocated: a node costs
// about a kilobyte across the cluster and the engine, and the engine keeps
// tables indexed by GPU count. Clusters of today (10⁴–10⁵ GPUs) are far
// inside both.
const (
	MaxNodes       = 1 << 20
	MaxClusterGPUs = 1 << 24
)

// nodes returns the cluster's nodes.
func (c *Config) nodes() ([]placement.Node, error) {
	if len(c.Nodes) > 0 {
		if len(c.Nodes) > MaxNodes {
			return nil, configErr("%d Nodes, more than MaxNodes %d", len(c.Nodes), MaxNodes)
		}
		total := 0
		for _, n := range c.Nodes {
			if n.GPUs > 0 && n.GPUs <= MaxClusterGPUs { // placement refuses other counts by name
				total += n.GPUs
			}
		}
		if total > MaxClusterGPUs {
			return nil, configErr("Nodes hold %d GPUs, more than MaxClusterGPUs %d", total, MaxClusterGPUs)
		}
		return c.Nodes, nil
	}
	if c.NodeCount <= 0 || c.GPUsPerNode <= 0 {
		return nil, configErr("need Nodes or NodeCount > 0 and GPUsPerNode > 0 (got %d × %d)", c.NodeCount, c.GPUsPerNode)
	}
	if c.NodeCount > MaxNodes {
		return nil, configErr("NodeCount %d is more than MaxNodes %d", c.NodeCount, MaxNodes)
	}
	if c.GPUsPerNode > MaxClusterGPUs/c.NodeCount {
		return nil, configErr("%d × %d GPUs is more than MaxClusterGPUs %d", c.NodeCount, c.GPUsPerNode, MaxClusterGPUs)
	}
	width := len(fmt.Sprint(c.NodeCount - 1))
	width = max(width, 4)
	ns := make([]placement.Node, c.NodeCount)
	for i := range ns {
		ns[i] = placement.Node{ID: fmt.Sprintf("node-%0*d", width, i), GPUs: c.GPUsPerNode}
	}
	return ns, nil
}

// grantedLease is the lease ASTRAEA grants when configured with lease d:
// d, or DefaultLease when d is not positive.
func grantedLease(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultLease
}

func (c *Config) validate() error {
	switch {
	case c.Interval <= 0:
		return configErr("Interval %v must be positive", c.Interval)
	case c.TickPhase < 0 || c.TickPhase >= c.Interval:
		return configErr("TickPhase %v must lie in [0, Interval %v)", c.TickPhase, c.Interval)
	case c.Lease < 0:
		return configErr("Lease %v must not be negative", c.Lease)
	case c.Checkpoint < 0 || c.Checkpoint > lease.MaxSpan:
		return configErr("Checkpoint %v must lie in [0, %v]", c.Checkpoint, lease.MaxSpan)
	case c.ColdStart < 0 || c.ColdStart > lease.MaxSpan:
		return configErr("ColdStart %v must lie in [0, %v]", c.ColdStart, lease.MaxSpan)
	case c.Iteration < 0 || c.Iteration > lease.MaxSpan:
		return configErr("Iteration %v must lie in [0, %v]", c.Iteration, lease.MaxSpan)
	case grantedLease(c.Lease) <= c.ColdStart:
		// A resumed job would spend its whole lease in cold start and could
		// be preempted at every lease end without ever progressing.
		return configErr("Lease %v must be longer than ColdStart %v", grantedLease(c.Lease), c.ColdStart)
	case c.CheckpointOnRenew && grantedLease(c.Lease) <= c.Checkpoint:
		// A renewed job would spend its whole lease writing its checkpoint:
		// it would never progress, and the run would never end.
		return configErr("Lease %v must be longer than Checkpoint %v when CheckpointOnRenew is set", grantedLease(c.Lease), c.Checkpoint)
	case c.Admit != AdmitOnSubmit && c.Admit != AdmitAtTick:
		return configErr("unknown %v", c.Admit)
	case c.Placement != placement.Strict && c.Placement != placement.FewestNodes && c.Placement != placement.FirstFit:
		return configErr("unknown placement %v", c.Placement)
	case !(c.SpreadSlowdown >= 0 && c.SpreadSlowdown <= 1):
		return configErr("SpreadSlowdown %v must lie in (0, 1] (0 means 1, no slowdown)", c.SpreadSlowdown)
	case c.JobShare != ledger.CappedJobShare && c.JobShare != ledger.SplitJobShare:
		return configErr("unknown %v", c.JobShare)
	case !validHistory(c.History):
		return configErr("History %v: a window, bucket width or half-life must be positive, a bucket count at least 1", c.History)
	case len(c.Quotas) == 0:
		return configErr("no tenant quotas")
	}
	for _, t := range slices.Sorted(maps.Keys(c.Quotas)) {
		w := c.Quotas[t]
		if !(w > 0) || math.IsInf(w, 0) {
			return configErr("tenant %q has weight %v; weights must be positive and finite", t, w)
		}
	}
	for _, d := range c.Intervals {
		if d <= 0 {
			return configErr("tenant interval %v must be positive", d)
		}
	}
	return nil
}

// validHistory reports whether the ledger accepts h (a ledger of one GPU
// says it, and is the one place the rule lives).
func validHistory(h ledger.History) bool {
	_, err := ledger.New(ledger.Config{Capacity: 1, History: h})
	return err == nil
}
