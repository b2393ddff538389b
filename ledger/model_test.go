package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/internal/oracle"
	"pgregory.net/rapid"
)

// The model-based test drives three ledgers with one random event sequence
// and compares them after every step with the exact oracle:
//
//   - l: every event, including Advance; replaced from time to time by
//     Restore(l.MarshalBinary()), so restore-then-continue is exercised;
//   - lazy: the same events without any Advance, so results must not depend
//     on how often the clock is advanced;
//   - o: the naive big.Rat reference (internal/oracle).
//
// Events include Forget of random jobs, finished or not.
//
// Accounts must agree with the oracle within a relative tolerance of 1e-9 of
// the larger of the value itself and the window's capacity scale (max M ×
// window length); rejected events must return the oracle's error kind and
// leave the ledger byte-identical.
const modelTol = 1e-9

var (
	tenantPool = []TenantID{"ta", "tb", "tc", "td"}
	jobPool    = []JobID{"j0", "j1", "j2", "j3", "j4", "j5", "j6", "j7", "j8", "j9"}
)

type model struct {
	l, lazy  *Ledger
	o        *oracle.Oracle
	clock    int64 // ns since t0 of the last accepted event
	maxCap   int
	feasible bool  // Σ running demand ≤ M after every accepted event so far
	window   int64 // trailing window in ns, 0 if none
	buckets  int64 // bucket count, 0 if none
	width    int64 // bucket width in ns
	snaps    int
	tree     bool       // tenants are added under random parents
	pool     []TenantID // the tenant ids events draw from
}

func kindOf(err error) oracle.Kind {
	for _, p := range []struct {
		e error
		k oracle.Kind
	}{
		{ErrTimeBackwards, oracle.TimeBackwards}, {ErrUnknownTenant, oracle.UnknownTenant},
		{ErrUnknownJob, oracle.UnknownJob}, {ErrDuplicateTenant, oracle.DuplicateTenant},
		{ErrDuplicateJob, oracle.DuplicateJob}, {ErrInvalidTransition, oracle.InvalidTransition},
		{ErrInvalidValue, oracle.InvalidValue}, {ErrTenantBusy, oracle.TenantBusy},
		{ErrOutOfHistory, oracle.OutOfHistory},
	} {
		if errors.Is(err, p.e) {
			return p.k
		}
	}
	if err != nil {
		return oracle.Kind("other: " + err.Error())
	}
	return oracle.OK
}

func newModel(t *rapid.T) *model {
	mode := rapid.SampledFrom([]Mode{DemandAware, QuotaShare}).Draw(t, "mode")
	capacity := rapid.IntRange(0, 32).Draw(t, "capacity")
	var hist History
	var window, halfLife int64
	switch rapid.IntRange(0, 2).Draw(t, "history") {
	case 1:
		w := time.Duration(rapid.IntRange(1, 3000).Draw(t, "window s")) * time.Second
		hist, window = TrailingWindow(w), int64(w)
	case 2:
		h := time.Duration(rapid.IntRange(1, 3000).Draw(t, "half-life s")) * time.Second
		hist, halfLife = HalfLife(h), int64(h)
	}
	m := modelOf(t, mode, capacity, hist, oracle.New(mode == QuotaShare, capacity, window, halfLife))
	m.window = window
	return m
}

// newBucketsModel is newModel under Buckets of random count and width, the
// oracle keeping the same buckets. (A test of its own: a new draw in
// newModel would reinterpret the failure files saved for it.)
func newBucketsModel(t *rapid.T) *model {
	mode := rapid.SampledFrom([]Mode{DemandAware, QuotaShare}).Draw(t, "mode")
	capacity := rapid.IntRange(0, 32).Draw(t, "capacity")
	n := rapid.IntRange(1, 5).Draw(t, "buckets")
	w := time.Duration(rapid.IntRange(1, 1000).Draw(t, "bucket s")) * time.Second
	m := modelOf(t, mode, capacity, Buckets(n, w), oracle.NewBuckets(mode == QuotaShare, capacity, int64(n), int64(w)))
	m.buckets, m.width = int64(n), int64(w)
	return m
}

