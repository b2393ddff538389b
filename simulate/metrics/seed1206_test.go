package metrics

import (
	"maps"
	"testing"
)

// A summary keeps the run's quota table, also a table of one tenant.
func TestSummaryKeepsTheQuotas(t *testing.T) {
	for _, q := range []map[string]float64{{"x": 1}, {"x": 0.25, "y": 0.75}} {
		r := tiny()
		r.Quotas = q
		if got := Summarize(r, SummaryConfig{}).Quotas; !maps.Equal(got, q) {
			t.Errorf("summary quotas %v, want the run's %v", got, q)
		}
	}
}

// Lines are solid, dashed or dotted: each dash pattern alternates marks
// and gaps of positive length, and a dash is longer than a dot.
func TestDashPatterns(t *testing.T) {
	if dashes[0] != nil {
		t.Errorf("first style %v, want solid", dashes[0])
	}
	for i, d := range dashes[1:] {
		if len(d) != 2 || !(d[0] > 0) || !(d[1] > 0) {
			t.Errorf("style %d: pattern %v, want a positive mark and gap", i+1, d)
		}
	}
	if !(dashes[1][0] > dashes[2][0]) {
		t.Errorf("dash %v not longer than dot %v", dashes[1][0], dashes[2][0])
	}
}
