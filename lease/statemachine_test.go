package lease

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"pgregory.net/rapid"
)

// mjob is the model's view of one job: its state and an independent tally
// of the wall time it held GPUs.
type mjob struct {
	state        State
	holdSince    time.Time // when it last acquired GPUs (valid while holding)
	held         time.Duration
	runningSince time.Time // start, or end of cold start
	readyAt      time.Time // end of cold start while restoring
	lost         time.Duration
	completed    bool
}

// stateAt resolves the lazy restoring → running transition.
func (m *mjob) stateAt(at time.Time) State {
	if m.state == Restoring && !at.Before(m.readyAt) {
		return Running
	}
	return m.state
}

func (m *mjob) heldAt(at time.Time) time.Duration {
	if m.state.Holds() {
		return m.held + at.Sub(m.holdSince)
	}
	return m.held
}

// billCheck checks that billing alternates start/stop per job, in time order.
type billCheck struct {
	holding map[ledger.JobID]bool
	last    map[ledger.JobID]time.Time
	err     error
}

func (b *billCheck) note(at time.Time, job ledger.JobID, start bool) error {
	if b.err == nil && b.holding[job] == start {
		b.err = fmt.Errorf("billing %s start=%v twice in a row at %v", job, start, at.Sub(t0))
	}
	if b.err == nil && at.Before(b.last[job]) {
		b.err = fmt.Errorf("billing %s at %v before its previous call at %v", job, at.Sub(t0), b.last[job].Sub(t0))
	}
	b.holding[job], b.last[job] = start, at
	return nil
}
func (b *billCheck) Start(at time.Time, job ledger.JobID) error { return b.note(at, job, true) }
func (b *billCheck) Stop(at time.Time, job ledger.JobID) error  { return b.note(at, job, false) }