func modelOf(t *rapid.T, mode Mode, capacity int, hist History, o *oracle.Oracle) *model {
	share := rapid.SampledFrom([]JobShare{CappedJobShare, SplitJobShare}).Draw(t, "job share")
	cfg := Config{Mode: mode, Capacity: GPUs(capacity), Start: t0, History: hist, JobShare: share}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lazy, _ := New(cfg)
	if share == SplitJobShare {
		o.SplitJobShares()
	}
	return &model{l: l, lazy: lazy, o: o, maxCap: capacity, feasible: true, pool: tenantPool}
}

// treePool is the tenant ids of the tree model: enough for trees four
// levels deep beside other branches.
var treePool = []TenantID{"ta", "tb", "tc", "td", "te", "tf"}

// newTreeModel is newModel with tenants added under random parents (the
// cluster or another tenant of the pool), so the ledger and the oracle see
// trees of random shape: deep chains, wide levels, tenants moved under a
// new parent when added again after their removal.
func newTreeModel(t *rapid.T) *model { return treeOf(newModel(t)) }

func treeOf(m *model) *model {
	m.tree, m.pool = true, treePool
	return m
}

func (m *model) at(ns int64) time.Time { return t0.Add(time.Duration(ns)) }

// drawTime draws an event time: mostly forward, sometimes equal, rarely
// backwards.
func (m *model) drawTime(t *rapid.T) int64 {
	switch rapid.IntRange(0, 19).Draw(t, "time kind") {
	case 0:
		return m.clock - rapid.Int64Range(1, 5e9).Draw(t, "back ns")
	case 1, 2, 3, 4:
		return m.clock
	case 5:
		return m.clock + rapid.Int64Range(1, 1000).Draw(t, "dt ns")
	default:
		return m.clock + rapid.Int64Range(1, 600).Draw(t, "dt s")*1e9
	}
}

func drawWeight(t *rapid.T, label string) float64 {
	if rapid.IntRange(0, 9).Draw(t, label+" bad") == 0 {
		return rapid.SampledFrom([]float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)}).Draw(t, label)
	}
	return rapid.SampledFrom([]float64{0.5, 1, 1, 1, 2, 3, 0.1, 7}).Draw(t, label)
}

// event applies a burst of one to six random events, so that sequences
// grow long at rapid's default number of steps.
func (m *model) event(t *rapid.T) {
	for range rapid.IntRange(1, 6).Draw(t, "burst") {
		m.oneEvent(t)
	}
}

func (m *model) oneEvent(t *rapid.T) {
	at := m.drawTime(t)
	when := m.at(at)
	tn := rapid.SampledFrom(m.pool).Draw(t, "tenant")
	jb := rapid.SampledFrom(jobPool).Draw(t, "job")
	var apply func(*Ledger) error
	var want oracle.Kind
	switch kind := rapid.IntRange(0, 14).Draw(t, "event"); kind {
	case 0, 1:
		w := drawWeight(t, "tenant weight")
		if m.tree {
			parent := rapid.SampledFrom(append([]TenantID{"", ""}, m.pool...)).Draw(t, "parent")
			apply = func(l *Ledger) error { return l.AddTenantUnder(when, tn, parent, w) }
			want = m.o.AddTenantUnder(at, string(tn), string(parent), w)
			break
		}
		apply = func(l *Ledger) error { return l.AddTenant(when, tn, w) }
		want = m.o.AddTenant(at, string(tn), w)
	case 2:
		w := drawWeight(t, "tenant weight")
		apply = func(l *Ledger) error { return l.SetTenantWeight(when, tn, w) }
		want = m.o.SetTenantWeight(at, string(tn), w)
	case 3:
		apply = func(l *Ledger) error { return l.RemoveTenant(when, tn) }
		want = m.o.RemoveTenant(at, string(tn))
	case 4:
		c := rapid.IntRange(-1, 32).Draw(t, "capacity")
		apply = func(l *Ledger) error { return l.SetCapacity(when, GPUs(c)) }
		want = m.o.SetCapacity(at, c)
	case 5, 6:
		d := rapid.IntRange(-1, 8).Draw(t, "demand")
		w := drawWeight(t, "job weight")
		apply = func(l *Ledger) error { return l.Submit(when, jb, tn, GPUs(d), w) }
		want = m.o.Submit(at, string(jb), string(tn), d, w)
	case 7:
		w := drawWeight(t, "job weight")
		apply = func(l *Ledger) error { return l.SetJobWeight(when, jb, w) }
		want = m.o.SetJobWeight(at, string(jb), w)
	case 8, 9:
		apply = func(l *Ledger) error { return l.Start(when, jb) }
		want = m.o.Start(at, string(jb))
	case 10:
		apply = func(l *Ledger) error { return l.Stop(when, jb) }
		want = m.o.Stop(at, string(jb))
	case 11:
		s := rapid.SampledFrom([]FinalState{Completed, Failed, Cancelled, 0, 4}).Draw(t, "final")
		apply = func(l *Ledger) error { return l.Finish(when, jb, s) }
		want = m.o.Finish(at, string(jb), s.valid())
	case 12:
		at = m.clock // Forget takes no time and never moves the clock
		apply = func(l *Ledger) error { return l.Forget(jb) }
		want = m.o.Forget(string(jb))
	case 13, 14:
		// StartAll or StopAll of a few jobs, one of them perhaps twice
		on := kind == 13
		ids := rapid.SliceOfN(rapid.SampledFrom(jobPool), 0, 4).Draw(t, "jobs")
		names := make([]string, len(ids))
		for i, id := range ids {
			names[i] = string(id)
		}
		var bad int
		want, bad = m.o.SetRunningAll(at, names, on)
		apply = func(l *Ledger) error {
			var err error
			if on {
				err = l.StartAll(when, ids)
			} else {
				err = l.StopAll(when, ids)
			}
			var le *Error
			if err != nil && bad >= 0 && (!errors.As(err, &le) || le.Job != ids[bad]) {
				t.Fatalf("%v names the wrong job: the oracle rejects %s", err, ids[bad])
			}
			return err
		}
		if len(ids) == 0 {
			at = m.clock // an empty list does nothing
		}
	}
	m.applyBoth(t, apply, want, at, true)
}

