package lease

import (
	"errors"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestProgressTimelines(t *testing.T) {
	cfg := SimConfig{Checkpoint: sec(10), ColdStart: sec(30), Iteration: sec(30)}
	type want struct {
		progress, completes time.Duration // completes: after t0, 0 if not running
		usage               Usage
		state               State
	}
	tests := map[string]struct {
		run  func(t *testing.T, p *Progress)
		at   time.Duration // the query time after t0
		want want
	}{
		"a started job progresses at one second per second": {
			run: func(t *testing.T, p *Progress) { must(t, p.Start(t0)) },
			at:  sec(100),
			want: want{progress: sec(100), completes: sec(1000), state: Running,
				usage: Usage{Held: sec(100), Progress: sec(100)}},
		},
		"a running job holds nothing after its work is done": {
			run: func(t *testing.T, p *Progress) { must(t, p.Start(t0)) },
			at:  sec(5000),
			want: want{progress: sec(1000), completes: sec(1000), state: Running,
				usage: Usage{Held: sec(1000), Progress: sec(1000)}},
		},
		"a renewal pauses for the checkpoint": {
			run: func(t *testing.T, p *Progress) {
				must(t, p.Start(t0))
				pause, err := p.Renew(t0.Add(sec(100)), cfg)
				must(t, err)
				if pause != sec(10) {
					t.Fatalf("pause %v", pause)
				}
			},
			at: sec(200),
			want: want{progress: sec(190), completes: sec(1010), state: Running,
				usage: Usage{Held: sec(200), Progress: sec(190), Checkpoint: sec(10)}},
		},
		"a renewal during a cold start waits for it": {
			run: func(t *testing.T, p *Progress) {
				must(t, p.Start(t0))
				must(t, p.Signal(t0.Add(sec(100))))
				_, err := p.Release(t0.Add(sec(200)), cfg) // at 110 s, 90 s kept, 10 s lost
				must(t, err)
				_, err = p.Restore(t0.Add(sec(200)), cfg) // cold start to 230 s
				must(t, err)
				_, err = p.Renew(t0.Add(sec(210)), cfg) // flush 230–240 s
				must(t, err)
			},
			at: sec(300),
			want: want{progress: sec(150), completes: sec(240 + 910), state: Running,
				usage: Usage{Held: sec(210), Progress: sec(150), Checkpoint: sec(20), ColdStart: sec(30), Lost: sec(10)}},
		},
		"a checkpointing job's progress is frozen at the signal": {
			run: func(t *testing.T, p *Progress) {
				must(t, p.Start(t0))
				must(t, p.Signal(t0.Add(sec(100))))
			},
			at: sec(104),
			want: want{progress: sec(100), state: Checkpointing,
				usage: Usage{Held: sec(104), Progress: sec(100), Checkpoint: sec(4)}},
		},
		"a release before its flush ends counts as checkpointing until then": {
			run: func(t *testing.T, p *Progress) {
				must(t, p.Start(t0))
				must(t, p.Signal(t0.Add(sec(100))))
				_, err := p.Release(t0.Add(sec(300)), cfg)
				must(t, err)
			},
			at: sec(105),
			want: want{progress: sec(90), state: Checkpointing,
				usage: Usage{Held: sec(110), Progress: sec(90), Checkpoint: sec(10), Lost: sec(10)}},
		},
		"a forced release falls back to the last renewal snapshot": {
			run: func(t *testing.T, p *Progress) {
				must(t, p.Start(t0))
				_, err := p.Renew(t0.Add(sec(70)), cfg) // 70 s done, 60 s durable
				must(t, err)
				must(t, p.Signal(t0.Add(sec(200)))) // 190 s done
				r, err := p.Release(t0.Add(sec(205)), cfg)
				must(t, err)
				if !r.Forced || r.Lost != sec(130) || !r.At.Equal(t0.Add(sec(205))) {
					t.Fatalf("release %+v", r)
				}
			},
			at: sec(400),
			want: want{progress: sec(60), state: Suspended,
				usage: Usage{Held: sec(205), Progress: sec(60), Checkpoint: sec(15), Lost: sec(130)}},
		},
		"a signal during a cold start keeps the snapshot's progress": {
			run: func(t *testing.T, p *Progress) {
				_, err := p.Restore(t0, cfg)
				must(t, err)
				must(t, p.Signal(t0.Add(sec(20))))
				_, err = p.Release(t0.Add(sec(60)), cfg)
				must(t, err)
			},
			at: sec(60),
			want: want{progress: 0, state: Suspended,
				usage: Usage{Held: sec(30), ColdStart: sec(20), Checkpoint: sec(10)}},
		},
		"a restoring job reports its cold start": {
			run: func(t *testing.T, p *Progress) {
				_, err := p.Restore(t0, cfg)
				must(t, err)
			},
			at: sec(29),
			want: want{progress: 0, completes: sec(1030), state: Restoring,
				usage: Usage{Held: sec(29), ColdStart: sec(29)}},
		},
		"a job at rate one half needs twice its work in running time": {
			run: func(t *testing.T, p *Progress) {
				must(t, p.SetRate(0.5))
				must(t, p.Start(t0))
			},
			at: sec(100),
			want: want{progress: sec(50), completes: sec(2000), state: Running,
				usage: Usage{Held: sec(100), Progress: sec(50), Spread: sec(50)}},
		},
		"a slow job holds nothing after its work is done": {
			run: func(t *testing.T, p *Progress) {
				must(t, p.SetRate(0.8))
				must(t, p.Start(t0))
			},
			at: sec(5000),
			want: want{progress: sec(1000), completes: sec(1250), state: Running,
				usage: Usage{Held: sec(1250), Progress: sec(1000), Spread: sec(250)}},
		},
		"a renewal keeps the rate and moves the completion by its pause": {
			run: func(t *testing.T, p *Progress) {
				must(t, p.SetRate(0.5))
				must(t, p.Start(t0))
				_, err := p.Renew(t0.Add(sec(100)), cfg) // 50 s of work, flush 100–110 s
				must(t, err)
			},
			at: sec(200), // 50 + 90 × 0.5
			want: want{progress: sec(95), completes: sec(2010), state: Running,
				usage: Usage{Held: sec(200), Progress: sec(95), Checkpoint: sec(10), Spread: sec(95)}},
		},
		"a restore at full rate after a slow stretch keeps its spread": {
			run: func(t *testing.T, p *Progress) {
				must(t, p.SetRate(0.5))
				must(t, p.Start(t0))
				must(t, p.Signal(t0.Add(sec(100))))        // 50 s of work in 100 s
				_, err := p.Release(t0.Add(sec(200)), cfg) // at 110 s, 30 s kept, 20 s lost
				must(t, err)
				must(t, p.SetRate(1))
				_, err = p.Restore(t0.Add(sec(200)), cfg) // cold start to 230 s, 970 s left
				must(t, err)
			},
			at: sec(300),
			want: want{progress: sec(100), completes: sec(1200), state: Running,
				usage: Usage{Held: sec(210), Progress: sec(100), Checkpoint: sec(10), ColdStart: sec(30), Lost: sec(20), Spread: sec(50)}},
		},
		"a job finished mid-run keeps its progress": {
			run: func(t *testing.T, p *Progress) {
				must(t, p.Start(t0))
				must(t, p.Finish(t0.Add(sec(50)), Cancelled))
			},
			at: sec(500),
			want: want{progress: sec(50), state: Cancelled,
				usage: Usage{Held: sec(50), Progress: sec(50)}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := NewProgress(sec(1000))
			must(t, err)
			tc.run(t, &p)
			at := t0.Add(tc.at)
			if got := p.At(at); got != tc.want.progress {
				t.Errorf("At = %v, want %v", got, tc.want.progress)
			}
			end, ok := p.CompletesAt()
			if ok != (tc.want.completes != 0) || ok && end.Sub(t0) != tc.want.completes {
				t.Errorf("CompletesAt = +%v %v, want +%v", end.Sub(t0), ok, tc.want.completes)
			}
			if s, ok := p.Started(); !ok || !s.Equal(t0) {
				t.Errorf("Started = %v %v, want t0", s, ok)
			}
			left, ok := p.TimeLeft(at)
			if ok != (tc.want.completes != 0) || ok && left != tc.want.completes-tc.at {
				t.Errorf("TimeLeft = %v %v, want %v", left, ok, tc.want.completes-tc.at)
			}
			u := p.Usage(at)
			if err := u.Check(); err != nil {
				t.Error(err)
			}
			if u != tc.want.usage {
				t.Errorf("Usage = %+v, want %+v", u, tc.want.usage)
			}
			if s := p.State(at); s != tc.want.state {
				t.Errorf("State = %v, want %v", s, tc.want.state)
			}
		})
	}
}

func TestProgressRejectsMisuse(t *testing.T) {
	cfg := SimConfig{Checkpoint: sec(10), ColdStart: sec(30)}
	if _, err := NewProgress(-1); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("negative work: %v", err)
	}
	if _, err := NewProgress(MaxSpan + 1); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("work above MaxSpan: %v", err)
	}
	if _, err := NewProgress(MaxSpan); err != nil {
		t.Errorf("work of MaxSpan: %v", err)
	}
	if p, _ := NewProgress(sec(1)); p.State(t0) != Pending {
		t.Errorf("a new Progress is %v", p.State(t0))
	} else if _, ok := p.Started(); ok {
		t.Error("a pending job reports a start")
	}
	running := func() Progress {
		p, _ := NewProgress(sec(100))
		must(t, p.Start(t1))
		return p
	}
	tests := map[string]struct {
		p    Progress
		prep func(p *Progress) // legal steps before the rejected call, if any
		do   func(p *Progress) error
		want error
	}{
		"a signal of a pending job":  {Progress{}, nil, func(p *Progress) error { return p.Signal(t0) }, ErrInvalidTransition},
		"a release without a signal": {running(), nil, func(p *Progress) error { _, err := p.Release(t2, cfg); return err }, ErrInvalidTransition},
		"a second start":             {running(), nil, func(p *Progress) error { return p.Start(t2) }, ErrInvalidTransition},
		"a restore of a running job": {running(), nil, func(p *Progress) error { _, err := p.Restore(t2, cfg); return err }, ErrInvalidTransition},
		"a renewal before the start": {running(), nil, func(p *Progress) error { _, err := p.Renew(t0, cfg); return err }, ErrTimeBackwards},
		"a renewal after the work is done": {running(), nil, func(p *Progress) error {
			_, err := p.Renew(t3, cfg)
			return err
		}, ErrInvalidTransition},
		"a signal after the work is done": {running(), nil, func(p *Progress) error { return p.Signal(t3) }, ErrInvalidTransition},
		"a finish after the work is done": {running(), nil, func(p *Progress) error { return p.Finish(t3, Completed) }, ErrInvalidValue},
		"a finish in a live state":        {running(), nil, func(p *Progress) error { return p.Finish(t2, Suspended) }, ErrInvalidValue},
		"a rate of zero":                  {Progress{}, nil, func(p *Progress) error { return p.SetRate(0) }, ErrInvalidValue},
		"a rate above one":                {Progress{}, nil, func(p *Progress) error { return p.SetRate(1.5) }, ErrInvalidValue},
		"a negative rate":                 {Progress{}, nil, func(p *Progress) error { return p.SetRate(-0.5) }, ErrInvalidValue},
		"a rate that is not a number":     {Progress{}, nil, func(p *Progress) error { return p.SetRate(math.NaN()) }, ErrInvalidValue},
		"a start whose work at its rate needs more than MaxSpan": {func() Progress {
			p, _ := NewProgress(MaxSpan / 2)
			must(t, p.SetRate(0.25))
			return p
		}(), nil, func(p *Progress) error { return p.Start(t0) }, ErrInvalidValue},
		"a negative overhead": {running(), nil, func(p *Progress) error {
			_, err := p.Renew(t2, SimConfig{Checkpoint: -1})
			return err
		}, ErrConfig},
		"a deadline before the signal": {running(), func(p *Progress) {
			must(t, p.Signal(t2))
		}, func(p *Progress) error {
			_, err := p.Release(t1, cfg)
			return err
		}, ErrTimeBackwards},
		"a restore before the release": {running(), func(p *Progress) {
			must(t, p.Signal(t1))
			_, err := p.Release(t2, cfg) // released at t1+10s
			must(t, err)
		}, func(p *Progress) error {
			_, err := p.Restore(t1.Add(sec(5)), cfg)
			return err
		}, ErrTimeBackwards},
		"a start at the zero time": {Progress{}, nil, func(p *Progress) error { return p.Start(time.Time{}) }, ErrInvalidValue},
		"a renewal in the year 2300": {running(), nil, func(p *Progress) error {
			_, err := p.Renew(time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), cfg)
			return err
		}, ErrInvalidValue},
		"an overhead above MaxSpan": {running(), nil, func(p *Progress) error {
			_, err := p.Renew(t2, SimConfig{Checkpoint: MaxSpan + 1})
			return err
		}, ErrConfig},
		"a renewal more than MaxSpan after the start": {func() Progress {
			p, _ := NewProgress(MaxSpan)
			return p
		}(), func(p *Progress) {
			must(t, p.Start(t1))
		}, func(p *Progress) error {
			_, err := p.Renew(t1.Add(MaxSpan+1), cfg)
			return err
		}, ErrInvalidValue},
		"renewal pauses piling up beyond MaxSpan": {running(), func(p *Progress) {
			long := SimConfig{Checkpoint: MaxSpan / 2}
			_, err := p.Renew(t1, long)
			must(t, err)
			_, err = p.Renew(t1, long)
			must(t, err)
		}, func(p *Progress) error {
			_, err := p.Renew(t1, SimConfig{Checkpoint: sec(1)})
			return err
		}, ErrInvalidValue},
		"a renewal more than 292 years after the start": {Progress{work: 1<<63 - 1}, func(p *Progress) {
			must(t, p.Start(time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC)))
		}, func(p *Progress) error {
			_, err := p.Renew(time.Date(2250, 1, 1, 0, 0, 0, 0, time.UTC), cfg)
			return err
		}, ErrInvalidValue},
		"an event after the finish": {running(), func(p *Progress) {
			must(t, p.Finish(t1, Failed))
		}, func(p *Progress) error {
			_, err := p.Restore(t2, cfg)
			return err
		}, ErrInvalidTransition},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := tc.p
			if tc.prep != nil {
				tc.prep(&p)
			}
			before := p
			err := tc.do(&p)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.At.IsZero() && tc.want != ErrInvalidValue {
				t.Errorf("error %v does not name its time", err)
			}
			// The failing call leaves the value as the steps before it did.
			if p != before {
				t.Errorf("state changed by a rejected call: %+v, then %+v", before, p)
			}
		})
	}
}

