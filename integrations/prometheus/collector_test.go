package prometheus_test

import (
	"errors"
	"math"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	astraeaprom "github.com/astraea-sched/astraea/integrations/prometheus"
	"github.com/astraea-sched/astraea/ledger"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// twoTeams is the README's example: on 16 GPUs shared equally, team-a's
// 12-GPU job runs from t0 while team-b's 8-GPU job waits.
func twoTeams(t *testing.T, cfg ledger.Config) *ledger.Ledger {
	t.Helper()
	cfg.Capacity, cfg.Start = 16, t0
	l, err := ledger.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(
		l.AddTenant(t0, "team-a", 1), l.AddTenant(t0, "team-b", 1),
		l.Submit(t0, "a1", "team-a", 12, 1), l.Start(t0, "a1"),
		l.Submit(t0, "b1", "team-b", 8, 1),
	); err != nil {
		t.Fatal(err)
	}
	return l
}

// scrape serves c over HTTP as Prometheus would, fetches the text
// exposition and returns each sample's value by metric name and tenant
// ("" for a metric without the label).
func scrape(t *testing.T, c prom.Collector) map[string]map[string]float64 {
	t.Helper()
	reg := prom.NewPedanticRegistry()
	reg.MustRegister(c)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("scrape: HTTP %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for name, f := range families {
		out[name] = map[string]float64{}
		for _, m := range f.GetMetric() {
			out[name][label(m, "tenant")] = value(f.GetType(), m)
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func value(typ dto.MetricType, m *dto.Metric) float64 {
	if typ == dto.MetricType_COUNTER {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

func TestScrapeReportsTheAccounts(t *testing.T) {
	l := twoTeams(t, ledger.Config{})
	if err := l.Advance(t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	c, err := astraeaprom.NewCollector(l, astraeaprom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := scrape(t, c)
	for _, tc := range []struct {
		metric, tenant string
		want           float64
	}{
		{"astraea_tenant_alloc_gpu_seconds", "team-a", 12 * 3600},
		{"astraea_tenant_fair_share_gpu_seconds", "team-a", 8 * 3600},
		{"astraea_tenant_rho", "team-a", 1.5},
		{"astraea_tenant_alloc_gpu_seconds", "team-b", 0},
		{"astraea_tenant_fair_share_gpu_seconds", "team-b", 8 * 3600},
		{"astraea_tenant_rho", "team-b", 0},
		{"astraea_tenant_weight", "team-a", 1},
		{"astraea_tenant_quota_gpus", "team-b", 8},
		{"astraea_tenant_allocated_gpus", "team-a", 12},
		{"astraea_tenant_allocated_gpus", "team-b", 0},
		{"astraea_tenant_demand_gpus", "team-b", 8},
		{"astraea_ledger_capacity_gpus", "", 16},
		{"astraea_ledger_window_seconds", "", 3600},
		{"astraea_collector_errors_total", "", 0},
	} {
		v, ok := got[tc.metric][tc.tenant]
		if !ok {
			t.Errorf("%s{tenant=%q} missing; scraped %v", tc.metric, tc.tenant, got[tc.metric])
		} else if math.Abs(v-tc.want) > 1e-9*math.Max(1, tc.want) {
			t.Errorf("%s{tenant=%q} = %v, want %v", tc.metric, tc.tenant, v, tc.want)
		}
	}
}

// The accounts are gauges because they can fall: with a half-life, a
// tenant whose job stopped sees its received GPU·seconds decay.
func TestDecayLowersTheGauges(t *testing.T) {
	l := twoTeams(t, ledger.Config{History: ledger.HalfLife(time.Hour)})
	if err := l.Stop(t0.Add(time.Hour), "a1"); err != nil {
		t.Fatal(err)
	}
	c, err := astraeaprom.NewCollector(l, astraeaprom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := scrape(t, c)["astraea_tenant_alloc_gpu_seconds"]["team-a"]
	if err := l.Advance(t0.Add(3 * time.Hour)); err != nil {
		t.Fatal(err)
	}
	after := scrape(t, c)["astraea_tenant_alloc_gpu_seconds"]["team-a"]
	// Two half-lives later a quarter is left.
	if !(after < before) || math.Abs(after-before/4) > 1e-6*before {
		t.Errorf("team-a's received GPU·s went from %v to %v two half-lives later, want a quarter", before, after)
	}
}

// Options.Now extrapolates the ledger's state to the scrape; Window
// limits the accounts to the last stretch of it.
func TestNowAndWindow(t *testing.T) {
	l := twoTeams(t, ledger.Config{})
	at := t0.Add(2 * time.Hour) // no event since t0
	c, err := astraeaprom.NewCollector(l, astraeaprom.Options{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	if v := scrape(t, c)["astraea_tenant_alloc_gpu_seconds"]["team-a"]; v != 12*2*3600 {
		t.Errorf("extrapolated to 2 h: team-a received %v GPU·s, want %v", v, 12*2*3600)
	}
	c, err = astraeaprom.NewCollector(l, astraeaprom.Options{Now: func() time.Time { return at }, Window: 30 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	got := scrape(t, c)
	if v := got["astraea_tenant_alloc_gpu_seconds"]["team-a"]; v != 12*1800 {
		t.Errorf("over the last 30 min: team-a received %v GPU·s, want %v", v, 12*1800)
	}
	if v := got["astraea_ledger_window_seconds"][""]; v != 1800 {
		t.Errorf("window %v s, want 1800", v)
	}
}

// A tenant served while owed nothing has ρ = +Inf, which Prometheus
// carries as +Inf.
func TestInfiniteRho(t *testing.T) {
	l, err := ledger.New(ledger.Config{Capacity: 8, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(l.AddTenant(t0, "free-rider", 1), l.Submit(t0, "j", "free-rider", 4, 1), l.Start(t0, "j"),
		l.SetCapacity(t0, 0), l.Advance(t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	c, err := astraeaprom.NewCollector(l, astraeaprom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v := scrape(t, c)["astraea_tenant_rho"]["free-rider"]; !math.IsInf(v, 1) {
		t.Errorf("ρ = %v, want +Inf", v)
	}
}

// Scrapes run on the HTTP server's goroutines while the scheduler changes
// the ledger; the collector reads it under the scheduler's lock.
func TestScrapesWhileTheLedgerChanges(t *testing.T) {
	l := twoTeams(t, ledger.Config{})
	var mu sync.Mutex
	c, err := astraeaprom.NewCollector(l, astraeaprom.Options{Lock: &mu})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= 200; i++ {
			mu.Lock()
			at := t0.Add(time.Duration(i) * time.Minute)
			var err error
			if i%2 == 1 {
				err = l.Stop(at, "a1")
			} else {
				err = l.Start(at, "a1")
			}
			mu.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 20 {
		got := scrape(t, c)
		if a := got["astraea_tenant_alloc_gpu_seconds"]["team-a"]; a < 0 || a > 12*200*60 {
			t.Errorf("team-a received %v GPU·s", a)
		}
	}
	<-done
}

func TestNewCollectorRefusesBadOptions(t *testing.T) {
	l := twoTeams(t, ledger.Config{})
	for name, tc := range map[string]struct {
		l   astraeaprom.Ledger
		opt astraeaprom.Options
	}{
		"a nil ledger":                  {nil, astraeaprom.Options{}},
		"a negative window":             {l, astraeaprom.Options{Window: -time.Second}},
		"a namespace that is not UTF-8": {l, astraeaprom.Options{Namespace: "gpu\xff"}},
	} {
		if _, err := astraeaprom.NewCollector(tc.l, tc.opt); !errors.Is(err, astraeaprom.ErrOptions) {
			t.Errorf("%s: error %v, want ErrOptions", name, err)
		}
	}
}

// The metric names carry the namespace and the constant labels.
func TestNamespaceAndConstLabels(t *testing.T) {
	l := twoTeams(t, ledger.Config{})
	c, err := astraeaprom.NewCollector(l, astraeaprom.Options{Namespace: "gpu", ConstLabels: prom.Labels{"cluster": "east"}})
	if err != nil {
		t.Fatal(err)
	}
	reg := prom.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
		for _, m := range f.GetMetric() {
			if label(m, "cluster") != "east" {
				t.Errorf("%s lacks cluster=east", f.GetName())
			}
		}
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "gpu_tenant_rho") || strings.Contains(got, "astraea_") {
		t.Errorf("metric names %s", got)
	}
}