// applyBoth applies an event to l (and, unless it is an Advance, to lazy)
// and compares the outcome with the oracle's.
func (m *model) applyBoth(t *rapid.T, apply func(*Ledger) error, want oracle.Kind, at int64, toLazy bool) {
	before, _ := m.l.MarshalBinary()
	err := apply(m.l)
	if got := kindOf(err); got != want {
		t.Fatalf("ledger says %q (%v), oracle says %q", got, err, want)
	}
	if err != nil {
		var le *Error
		if !errors.As(err, &le) || le.Op == "" {
			t.Fatalf("%v is not a *Error", err)
		}
		if after, _ := m.l.MarshalBinary(); !bytes.Equal(before, after) {
			t.Fatalf("rejected event (%v) changed the ledger", err)
		}
		return
	}
	m.clock = at
	if toLazy {
		if err := apply(m.lazy); err != nil {
			t.Fatalf("lazy ledger rejected an accepted event: %v", err)
		}
	}
	m.maxCap = max(m.maxCap, m.o.Capacity())
	running := 0
	for _, id := range m.o.Jobs() {
		if j, _ := m.o.Job(id); j.Running {
			running += j.Demand
		}
	}
	if running > m.o.Capacity() {
		m.feasible = false
	}
}

func (m *model) advance(t *rapid.T) {
	at := m.drawTime(t)
	m.applyBoth(t, func(l *Ledger) error { return l.Advance(m.at(at)) }, m.o.Advance(at), at, false)
}

func (m *model) reset(t *rapid.T) {
	if rapid.IntRange(0, 3).Draw(t, "reset?") != 0 {
		return
	}
	at := m.drawTime(t)
	m.applyBoth(t, func(l *Ledger) error { return l.Reset(m.at(at)) }, m.o.Reset(at), at, true)
}

func (m *model) snapshot(t *rapid.T) {
	b, err := m.l.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Restore(b)
	if err != nil {
		t.Fatalf("restore of a fresh snapshot: %v", err)
	}
	if b2, _ := r.MarshalBinary(); !bytes.Equal(b, b2) {
		t.Fatal("snapshot of the restored ledger differs")
	}
	m.l = r
	m.snaps++
}

func (m *model) close(t *rapid.T, what string, got, want, scale float64) {
	if math.IsNaN(got) || math.Abs(got-want) > modelTol*max(1, math.Abs(want), scale) {
		t.Fatalf("%s: ledger %v, oracle %v (diff %g)", what, got, want, got-want)
	}
}