// A rate is fixed for a holding stretch: SetRate, which takes no time,
// refuses to change it while the job holds GPUs, and leaves it unchanged.
func TestSetRateWhileHoldingIsRefused(t *testing.T) {
	for name, prep := range map[string]func(p *Progress){
		"running":       func(p *Progress) { must(t, p.Start(t1)) },
		"checkpointing": func(p *Progress) { must(t, p.Start(t1)); must(t, p.Signal(t2)) },
		"finished":      func(p *Progress) { must(t, p.Start(t1)); must(t, p.Finish(t2, Cancelled)) },
	} {
		t.Run(name, func(t *testing.T) {
			p, _ := NewProgress(sec(100))
			must(t, p.SetRate(0.5))
			prep(&p)
			before := p
			if err := p.SetRate(0.8); !errors.Is(err, ErrInvalidTransition) {
				t.Fatalf("SetRate: %v, want ErrInvalidTransition", err)
			}
			if p != before || p.Rate() != 0.5 {
				t.Errorf("a refused SetRate changed %+v to %+v (rate %v)", before, p, p.Rate())
			}
		})
	}
}

// TestProgressStateMachine drives one Progress with random legal and
// illegal events at random times and checks it after every step against a
// small model that keeps its own tally of the wall time the job held GPUs,
// of the lost work the releases reported, and of its state:
//   - Usage satisfies Usage.Check (progress + checkpoint + cold start +
//     lost + spread == held), Held equals the model's wall time held, Lost
//     the releases' reports, Progress equals At; no Spread until a rate
//     below one is set;
//   - a renewal moves the completion by exactly its pause, at any rate;
//   - progress never decreases while the job runs and never exceeds its
//     work; a snapshot holds whole iterations;
//   - CompletesAt is when At first reaches the work;
//   - a rejected event leaves the value unchanged.
func TestProgressStateMachine(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := drawSimConfig(rt)
		work := sec(rapid.IntRange(0, 3000).Draw(rt, "work"))
		p, err := NewProgress(work)
		must(rt, err)
		now := t0
		var (
			state     = Pending
			holdSince time.Time
			held      time.Duration
			lost      time.Duration
			lastSeen  time.Duration // progress at the last check while running
			lastEv    time.Time     // the latest event
			slowed    bool          // a rate below one was set
			leaseAt   time.Duration // progress when the current lease began
		)
		ended := func() bool { return state.Terminal() }
		rt.Repeat(map[string]func(*rapid.T){
			"advance": func(rt *rapid.T) {
				dt := sec(rapid.IntRange(0, 600).Draw(rt, "dt"))
				if end, ok := p.CompletesAt(); ok && now.Add(dt).After(end) {
					// The job finishes at the end of its work, as a caller
					// would; it cannot be signalled or renewed later.
					now, lastEv = end, end
					must(rt, p.Finish(now, Completed))
					held += now.Sub(holdSince)
					state = Completed
					return
				}
				now = now.Add(dt)
			},
			"rate": func(rt *rapid.T) {
				if state != Pending && state != Suspended {
					rt.Skip("holding or ended")
				}
				r := rapid.SampledFrom([]float64{1, 0.8, 0.5, 1.0 / 3}).Draw(rt, "rate")
				must(rt, p.SetRate(r))
				if p.Rate() != r {
					rt.Fatalf("Rate %v after SetRate(%v)", p.Rate(), r)
				}
				slowed = slowed || r < 1
			},
			"start": func(rt *rapid.T) {
				if state != Pending {
					rt.Skip("not pending")
				}
				must(rt, p.Start(now))
				state, holdSince, lastEv, leaseAt = Running, now, now, p.At(now)
			},
			"restore": func(rt *rapid.T) {
				if state != Suspended && state != Pending {
					rt.Skip("not suspended")
				}
				cold, err := p.Restore(now, cfg)
				must(rt, err)
				if cold != cfg.ColdStart {
					rt.Fatalf("cold start %v", cold)
				}
				state, holdSince, lastSeen, lastEv = Running, now, p.At(now), now
				leaseAt = lastSeen
			},
			"renew": func(rt *rapid.T) {
				if state != Running {
					rt.Skip("not running")
				}
				before := p.At(now)
				end, _ := p.CompletesAt()
				pause, err := p.Renew(now, cfg)
				must(rt, err)
				lastEv = now
				if after, _ := p.CompletesAt(); after.Sub(end) != pause {
					rt.Fatalf("renewal pause %v moved the completion by %v", pause, after.Sub(end))
				}
				if p.At(now) != before {
					rt.Fatalf("renewal changed progress %v → %v", before, p.At(now))
				}
				if pause > 0 && cfg.Iteration > 0 && p.Durable()%cfg.Iteration != 0 {
					rt.Fatalf("renewal snapshot %v is not whole iterations of %v", p.Durable(), cfg.Iteration)
				}
				leaseAt = before
			},
			"abort": func(rt *rapid.T) {
				if state != Running {
					rt.Skip("not running")
				}
				frozen := p.At(now)
				r, err := p.Abort(now)
				must(rt, err)
				if r != frozen-leaseAt || p.At(now) != leaseAt || p.Durable() != leaseAt {
					rt.Fatalf("abort at %v lost %v, kept %v (durable %v); progress %v, lease began at %v", now, r, p.At(now), p.Durable(), frozen, leaseAt)
				}
				if _, ok := p.CompletesAt(); ok {
					rt.Fatal("an aborted job still completes")
				}
				lastEv = now
				held += now.Sub(holdSince)
				lost += r
				state = Suspended
			},
			"preempt": func(rt *rapid.T) {
				if state != Running {
					rt.Skip("not running")
				}
				must(rt, p.Signal(now))
				durable, frozen := p.Durable(), p.At(now)
				deadline := now.Add(sec(rapid.IntRange(0, 90).Draw(rt, "grace")))
				r, err := p.Release(deadline, cfg)
				must(rt, err)
				switch {
				case r.Forced && (r.Lost != frozen-durable || !r.At.Equal(deadline)):
					rt.Fatalf("forced release %+v, progress %v, durable %v", r, frozen, durable)
				case !r.Forced && (r.At.Sub(now) != cfg.Checkpoint || r.At.After(deadline)):
					rt.Fatalf("release %+v of a signal at %v", r, now)
				case cfg.Iteration > 0 && p.At(r.At)%cfg.Iteration != 0:
					rt.Fatalf("kept %v is not whole iterations of %v", p.At(r.At), cfg.Iteration)
				case p.At(r.At)+r.Lost != frozen:
					rt.Fatalf("kept %v + lost %v != progress %v", p.At(r.At), r.Lost, frozen)
				}
				now, lastEv = r.At, r.At
				held += now.Sub(holdSince)
				lost += r.Lost
				state = Suspended
			},
			"end early": func(rt *rapid.T) {
				if ended() {
					rt.Skip("ended")
				}
				final := rapid.SampledFrom([]State{Failed, Cancelled}).Draw(rt, "final")
				must(rt, p.Finish(now, final))
				lastEv = now
				if state == Running {
					held += now.Sub(holdSince)
				}
				state = final
			},
			"illegal event": func(rt *rapid.T) {
				evs := map[string]struct {
					legal []State
					do    func(p *Progress) error
				}{
					"start":   {[]State{Pending}, func(p *Progress) error { return p.Start(now) }},
					"restore": {[]State{Pending, Suspended}, func(p *Progress) error { _, err := p.Restore(now, cfg); return err }},
					"renew":   {[]State{Running}, func(p *Progress) error { _, err := p.Renew(now, cfg); return err }},
					"signal":  {[]State{Running}, func(p *Progress) error { return p.Signal(now) }},
					"abort":   {[]State{Running}, func(p *Progress) error { _, err := p.Abort(now); return err }},
					"release": {nil, func(p *Progress) error { _, err := p.Release(now, cfg); return err }},
					"earlier": {nil, func(p *Progress) error { return p.Signal(lastEv.Add(-1)) }},
					"rate":    {[]State{Pending, Suspended}, func(p *Progress) error { return p.SetRate(0.5) }},
				}
				name := rapid.SampledFrom([]string{"start", "restore", "renew", "signal", "abort", "release", "earlier", "rate"}).Draw(rt, "event")
				ev := evs[name]
				for _, s := range ev.legal {
					if s == state {
						rt.Skip("legal")
					}
				}
				if name == "earlier" && state != Running {
					rt.Skip("not running")
				}
				before := p
				if err := ev.do(&p); err == nil {
					rt.Fatalf("%s in state %v accepted", name, state)
				}
				if p != before {
					rt.Fatalf("rejected %s changed %+v → %+v", name, before, p)
				}
			},
			"": func(rt *rapid.T) {
				u := p.Usage(now)
				if err := u.Check(); err != nil {
					rt.Fatal(err)
				}
				h := held
				if state == Running {
					h += now.Sub(holdSince)
				}
				if !slowed && u.Spread != 0 {
					rt.Fatalf("spread %v at full rate", u.Spread)
				}
				if u.Held != h || u.Lost != lost || u.Progress != p.At(now) {
					rt.Fatalf("usage %+v; model held %v, lost %v; At %v", u, h, lost, p.At(now))
				}
				if got := p.State(now); got != state && !(state == Running && got == Restoring) {
					rt.Fatalf("state %v, model %v", got, state)
				}
				prog := p.At(now)
				if prog > work || state == Running && prog < lastSeen {
					rt.Fatalf("progress %v (was %v) of work %v", prog, lastSeen, work)
				}
				if state == Running {
					lastSeen = prog
					end, ok := p.CompletesAt()
					if !ok || p.At(end) != work || end.After(now) && prog < work && p.At(end.Add(-1)) >= work {
						rt.Fatalf("CompletesAt %v (ok %v): progress there %v of %v", end.Sub(t0), ok, p.At(end), work)
					}
				}
			},
		})
	})
}

