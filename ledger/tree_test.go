package ledger

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// workedTree builds the package documentation's worked example at t0: M =
// 12; ai (W 2) and ops (W 1) under the cluster; vision and nlp (W 1) under
// ai; vision's jobs demand 8 GPUs (two of 4), nlp's 1.
func workedTree(t *testing.T, mode Mode) *Ledger {
	t.Helper()
	l := mustNew(t, Config{Mode: mode, Capacity: 12, Start: t0})
	do(t, l, l.AddTenant(t0, "ai", 2))
	do(t, l, l.AddTenant(t0, "ops", 1))
	do(t, l, l.AddTenantUnder(t0, "vision", "ai", 1))
	do(t, l, l.AddTenantUnder(t0, "nlp", "ai", 1))
	do(t, l, l.Submit(t0, "v1", "vision", 4, 1))
	do(t, l, l.Submit(t0, "v2", "vision", 4, 1))
	do(t, l, l.Submit(t0, "n1", "nlp", 1, 1))
	do(t, l, l.Check())
	return l
}

func TestTreeWorkedExample(t *testing.T) {
	type want struct{ quota, fair float64 }
	for name, tc := range map[string]struct {
		mode Mode
		want map[TenantID]want
	}{
		"under QuotaShare every fair share is its quota": {QuotaShare, map[TenantID]want{
			"ai": {8, 8}, "ops": {4, 4}, "vision": {4, 4}, "nlp": {4, 4}}},
		"under DemandAware what nlp cannot use flows to vision, what ops cannot use to no one": {DemandAware, map[TenantID]want{
			"ai": {8, 8}, "ops": {4, 0}, "vision": {4, 7}, "nlp": {4, 1}}},
	} {
		t.Run(name, func(t *testing.T) {
			l := workedTree(t, tc.mode)
			do(t, l, l.Advance(ts(10)))
			for id, w := range tc.want {
				info, _ := l.Tenant(id)
				if !near(info.Quota, w.quota) || !near(info.FairRate, w.fair) {
					t.Errorf("%s: quota %v fair %v, want %v %v", id, info.Quota, info.FairRate, w.quota, w.fair)
				}
				a, err := l.TenantAccount(id, t0, ts(10))
				do(t, l, err)
				if !near(float64(a.FairShare), 10*w.fair) {
					t.Errorf("%s: ∫FairShare over 10 s = %v, want %v", id, a.FairShare, 10*w.fair)
				}
			}
		})
	}
}

// A flat tree built with AddTenantUnder(…, "", …) is the ledger built with
// AddTenant, byte for byte.
func TestTreeFlatIsTwoLevel(t *testing.T) {
	for _, mode := range []Mode{DemandAware, QuotaShare} {
		a := mustNew(t, Config{Mode: mode, Capacity: 16, Start: t0})
		b := mustNew(t, Config{Mode: mode, Capacity: 16, Start: t0})
		for i, id := range []TenantID{"x", "y", "z"} {
			do(t, a, a.AddTenant(ts(float64(i)), id, float64(i+1)))
			do(t, b, b.AddTenantUnder(ts(float64(i)), id, "", float64(i+1)))
			j := JobID(fmt.Sprint(id, "/0"))
			for _, l := range []*Ledger{a, b} {
				do(t, l, l.Submit(ts(float64(i)+0.5), j, id, GPUs(2*i+1), 1))
				do(t, l, l.Start(ts(float64(i)+0.5), j))
			}
		}
		sa, _ := a.MarshalBinary()
		sb, _ := b.MarshalBinary()
		if !slices.Equal(sa, sb) {
			t.Errorf("%v: snapshots differ", mode)
		}
	}
}

func TestTreeRejections(t *testing.T) {
	for name, tc := range map[string]struct {
		call func(l *Ledger) error
		want error
	}{
		"a child under an unknown parent": {func(l *Ledger) error { return l.AddTenantUnder(ts(1), "x", "nobody", 1) }, ErrUnknownTenant},
		"a child under a removed parent": {func(l *Ledger) error {
			do(t, l, l.RemoveTenant(ts(1), "ops"))
			return l.AddTenantUnder(ts(1), "x", "ops", 1)
		}, ErrUnknownTenant},
		"a child under a tenant with jobs of its own": {func(l *Ledger) error { return l.AddTenantUnder(ts(1), "x", "vision", 1) }, ErrTenantBusy},
		"a tenant as its own parent":                  {func(l *Ledger) error { return l.AddTenantUnder(ts(1), "x", "x", 1) }, ErrInvalidValue},
		"a job submitted to a tenant with children":   {func(l *Ledger) error { return l.Submit(ts(1), "j", "ai", 1, 1) }, ErrTenantBusy},
		"removing a tenant with registered children":  {func(l *Ledger) error { return l.RemoveTenant(ts(1), "ai") }, ErrTenantBusy},
		"removing a tenant whose subtree has active jobs": {func(l *Ledger) error {
			do(t, l, l.Finish(ts(1), "n1", Completed))
			do(t, l, l.RemoveTenant(ts(1), "nlp"))
			return l.RemoveTenant(ts(1), "ai")
		}, ErrTenantBusy},
	} {
		t.Run(name, func(t *testing.T) {
			l := workedTree(t, DemandAware)
			err := tc.call(l)
			before, _ := l.MarshalBinary()
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			after, _ := l.MarshalBinary()
			if !slices.Equal(before, after) {
				t.Fatal("a rejected call changed the ledger")
			}
			do(t, l, l.Check())
		})
	}
}

// Children lists registered children in the order they were first added,
// also after a tenant is moved under a new parent.
func TestTreeChildren(t *testing.T) {
	l := workedTree(t, QuotaShare)
	do(t, l, l.AddTenantUnder(ts(1), "web", "ops", 1))
	if got := slices.Collect(l.Children("")); !slices.Equal(got, []TenantID{"ai", "ops"}) {
		t.Errorf("top level %v", got)
	}
	do(t, l, l.Finish(ts(2), "n1", Completed))
	do(t, l, l.RemoveTenant(ts(2), "nlp"))
	do(t, l, l.AddTenantUnder(ts(3), "nlp", "ops", 1)) // nlp was added before web
	if got := slices.Collect(l.Children("ops")); !slices.Equal(got, []TenantID{"nlp", "web"}) {
		t.Errorf("children of ops %v", got)
	}
	if got := slices.Collect(l.Children("ai")); !slices.Equal(got, []TenantID{"vision"}) {
		t.Errorf("children of ai %v", got)
	}
	info, _ := l.Tenant("nlp")
	if info.Parent != "ops" || !near(info.Quota, 2) {
		t.Errorf("nlp: %+v", info)
	}
	do(t, l, l.Check())
}

// An idle tenant's account is not rewritten when others join: n tenants
// joining one after another leave history linear in n.
func TestTreeLateJoinHistoryIsLinear(t *testing.T) {
	size := func(n int) int {
		l := mustNew(t, Config{Mode: QuotaShare, Capacity: 64, Start: t0})
		for i := range n {
			do(t, l, l.AddTenant(t0.Add(time.Duration(i)*time.Second), TenantID(fmt.Sprint("t", i)), 1))
		}
		b, _ := l.MarshalBinary()
		return len(b)
	}
	small, large := size(500), size(2000)
	if large > 5*small {
		t.Errorf("snapshot of 2000 late joiners %d B, of 500 %d B: more than linear", large, small)
	}
}