// checkAccounts compares one tenant's or job's accounts over windows with
// the oracle's and the lazily queried ledger's, applies bound (if any) to
// each, and checks additivity: [a, b) = [a, mid) decayed to b + [mid, b),
// with split = {a, mid, b}.
func (m *model) checkAccounts(t *rapid.T, who string, windows [][2]int64, split [3]int64, scale func([2]int64) float64,
	acct func(l *Ledger, from, to time.Time) (Account, error),
	oracle func(from, to int64) (alloc, fair float64, known bool),
	bound func(what string, w [2]int64, got Account)) {
	for _, w := range windows {
		got, err := acct(m.l, m.at(w[0]), m.at(w[1]))
		if err != nil {
			t.Fatalf("%s %v: %v", who, w, err)
		}
		oa, of, _ := oracle(w[0], w[1])
		what := fmt.Sprintf("%s [%d, %d)", who, w[0], w[1])
		m.close(t, what+" alloc", float64(got.Alloc), oa, scale(w))
		m.close(t, what+" fair", float64(got.FairShare), of, scale(w))
		if bound != nil {
			bound(what, w, got)
		}
		lz, err := acct(m.lazy, m.at(w[0]), m.at(w[1]))
		if err != nil || lz != got {
			t.Fatalf("%s: lazy ledger %+v (%v), ledger %+v", what, lz, err, got)
		}
	}
	a, mid, b := split[0], split[1], split[2]
	w1, _ := acct(m.l, m.at(a), m.at(mid))
	w2, _ := acct(m.l, m.at(mid), m.at(b))
	whole, _ := acct(m.l, m.at(a), m.at(b))
	f := m.l.lam.factor(b - mid)
	m.close(t, who+" split alloc", float64(w1.Alloc)*f+float64(w2.Alloc), float64(whole.Alloc), scale([2]int64{a, b}))
	m.close(t, who+" split fair", float64(w1.FairShare)*f+float64(w2.FairShare), float64(whole.FairShare), scale([2]int64{a, b}))
}

// checkBatch checks that v.AppendJobAccounts gives what JobAccount gives for
// each of a random list of ids (long enough to span several of its
// batches), keeps what dst held, and stops at the first unknown id.
func (m *model) checkBatch(t *rapid.T, v View) {
	known := m.o.Jobs()
	if len(known) == 0 {
		return
	}
	ids := rapid.SliceOfN(rapid.SampledFrom(known), 0, 70).Draw(t, "batch ids")
	batch := make([]JobID, len(ids), len(ids)+1)
	for i, id := range ids {
		batch[i] = JobID(id)
	}
	if len(batch) > 0 && rapid.Bool().Draw(t, "batch has an unknown id") {
		batch = slices.Insert(batch, rapid.IntRange(0, len(batch)).Draw(t, "unknown at"), "no-such-job")
	}
	prefix := []Account{{Alloc: 1, FairShare: 2, Rho: 0.5}}
	got, ok := v.AppendJobAccounts(prefix, batch)
	want, wantOK := slices.Clip(prefix), true
	for _, id := range batch {
		a, known := v.JobAccount(id)
		if !known {
			wantOK = false
			break
		}
		want = append(want, a)
	}
	if ok != wantOK || !slices.Equal(got, want) {
		t.Fatalf("AppendJobAccounts(%v) = %v, %v; one by one %v, %v", batch, got, ok, want, wantOK)
	}
}

// check is run after every action.
// usage sums, by the oracle's jobs, the demand of the running and of the
// active jobs in tenant id's subtree.
func (m *model) usage(id string) (held, demand GPUs) {
	for _, j := range m.o.Jobs() {
		info, _ := m.o.Job(j)
		in := false
		for tn := info.Tenant; tn != ""; tn = m.o.Parent(tn) {
			in = in || tn == id
		}
		if in && info.Running {
			held += GPUs(info.Demand)
		}
		if in && info.Active {
			demand += GPUs(info.Demand)
		}
	}
	return held, demand
}