// TestStateMachine drives a Table through a Coordinator and a Sim with
// random submits, boundaries (random renew/preempt/start plans), clock
// advances with completions, failures, cancellations and illegal events, and
// checks after every step against a small model:
//   - every job is in exactly the state the model says (no job in two states);
//   - within a boundary every release precedes every start and restore;
//   - a completed job never runs again;
//   - Progress + Overhead == Held, Held equals the model's wall time holding
//     GPUs, lost work equals the releases' reports, and Progress equals the
//     simulated job's retained progress;
//   - each simulated job's Progress splits its held time the same way: its
//     Usage passes Usage.Check and equals the table's, with Held the model's
//     wall time and Lost the releases' reports;
//   - rejected events leave the table unchanged.
func TestStateMachine(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		leaseLen := sec(rapid.IntRange(50, 900).Draw(rt, "lease"))
		guard := sec(rapid.SampledFrom([]int{0, 0, 100, 400}).Draw(rt, "guard"))
		sc := drawSimConfig(rt)
		grace := sec(rapid.IntRange(0, 90).Draw(rt, "grace"))
		bill := &billCheck{holding: map[ledger.JobID]bool{}, last: map[ledger.JobID]time.Time{}}
		w := newWorld(rt, Config{Lease: leaseLen, MinRuntime: guard, Billing: bill}, sc, grace)
		model := map[ledger.JobID]*mjob{}
		var ids []ledger.JobID
		var retired Usage // usage of forgotten jobs
		nextID := 0
		now := t0

		inState := func(at time.Time, states ...State) []ledger.JobID {
			var out []ledger.JobID
			for _, id := range ids {
				if slices.Contains(states, model[id].stateAt(at)) {
					out = append(out, id)
				}
			}
			return out
		}
		release := func(m *mjob, at time.Time) {
			m.held += at.Sub(m.holdSince)
		}

		// completeUpTo finishes, in time order, every job whose simulated
		// work is done by upTo, as a simulator would.
		completeUpTo := func(rt *rapid.T, upTo time.Time) {
			type done struct {
				at time.Time
				id ledger.JobID
			}
			var ds []done
			for _, id := range ids {
				if at, ok := w.sim.CompletesAt(id); ok && !at.After(upTo) {
					ds = append(ds, done{at, id})
				}
			}
			slices.SortFunc(ds, func(a, b done) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.id, b.id)) })
			for _, d := range ds {
				must(rt, w.tb.Finish(d.at, d.id, Completed))
				must(rt, w.sim.Finish(d.id))
				m := model[d.id]
				if st := m.stateAt(d.at); st != Running {
					rt.Fatalf("%s completes in model state %v", d.id, st)
				}
				release(m, d.at)
				m.state, m.completed = Completed, true
			}
		}

		rt.Repeat(map[string]func(*rapid.T){
			"submit": func(rt *rapid.T) {
				id := ledger.JobID(fmt.Sprintf("j%02d", nextID))
				nextID++
				work := sec(rapid.IntRange(1, 3000).Draw(rt, "work"))
				w.add(rt, now, id, work)
				ids = append(ids, id)
				model[id] = &mjob{state: Pending}
			},
			"advance": func(rt *rapid.T) {
				now = now.Add(sec(rapid.IntRange(1, 600).Draw(rt, "dt")))
				completeUpTo(rt, now)
			},
			"end early": func(rt *rapid.T) {
				live := inState(now, Pending, Running, Suspended, Restoring)
				if len(live) == 0 {
					rt.Skip("no live job")
				}
				id := rapid.SampledFrom(live).Draw(rt, "job")
				s := rapid.SampledFrom([]State{Failed, Cancelled}).Draw(rt, "final")
				must(rt, w.tb.Finish(now, id, s))
				must(rt, w.sim.Finish(id))
				m := model[id]
				if m.state.Holds() {
					release(m, now)
				}
				m.state = s
			},
			"boundary": func(rt *rapid.T) {
				var p Plan
				gpus := func() ledger.GPUs { return ledger.GPUs(rapid.IntRange(1, 8).Draw(rt, "gpus")) }
				for _, id := range inState(now, Running) {
					switch rapid.IntRange(0, 2).Draw(rt, "fate") {
					case 1:
						p.Renew = append(p.Renew, id)
					case 2:
						p.Preempt = append(p.Preempt, Grant{id, gpus()})
					}
				}
				for _, id := range inState(now, Pending, Suspended) {
					if rapid.Bool().Draw(rt, "start") {
						p.Start = append(p.Start, Grant{id, gpus()})
					}
				}
				w.rec.log = nil
				out, err := w.co.Boundary(now, p)
				must(rt, err)
				// Releases precede starts.
				seenStart := false
				for _, l := range w.rec.log {
					switch strings.Fields(l)[0] {
					case "start", "restore":
						seenStart = true
					case "signal", "released", "renew":
						if seenStart {
							rt.Fatalf("%q after a start in %q", l, w.rec.log)
						}
					}
				}
				for _, d := range out.Decisions {
					m := model[d.Job]
					switch d.Action {
					case Renewed:
						if d.Reason == ReasonGuarded && now.Sub(m.runningSince) >= guard {
							rt.Fatalf("%s renewed as guarded after running %v (guard %v)", d.Job, now.Sub(m.runningSince), guard)
						}
					case Preempted:
						if d.At.After(out.StartAt) || d.At.After(out.Deadline) {
							rt.Fatalf("release of %s at %v after StartAt %v", d.Job, d.At, out.StartAt)
						}
						release(m, d.At)
						m.lost += d.Lost
						m.state = Suspended
					case Started, Restored:
						if m.completed {
							rt.Fatalf("completed job %s restarted", d.Job)
						}
						if !d.At.Equal(out.StartAt) {
							rt.Fatalf("start of %s at %v, not StartAt %v", d.Job, d.At, out.StartAt)
						}
						m.holdSince = d.At
						if d.Action == Started {
							m.state, m.runningSince = Running, d.At
						} else {
							m.state, m.readyAt, m.runningSince = Restoring, d.At.Add(d.ColdStart), d.At.Add(d.ColdStart)
						}
					}
				}
				if out.StartAt.After(now) {
					// Renewed jobs may complete while the others flush.
					now = out.StartAt
					completeUpTo(rt, now)
				}
			},
			"forget": func(rt *rapid.T) {
				done := inState(now, Completed, Failed, Cancelled)
				if len(done) == 0 {
					rt.Skip("no terminal job")
				}
				id := rapid.SampledFrom(done).Draw(rt, "job")
				in, _ := w.tb.Info(id)
				must(rt, w.tb.Forget(id))
				retired = retired.Add(in.Usage)
				ids = slices.DeleteFunc(ids, func(x ledger.JobID) bool { return x == id })
				delete(model, id)
				if _, ok := w.tb.Info(id); ok {
					rt.Fatalf("forgotten job %s still in the table", id)
				}
			},
			"illegal event": func(rt *rapid.T) {
				if len(ids) == 0 {
					rt.Skip("no job")
				}
				id := rapid.SampledFrom(ids).Draw(rt, "job")
				st := model[id].stateAt(now)
				type ev struct {
					name  string
					legal []State
					do    func() error
				}
				evs := []ev{
					{"start", []State{Pending}, func() error { return w.tb.Start(now, id) }},
					{"renew", []State{Running}, func() error { return w.tb.Renew(now, id, 0) }},
					{"checkpoint", []State{Running}, func() error { return w.tb.Checkpoint(now, id) }},
					{"release", []State{Checkpointing}, func() error { return w.tb.Release(now, id, 0) }},
					{"restore", []State{Suspended}, func() error { return w.tb.Restore(now, id, 0) }},
					{"complete", []State{Running, Checkpointing}, func() error { return w.tb.Finish(now, id, Completed) }},
					{"fail", []State{Pending, Running, Checkpointing, Suspended, Restoring}, func() error { return w.tb.Finish(now, id, Failed) }},
				}
				e := rapid.SampledFrom(evs).Draw(rt, "event")
				if slices.Contains(e.legal, st) {
					rt.Skip("legal")
				}
				before, _ := w.tb.Info(id)
				if err := e.do(); err == nil {
					rt.Fatalf("%s of %s in state %v accepted", e.name, id, st)
				}
				if after, _ := w.tb.Info(id); after != before {
					rt.Fatalf("rejected %s changed %s: %+v → %+v", e.name, id, before, after)
				}
			},
			"": func(rt *rapid.T) {
				if err := w.tb.Check(); err != nil {
					rt.Fatal(err)
				}
				if bill.err != nil {
					rt.Fatal(bill.err)
				}
				if w.tb.Len() != len(ids) {
					rt.Fatalf("table has %d jobs, model %d", w.tb.Len(), len(ids))
				}
				total := retired
				for _, id := range ids {
					m := model[id]
					in, err := w.tb.InfoAt(now, id)
					if err != nil {
						rt.Fatal(err)
					}
					if want := m.stateAt(now); in.State != want {
						rt.Fatalf("%s is %v, model says %v", id, in.State, want)
					}
					if m.completed && in.State != Completed {
						rt.Fatalf("completed job %s is %v", id, in.State)
					}
					if err := in.Usage.Check(); err != nil {
						rt.Fatal(err)
					}
					if h := m.heldAt(now); in.Usage.Held != h {
						rt.Fatalf("%s held %v, model %v", id, in.Usage.Held, h)
					}
					if in.Usage.Lost != m.lost {
						rt.Fatalf("%s lost %v, releases reported %v", id, in.Usage.Lost, m.lost)
					}
					if p, _, ok := w.sim.Progress(id, now); ok && p != in.Usage.Progress {
						rt.Fatalf("%s progress %v, sim %v", id, in.Usage.Progress, p)
					}
					if p, ok := w.sim.jobs[id]; ok {
						// The simulated job's own split of its held time
						// adds up, and matches the model and the table.
						pu := p.Usage(now)
						if err := pu.Check(); err != nil {
							rt.Fatalf("%s: sim %v", id, err)
						}
						if h := m.heldAt(now); pu.Held != h || pu.Lost != m.lost || pu != in.Usage {
							rt.Fatalf("%s sim usage %+v, table %+v, model held %v lost %v", id, pu, in.Usage, m.heldAt(now), m.lost)
						}
					}
					if bill.holding[id] != in.State.Holds() {
						rt.Fatalf("%s billed=%v in state %v", id, bill.holding[id], in.State)
					}
					total = total.Add(in.Usage)
				}
				var expired []ledger.JobID
				for _, id := range ids {
					if in, _ := w.tb.InfoAt(now, id); in.State == Running && !in.LeaseEnd.After(now) {
						expired = append(expired, id)
					}
				}
				got := w.tb.Expired(now)
				if !sameSet(got, expired) {
					rt.Fatalf("Expired(now) = %v, want %v", got, expired)
				}
				if got := w.tb.Totals(now); got != total {
					rt.Fatalf("Totals %+v, sum %+v", got, total)
				}
			},
		})
	})
}

// drawSimConfig draws the overheads of a simulated job.
func drawSimConfig(rt *rapid.T) SimConfig {
	return SimConfig{
		Checkpoint:          sec(rapid.IntRange(0, 60).Draw(rt, "checkpoint")),
		ColdStart:           sec(rapid.IntRange(0, 120).Draw(rt, "coldStart")),
		Iteration:           sec(rapid.IntRange(0, 20).Draw(rt, "iteration")),
		NoRenewalCheckpoint: rapid.Bool().Draw(rt, "noRenewalCheckpoint"),
	}
}

func sameSet(a, b []ledger.JobID) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
