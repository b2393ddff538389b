package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// eachHistory runs f on a ledger of capacity 8 with tenant "t", under each
// history policy.
func eachHistory(t *testing.T, f func(t *testing.T, h History, l *Ledger)) {
	for _, h := range []History{Unbounded(), TrailingWindow(time.Hour), Buckets(3, 20*time.Minute), HalfLife(time.Hour)} {
		t.Run(h.String(), func(t *testing.T) {
			l := mustNew(t, Config{Capacity: 8, History: h})
			do(t, l, l.AddTenant(t0, "t", 1))
			f(t, h, l)
		})
	}
}

func TestForgetErrorsLeaveLedgerUnchanged(t *testing.T) {
	eachHistory(t, func(t *testing.T, h History, l *Ledger) {
		do(t, l, l.Submit(t0, "pending", "t", 2, 1))
		do(t, l, l.Submit(t0, "running", "t", 2, 1))
		do(t, l, l.Start(t0, "running"))
		do(t, l, l.Submit(t0, "old", "t", 1, 1))
		do(t, l, l.Finish(ts(1), "old", Completed))
		do(t, l, l.Submit(ts(1), "gone", "t", 1, 1))
		do(t, l, l.Finish(ts(2), "gone", Failed))
		do(t, l, l.Forget("gone"))
		do(t, l, l.Advance(ts(7200))) // a trailing hour forgets "old"
		for name, c := range map[string]struct {
			id   JobID
			want error
		}{
			"never submitted":         {"nobody", ErrUnknownJob},
			"pending job":             {"pending", ErrInvalidTransition},
			"running job":             {"running", ErrInvalidTransition},
			"already forgotten":       {"gone", ErrUnknownJob},
			"the empty id is unknown": {"", ErrUnknownJob},
		} {
			before, _ := l.MarshalBinary()
			err := l.Forget(c.id)
			var le *Error
			if !errors.Is(err, c.want) || !errors.As(err, &le) || le.Op != "Forget" || le.Job != c.id {
				t.Fatalf("%s: Forget(%q) = %v, want %v", name, c.id, err, c.want)
			}
			if after, _ := l.MarshalBinary(); !bytes.Equal(before, after) {
				t.Fatalf("%s: rejected Forget changed the ledger", name)
			}
		}
		err := l.Forget("old")
		n, _ := h.Bucketed()
		windowed := h.Window() > 0 || n > 0
		if windowed && !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("job the window forgot: %v", err)
		}
		if !windowed && err != nil {
			t.Fatalf("finished job: %v", err)
		}
		do(t, l, nil)
	})
}

func TestForgottenJobIsUnknownAndItsIDFree(t *testing.T) {
	eachHistory(t, func(t *testing.T, h History, l *Ledger) {
		do(t, l, l.Submit(t0, "j", "t", 4, 1))
		do(t, l, l.Start(t0, "j"))
		do(t, l, l.Finish(ts(600), "j", Completed))
		do(t, l, l.Submit(ts(600), "k", "t", 2, 1))
		do(t, l, l.Finish(ts(600), "k", Cancelled)) // same finish time, later in the list
		do(t, l, l.Forget("j"))
		if _, ok := l.Job("j"); ok {
			t.Fatal("Job reports a forgotten job")
		}
		if _, err := l.JobAccount("j", t0, ts(600)); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("JobAccount of a forgotten job: %v", err)
		}
		v := l.View(ts(600))
		if _, ok := v.JobAccount("j"); ok {
			t.Fatal("View.JobAccount reports a forgotten job")
		}
		if _, ok := v.JobFairRate("j"); ok {
			t.Fatal("View.JobFairRate reports a forgotten job")
		}
		for _, d := range l.done {
			if d.id == "j" {
				t.Fatal("the trailing window's finish list still holds the forgotten job")
			}
		}
		if h.windowed() && len(l.done) != 1 {
			t.Fatalf("finish list holds %d jobs, want k alone", len(l.done))
		}
		if !l.Now().Equal(ts(600)) {
			t.Fatalf("Forget moved Now() to %v", l.Now())
		}
		b, _ := l.MarshalBinary()
		r, err := Restore(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := r.Job("j"); ok {
			t.Fatal("the snapshot kept a forgotten job")
		}
		// The id is free again, in the ledger and in its restored copy;
		// the new job's account starts from its own submission.
		for _, x := range []*Ledger{l, r} {
			do(t, x, x.Submit(ts(600), "j", "t", 1, 1))
			do(t, x, x.Start(ts(600), "j"))
			a := jobAcct(t, x, "j", ts(600), ts(1200))
			if h.HalfLifeDuration() > 0 {
				if a.Rho != 1 || a.Alloc <= 0 || a.Alloc >= 600 {
					t.Fatalf("resubmitted job under a half-life: %+v", a)
				}
				continue
			}
			wantAccount(t, "resubmitted job", a, 600, 600)
		}
	})
}

// forgetPair drives two ledgers with one random event sequence: keep never
// forgets, forget forgets every job as soon as it finishes. Job ids are never
// reused, so every event is accepted or rejected alike by both.
type forgetPair struct {
	keep, forget *Ledger
	clock        int64
	next         int
	active       []JobID
}