// TestAbortTimelines: an abort keeps the progress of the lease's start and
// loses the rest, whatever the lease began with.
func TestAbortTimelines(t *testing.T) {
	cfg := SimConfig{Checkpoint: sec(10), ColdStart: sec(30), Iteration: sec(30)}
	for name, tc := range map[string]struct {
		run      func(t *testing.T, p *Progress) time.Duration // returns what Abort lost
		lost     time.Duration
		progress time.Duration
		usage    Usage
	}{
		"the lease of a start": {
			run: func(t *testing.T, p *Progress) time.Duration {
				must(t, p.Start(t0))
				lost, err := p.Abort(t0.Add(sec(100)))
				must(t, err)
				return lost
			},
			lost: sec(100), progress: 0,
			usage: Usage{Held: sec(100), Lost: sec(100)},
		},
		"the lease of a renewal without a checkpoint": {
			run: func(t *testing.T, p *Progress) time.Duration {
				must(t, p.Start(t0))
				_, err := p.Renew(t0.Add(sec(300)), SimConfig{})
				must(t, err)
				lost, err := p.Abort(t0.Add(sec(400)))
				must(t, err)
				return lost
			},
			lost: sec(100), progress: sec(300),
			usage: Usage{Held: sec(400), Progress: sec(300), Lost: sec(100)},
		},
		"during a renewal's checkpoint": {
			run: func(t *testing.T, p *Progress) time.Duration {
				must(t, p.Start(t0))
				_, err := p.Renew(t0.Add(sec(300)), cfg) // pauses until 310
				must(t, err)
				lost, err := p.Abort(t0.Add(sec(305)))
				must(t, err)
				return lost
			},
			lost: 0, progress: sec(300),
			usage: Usage{Held: sec(305), Progress: sec(300), Checkpoint: sec(5)},
		},
		"during the cold start of a restore": {
			run: func(t *testing.T, p *Progress) time.Duration {
				must(t, p.Start(t0))
				must(t, p.Signal(t0.Add(sec(100))))
				if _, err := p.Release(t0.Add(sec(200)), cfg); err != nil { // at 110, keeping 90
					t.Fatal(err)
				}
				_, err := p.Restore(t0.Add(sec(200)), cfg)
				must(t, err)
				lost, err := p.Abort(t0.Add(sec(210)))
				must(t, err)
				return lost
			},
			lost: 0, progress: sec(90),
			usage: Usage{Held: sec(120), Progress: sec(90), Checkpoint: sec(10), ColdStart: sec(10), Lost: sec(10)},
		},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := NewProgress(sec(1000))
			must(t, err)
			if lost := tc.run(t, &p); lost != tc.lost {
				t.Errorf("Abort lost %v, want %v", lost, tc.lost)
			}
			at := t0.Add(sec(500))
			if got := p.At(at); got != tc.progress || p.Durable() != tc.progress {
				t.Errorf("At = %v, Durable = %v, want %v", got, p.Durable(), tc.progress)
			}
			if s := p.State(at); s != Suspended {
				t.Errorf("State = %v, want suspended", s)
			}
			u := p.Usage(at)
			if err := u.Check(); err != nil {
				t.Error(err)
			}
			if u != tc.usage {
				t.Errorf("Usage = %+v, want %+v", u, tc.usage)
			}
			// It resumes from there: a restore at 500 completes the rest
			// after its cold start.
			_, err = p.Restore(at, cfg)
			must(t, err)
			if end, _ := p.CompletesAt(); end.Sub(t0) != sec(530)+sec(1000)-tc.progress {
				t.Errorf("completes at +%v, want +%v", end.Sub(t0), sec(530)+sec(1000)-tc.progress)
			}
		})
	}
}

func TestAbortRejectsMisuse(t *testing.T) {
	p, err := NewProgress(sec(100))
	must(t, err)
	if _, err := p.Abort(t0); !errors.Is(err, ErrInvalidTransition) {
		t.Errorf("abort of a pending job: %v", err)
	}
	must(t, p.Start(t0))
	if _, err := p.Abort(t0.Add(-1)); !errors.Is(err, ErrTimeBackwards) {
		t.Errorf("abort before the start: %v", err)
	}
	before := p
	if _, err := p.Abort(t0.Add(sec(101))); !errors.Is(err, ErrInvalidTransition) || p != before {
		t.Errorf("abort after the work is done: %v (changed: %v)", err, p != before)
	}
}
