// Package prometheus exports a ledger's accounts as Prometheus metrics: a
// [Collector] that reads, at every scrape, each tenant's GPU·seconds
// received and owed and its ρ, with the cluster's capacity and what is
// allocated now.
//
// The accounts are gauges, not counters: under a half-life or a trailing
// window ([ledger.HalfLife], [ledger.TrailingWindow]) old service is
// discounted or dropped, so the totals can fall.
//
// The package lives in a module of its own, so that importing the ledger
// never pulls in the Prometheus client. Import it under a name of its own:
//
//	import astraeaprom "github.com/astraea-sched/astraea/integrations/prometheus"
//
//	c, err := astraeaprom.NewCollector(led, astraeaprom.Options{Lock: &mu})
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(c)
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// A scrape runs on the HTTP server's goroutine while the scheduler updates
// the ledger on its own, and a ledger is not safe for concurrent use: give
// the collector the lock the scheduler holds around its ledger calls.
package prometheus