func (p *forgetPair) step(t *rapid.T) {
	p.clock += rapid.Int64Range(0, 600).Draw(t, "dt s") * 1e9
	at := t0.Add(time.Duration(p.clock))
	tn := rapid.SampledFrom(tenantPool[:3]).Draw(t, "tenant")
	var apply func(*Ledger) error
	var finished JobID
	switch rapid.IntRange(0, 5).Draw(t, "event") {
	case 0:
		id := JobID(fmt.Sprintf("j%d", p.next))
		p.next++
		d := GPUs(rapid.IntRange(1, 8).Draw(t, "demand"))
		w := rapid.SampledFrom([]float64{0.5, 1, 2}).Draw(t, "weight")
		p.active = append(p.active, id)
		apply = func(l *Ledger) error { return l.Submit(at, id, tn, d, w) }
	case 1:
		c := GPUs(rapid.IntRange(0, 24).Draw(t, "capacity"))
		apply = func(l *Ledger) error { return l.SetCapacity(at, c) }
	case 2, 3, 4:
		if len(p.active) == 0 {
			return
		}
		k := rapid.IntRange(0, len(p.active)-1).Draw(t, "job")
		id := p.active[k]
		switch rapid.IntRange(0, 2).Draw(t, "job event") {
		case 0:
			apply = func(l *Ledger) error { return l.Start(at, id) }
		case 1:
			apply = func(l *Ledger) error { return l.Stop(at, id) }
		case 2:
			apply = func(l *Ledger) error { return l.SetJobWeight(at, id, 3) }
		}
	case 5:
		if len(p.active) == 0 {
			return
		}
		k := rapid.IntRange(0, len(p.active)-1).Draw(t, "job")
		finished = p.active[k]
		p.active = append(p.active[:k], p.active[k+1:]...)
		apply = func(l *Ledger) error { return l.Finish(at, finished, Completed) }
	}
	e1, e2 := apply(p.keep), apply(p.forget)
	if (e1 == nil) != (e2 == nil) {
		t.Fatalf("keep: %v, forget: %v", e1, e2)
	}
	if finished != "" && e1 == nil {
		if err := p.forget.Forget(finished); err != nil {
			t.Fatal(err)
		}
	}
}

// check compares every tenant's and the cluster's accounts bit for bit over
// random windows reaching back to Begin(), and the active jobs' accounts.
func (p *forgetPair) check(t *rapid.T) {
	for _, l := range []*Ledger{p.keep, p.forget} {
		if err := l.Check(); err != nil {
			t.Fatal(err)
		}
	}
	begin := p.keep.Begin()
	if !p.forget.Begin().Equal(begin) || !p.forget.Now().Equal(p.keep.Now()) {
		t.Fatalf("clocks differ: begin %v/%v now %v/%v", begin, p.forget.Begin(), p.keep.Now(), p.forget.Now())
	}
	span := p.clock + 1e12 - begin.Sub(t0).Nanoseconds()
	from := begin.Add(time.Duration(rapid.Int64Range(0, span).Draw(t, "from")))
	to := from.Add(time.Duration(rapid.Int64Range(0, 1e12).Draw(t, "length")))
	for _, w := range [][2]time.Time{{begin, p.keep.Now()}, {from, to}} {
		for _, tn := range tenantPool[:3] {
			a, e1 := p.keep.TenantAccount(tn, w[0], w[1])
			b, e2 := p.forget.TenantAccount(tn, w[0], w[1])
			if a != b || (e1 == nil) != (e2 == nil) {
				t.Fatalf("tenant %s over %v: keep %+v (%v), forget %+v (%v)", tn, w, a, e1, b, e2)
			}
		}
		a, _ := p.keep.ClusterAccount(w[0], w[1])
		b, _ := p.forget.ClusterAccount(w[0], w[1])
		if a != b {
			t.Fatalf("cluster over %v: keep %+v, forget %+v", w, a, b)
		}
		for _, id := range p.active {
			a, e1 := p.keep.JobAccount(id, w[0], w[1])
			b, e2 := p.forget.JobAccount(id, w[0], w[1])
			if a != b || (e1 == nil) != (e2 == nil) {
				t.Fatalf("job %s over %v: keep %+v, forget %+v", id, w, a, b)
			}
		}
	}
	vk, vf := p.keep.View(to), p.forget.View(to)
	for _, tn := range tenantPool[:3] {
		a, _ := vk.TenantAccount(tn)
		b, _ := vf.TenantAccount(tn)
		ra, _ := vk.TenantFairRate(tn)
		rb, _ := vf.TenantFairRate(tn)
		if a != b || ra != rb {
			t.Fatalf("view of tenant %s: keep %+v %v, forget %+v %v", tn, a, ra, b, rb)
		}
	}
	if n := p.forget.jobs.len(); n != len(p.active) {
		t.Fatalf("the forgetting ledger holds %d jobs, %d are active", n, len(p.active))
	}
}

func TestForgetLeavesTenantAndClusterAccountsBitIdentical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var h History
		switch rapid.IntRange(0, 3).Draw(t, "history") {
		case 1:
			h = TrailingWindow(time.Duration(rapid.IntRange(1, 3000).Draw(t, "window s")) * time.Second)
		case 3:
			h = Buckets(rapid.IntRange(1, 5).Draw(t, "buckets"), time.Duration(rapid.IntRange(1, 1000).Draw(t, "bucket s"))*time.Second)
		case 2:
			h = HalfLife(time.Duration(rapid.IntRange(1, 3000).Draw(t, "half-life s")) * time.Second)
		}
		mode := rapid.SampledFrom([]Mode{DemandAware, QuotaShare}).Draw(t, "mode")
		cfg := Config{Mode: mode, Capacity: 16, Start: t0, History: h}
		p := &forgetPair{}
		p.keep, _ = New(cfg)
		p.forget, _ = New(cfg)
		for _, l := range []*Ledger{p.keep, p.forget} {
			for k, tn := range tenantPool[:3] {
				if err := l.AddTenant(t0, tn, float64(k+1)); err != nil {
					t.Fatal(err)
				}
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"step":  p.step,
			"step2": p.step,
			"":      p.check,
		})
	})
}