func (m *model) check(t *rapid.T) {
	for _, l := range []*Ledger{m.l, m.lazy} {
		if err := l.Check(); err != nil {
			t.Fatal(err)
		}
	}
	now, begin := m.o.Now(), m.o.Begin()
	if !m.l.Now().Equal(m.at(now)) || !m.l.Begin().Equal(m.at(begin)) {
		t.Fatalf("clock: ledger now %v begin %v, oracle %v %v", m.l.Now(), m.l.Begin(), m.at(now), m.at(begin))
	}
	ahead := now + rapid.Int64Range(0, 100).Draw(t, "ahead s")*1e9
	a := rapid.Int64Range(begin, ahead).Draw(t, "window from")
	b := rapid.Int64Range(a, ahead).Draw(t, "window to")
	mid := rapid.Int64Range(a, b).Draw(t, "window split")
	windows := [][2]int64{{begin, now}, {begin, ahead}, {a, b}}
	scale := func(w [2]int64) float64 { return float64(max(m.maxCap, 8)) * sec(w[1]-w[0]) }

	// tenants
	sumRate := 0.0
	anyRegistered := false
	view := m.l.View(m.at(now))
	for _, id := range m.o.Tenants() {
		tn := TenantID(id)
		m.checkAccounts(t, "tenant "+id, windows, [3]int64{a, mid, b}, scale,
			func(l *Ledger, from, to time.Time) (Account, error) { return l.TenantAccount(tn, from, to) },
			func(from, to int64) (float64, float64, bool) { return m.o.TenantAccount(id, from, to) },
			nil)
		// view = [begin, now)
		va, ok := view.TenantAccount(tn)
		full, _ := m.l.TenantAccount(tn, m.at(begin), m.at(now))
		if !ok || va != full {
			t.Fatalf("view of %s: %+v, account %+v", id, va, full)
		}
		// a view ahead of Now() covers [max(Begin(), ahead−w), ahead)
		aheadFrom := begin
		if m.window > 0 {
			aheadFrom = max(begin, ahead-m.window)
		}
		if m.buckets > 0 { // ahead ≥ 0: division rounds down
			aheadFrom = max(begin, (ahead/m.width-(m.buckets-1))*m.width)
		}
		ahAcct, ok := m.l.View(m.at(ahead)).TenantAccount(tn)
		ahWant, _ := m.l.TenantAccount(tn, m.at(aheadFrom), m.at(ahead))
		if !ok || ahAcct != ahWant {
			t.Fatalf("view ahead of %s: %+v, account %+v", id, ahAcct, ahWant)
		}
		info, ok := m.l.Tenant(tn)
		if !ok || info.Registered != m.o.Registered(id) || info.ID != tn || info.Parent != TenantID(m.o.Parent(id)) {
			t.Fatalf("Tenant(%s) = %+v, oracle registered %v under %q", id, info, m.o.Registered(id), m.o.Parent(id))
		}
		if vi, ok := view.Tenant(tn); !ok || vi != info {
			t.Fatalf("view's Tenant(%s) = %+v, ledger's %+v", id, vi, info)
		}
		if held, demand := m.usage(id); info.Alloc != held || info.Demand != demand {
			t.Fatalf("Tenant(%s) holds %d GPUs of demand %d; its jobs' running and active demand are %d, %d", id, info.Alloc, info.Demand, held, demand)
		}
		r, _ := view.TenantFairRate(tn)
		or, _ := m.o.TenantFairRate(id)
		m.close(t, "tenant rate "+id, r, or, 1)
		if info.Parent == "" {
			sumRate += r // the top level shares M
		}
		if m.o.Registered(id) {
			anyRegistered = true
		}
	}
	capNow := float64(m.o.Capacity())
	if sumRate > capNow*(1+modelTol)+modelTol {
		t.Fatalf("Σ tenant fair rates %v > M %v", sumRate, capNow)
	}
	if m.l.Mode() == QuotaShare && anyRegistered {
		m.close(t, "Eq. 16 Σ fair rates = M", sumRate, capNow, 1)
	}

	// jobs
	perTenant := map[string]float64{}
	for _, id := range m.o.Jobs() {
		jb := JobID(id)
		info, _ := m.o.Job(id)
		if ji, ok := m.l.Job(jb); !ok || ji.Running != info.Running || ji.Active != info.Active ||
			ji.Demand != GPUs(info.Demand) || ji.Weight != info.Weight || ji.Tenant != TenantID(info.Tenant) {
			t.Fatalf("Job(%s) = %+v, oracle %+v", id, ji, info)
		}
		m.checkAccounts(t, "job "+id, windows, [3]int64{a, mid, b}, scale,
			func(l *Ledger, from, to time.Time) (Account, error) { return l.JobAccount(jb, from, to) },
			func(from, to int64) (float64, float64, bool) { return m.o.JobAccount(id, from, to) },
			func(what string, w [2]int64, got Account) {
				if float64(got.Alloc) < 0 || float64(got.Alloc) > float64(info.Demand)*sec(w[1]-w[0])*(1+modelTol)+modelTol {
					t.Fatalf("%s: alloc %v outside [0, D×elapsed]", what, got.Alloc)
				}
			})
		r, ok := view.JobFairRate(jb)
		or, _ := m.o.JobFairRate(id)
		if !ok {
			t.Fatalf("view lost job %s", id)
		}
		m.close(t, "job rate "+id, r, or, 1)
		if m.l.JobShare() == CappedJobShare && r > float64(info.Demand)*(1+modelTol) {
			t.Fatalf("job %s fair rate %v > demand %d", id, r, info.Demand)
		}
		perTenant[info.Tenant] += r
	}
	for id, s := range perTenant {
		r, _ := view.TenantFairRate(TenantID(id))
		if s > r*(1+modelTol)+modelTol {
			t.Fatalf("tenant %s: Σ job fair rates %v > tenant fair rate %v", id, s, r)
		}
		// Without the cap the jobs' shares are the tenant's, split.
		if m.l.JobShare() == SplitJobShare && math.Abs(s-r) > r*modelTol+modelTol {
			if ti, _ := m.l.Tenant(TenantID(id)); ti.Demand > 0 {
				t.Fatalf("tenant %s: Σ split job fair rates %v ≠ tenant fair rate %v", id, s, r)
			}
		}
	}

	m.checkBatch(t, view)
	m.checkBatch(t, m.l.View(m.at(ahead)))

	// cluster
	for _, w := range windows {
		got, err := m.l.ClusterAccount(m.at(w[0]), m.at(w[1]))
		if err != nil {
			t.Fatal(err)
		}
		oc, oa, oi := m.o.ClusterAccount(w[0], w[1])
		m.close(t, "cluster capacity", float64(got.Capacity), oc, scale(w))
		m.close(t, "cluster allocated", float64(got.Allocated), oa, scale(w))
		m.close(t, "cluster idle", float64(got.Idle), oi, scale(w))
		if m.feasible && float64(got.Allocated) > float64(got.Capacity)*(1+modelTol)+modelTol {
			t.Fatalf("feasible allocations but ∫alloc %v > ∫M %v", got.Allocated, got.Capacity)
		}
	}

	// bad windows are rejected like the oracle does
	if begin > 0 {
		_, err := m.l.TenantAccount("ta", m.at(begin-1), m.at(now))
		if kindOf(err) != oracle.OutOfHistory && !errors.Is(err, ErrUnknownTenant) {
			t.Fatalf("window before Begin(): %v", err)
		}
	}
}

// TestTreeModelAgainstOracle is TestModelAgainstOracle on trees of random
// shape: every tenant, interior or leaf, and every job agrees with the
// oracle's recursive definition over random windows.
func TestTreeModelAgainstOracle(t *testing.T) { runModel(t, newTreeModel) }

func TestModelAgainstOracle(t *testing.T) { runModel(t, newModel) }

// TestBucketsModelAgainstOracle and TestBucketsTreeModelAgainstOracle are
// the two model tests under Buckets.
func TestBucketsModelAgainstOracle(t *testing.T) { runModel(t, newBucketsModel) }

func TestBucketsTreeModelAgainstOracle(t *testing.T) {
	runModel(t, func(t *rapid.T) *model { return treeOf(newBucketsModel(t)) })
}

func runModel(t *testing.T, newModel func(*rapid.T) *model) {
	rapid.Check(t, func(t *rapid.T) {
		m := newModel(t)
		t.Repeat(map[string]func(*rapid.T){
			"event":    m.event,
			"event2":   m.event,
			"event3":   m.event,
			"advance":  m.advance,
			"reset":    m.reset,
			"snapshot": m.snapshot,
			"":         m.check,
		})
	})
}
