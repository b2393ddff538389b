package prometheus_test

import (
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	astraeaprom "github.com/astraea-sched/astraea/integrations/prometheus"
	"github.com/astraea-sched/astraea/ledger"
)

// A scheduler keeps its ledger under a lock and registers a collector of
// it; a Prometheus server scraping /metrics (promhttp.HandlerFor(reg, …))
// then sees each tenant's accounts as of the scrape. Here the registry is
// gathered directly and ρ printed.
func ExampleNewCollector() {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	l, err := ledger.New(ledger.Config{Capacity: 16, Start: t0})
	if err != nil {
		log.Fatal(err)
	}
	if err := errors.Join(
		l.AddTenant(t0, "team-a", 1), l.AddTenant(t0, "team-b", 1),
		l.Submit(t0, "a1", "team-a", 12, 1), l.Start(t0, "a1"),
		l.Submit(t0, "b1", "team-b", 8, 1),
		l.Advance(t0.Add(time.Hour)),
	); err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex // held by the scheduler around every ledger call
	c, err := astraeaprom.NewCollector(l, astraeaprom.Options{Lock: &mu})
	if err != nil {
		log.Fatal(err)
	}
	reg := prom.NewRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "astraea_tenant_rho" {
			for _, m := range f.GetMetric() {
				fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetGauge().GetValue())
			}
		}
	}
	// Output:
	// astraea_tenant_rho team-a 1.5
	// astraea_tenant_rho team-b 0
}
