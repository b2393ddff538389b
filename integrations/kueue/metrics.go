package kueue

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"
)

// collector exposes the ledger's per-tenant accounts at scrape time. They
// are gauges, not counters: under a half-life or a trailing window the
// totals fall as old service is discounted.
type collector struct {
	c                              *Controller
	alloc, fair, rho, demand, held *prometheus.Desc
	weight                         *prometheus.Desc
}

func newCollector(c *Controller) *collector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, []string{"tenant"}, nil)
	}
	return &collector{
		c:      c,
		alloc:  d("astraea_tenant_alloc_gpu_seconds", "GPU-seconds the tenant received over the ledger's history (∫Alloc)."),
		fair:   d("astraea_tenant_fair_share_gpu_seconds", "GPU-seconds the tenant was owed over the ledger's history (∫FairShare)."),
		rho:    d("astraea_tenant_rho", "Long-term fairness ratio ρ = received ÷ owed; +Inf when served while owed nothing."),
		demand: d("astraea_tenant_demand_gpus", "GPUs asked for by the tenant's pending and admitted workloads."),
		held:   d("astraea_tenant_allocated_gpus", "GPUs held by the tenant's admitted workloads."),
		weight: d("astraea_kueue_fair_sharing_weight", "The tenant's queue's spec.fairSharing.weight after the last sync."),
	}
}

// Describe implements prometheus.Collector.
func (m *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.alloc, m.fair, m.rho, m.demand, m.held, m.weight} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *collector) Collect(ch chan<- prometheus.Metric) {
	rec := m.c.Recorder()
	if rec == nil {
		return
	}
	g := func(d *prometheus.Desc, v float64, tenant string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, tenant)
	}
	for _, t := range rec.Tenants(m.c.opts.Clock()) {
		id := string(t.ID)
		g(m.alloc, float64(t.Account.Alloc), id)
		g(m.fair, float64(t.Account.FairShare), id)
		rho := float64(t.Account.Rho)
		if t.Account.Rho.IsInf() {
			rho = math.Inf(1)
		}
		g(m.rho, rho, id)
		g(m.demand, float64(t.Demand), id)
		g(m.held, float64(t.Alloc), id)
	}
	for id, w := range m.c.Weights() {
		g(m.weight, w, string(id))
	}
}
