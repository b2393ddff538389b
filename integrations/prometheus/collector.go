package prometheus

import (
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/astraea-sched/astraea/ledger"
)

// Ledger is what the collector reads: *ledger.Ledger satisfies it.
type Ledger interface {
	Tenants() iter.Seq[ledger.TenantID]
	Tenant(id ledger.TenantID) (ledger.TenantInfo, bool)
	TenantAccount(id ledger.TenantID, from, to time.Time) (ledger.Account, error)
	Capacity() ledger.GPUs
	Begin() time.Time
	Now() time.Time
}

// Options configure a Collector. The zero value reads the ledger's whole
// retained history up to its Now(), with no lock.
type Options struct {
	// Lock, if not nil, is held while the collector reads the ledger.
	Lock sync.Locker
	// Window, if positive, limits the accounts to [at − Window, at) (at
	// least Begin()); otherwise they cover [Begin(), at): the ledger's ρ
	// over its retained history, as its scheduler sees it.
	Window time.Duration
	// Now, if not nil, gives the end of the window, at: a time after the
	// ledger's Now() extrapolates its current state (the running jobs go
	// on accruing) without changing it, so that a scrape between two
	// events is up to date. Nil means the ledger's Now().
	Now func() time.Time
	// Namespace prefixes every metric name; "" means "astraea".
	Namespace string
	// ConstLabels are added to every metric (a cluster name, say).
	ConstLabels prom.Labels
}

var _ Ledger = (*ledger.Ledger)(nil)

// ErrOptions is matched by errors.Is for options NewCollector refuses.
var ErrOptions = errors.New("prometheus: invalid options")

// Collector is a prometheus.Collector over a ledger. Register it with a
// prometheus.Registry; it reads the ledger at every scrape, so what it
// reports is never older than the scrape.
type Collector struct {
	l   Ledger
	opt Options

	alloc, fair, rho         *prom.Desc // per tenant, over the window
	weight, quota, held, dem *prom.Desc // per tenant, now
	capacity, window         *prom.Desc
	scrapeErrors             prom.Counter
}

// NewCollector returns a collector of l's accounts. Errors match
// ErrOptions: a nil ledger, a negative Window, a namespace Prometheus
// refuses.
func NewCollector(l Ledger, opt Options) (*Collector, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: nil ledger", ErrOptions)
	}
	if opt.Window < 0 {
		return nil, fmt.Errorf("%w: Window %v < 0", ErrOptions, opt.Window)
	}
	if opt.Namespace == "" {
		opt.Namespace = "astraea"
	}
	c := &Collector{l: l, opt: opt}
	tenant := []string{"tenant"}
	d := func(name, help string, labels []string) *prom.Desc {
		return prom.NewDesc(prom.BuildFQName(opt.Namespace, "", name), help, labels, opt.ConstLabels)
	}
	c.alloc = d("tenant_alloc_gpu_seconds", "GPU-seconds the tenant received over the window (∫Alloc); can fall as old service is discounted.", tenant)
	c.fair = d("tenant_fair_share_gpu_seconds", "GPU-seconds the tenant was owed over the window (∫FairShare); can fall as old service is discounted.", tenant)
	c.rho = d("tenant_rho", "Long-term fairness ratio ρ = received ÷ owed over the window; 1 when nothing was owed or received, +Inf when served while owed nothing.", tenant)
	c.weight = d("tenant_weight", "The tenant's weight W_j now.", tenant)
	c.quota = d("tenant_quota_gpus", "The tenant's quota now, in GPUs.", tenant)
	c.held = d("tenant_allocated_gpus", "GPUs held by the tenant's running jobs now.", tenant)
	c.dem = d("tenant_demand_gpus", "GPUs asked for by the tenant's active jobs now.", tenant)
	c.capacity = d("ledger_capacity_gpus", "The cluster's GPUs, as the ledger knows them.", nil)
	c.window = d("ledger_window_seconds", "The length of the window the tenant accounts cover.", nil)
	c.scrapeErrors = prom.NewCounter(prom.CounterOpts{
		Namespace: opt.Namespace, Name: "collector_errors_total",
		Help: "Scrapes at which a tenant's account could not be read.", ConstLabels: opt.ConstLabels,
	})
	// Prometheus records a bad name in its Desc and reports it only at
	// registration; a registry of its own surfaces it here.
	if err := prom.NewPedanticRegistry().Register(c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	return c, nil
}

func (c *Collector) descs() []*prom.Desc {
	return []*prom.Desc{c.alloc, c.fair, c.rho, c.weight, c.quota, c.held, c.dem, c.capacity, c.window}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prom.Desc) {
	for _, d := range c.descs() {
		ch <- d
	}
	c.scrapeErrors.Describe(ch)
}

// sample is one tenant's figures, read under the lock and sent after.
type sample struct {
	id   ledger.TenantID
	info ledger.TenantInfo
	acct ledger.Account
	err  error
}

// Collect implements prometheus.Collector. It holds Options.Lock while it
// reads the ledger, O(T log n) for T tenants (every tenant ever added,
// removed ones with their past), and sends the metrics after releasing it. A tenant whose account cannot be read is reported as an
// invalid metric (the scrape fails with its error) and counted in
// collector_errors_total.
func (c *Collector) Collect(ch chan<- prom.Metric) {
	if c.opt.Lock != nil {
		c.opt.Lock.Lock()
	}
	at := c.l.Now()
	if c.opt.Now != nil {
		if t := c.opt.Now(); t.After(at) {
			at = t
		}
	}
	from := c.l.Begin()
	if w := c.opt.Window; w > 0 && at.Add(-w).After(from) {
		from = at.Add(-w)
	}
	var samples []sample
	for id := range c.l.Tenants() {
		info, _ := c.l.Tenant(id)
		acct, err := c.l.TenantAccount(id, from, at)
		samples = append(samples, sample{id, info, acct, err})
	}
	capacity := c.l.Capacity()
	if c.opt.Lock != nil {
		c.opt.Lock.Unlock()
	}

	gauge := func(d *prom.Desc, v float64, labels ...string) {
		ch <- prom.MustNewConstMetric(d, prom.GaugeValue, v, labels...)
	}
	gauge(c.capacity, float64(capacity))
	gauge(c.window, at.Sub(from).Seconds())
	for _, s := range samples {
		id := string(s.id)
		if s.err != nil {
			c.scrapeErrors.Inc()
			ch <- prom.NewInvalidMetric(c.rho, fmt.Errorf("tenant %q: %w", id, s.err))
			continue
		}
		gauge(c.alloc, float64(s.acct.Alloc), id)
		gauge(c.fair, float64(s.acct.FairShare), id)
		gauge(c.rho, float64(s.acct.Rho), id) // +Inf stays +Inf
		gauge(c.weight, s.info.Weight, id)
		gauge(c.quota, s.info.Quota, id)
		gauge(c.held, float64(s.info.Alloc), id)
		gauge(c.dem, float64(s.info.Demand), id)
	}
	c.scrapeErrors.Collect(ch)
}
