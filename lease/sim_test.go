package lease

import (
	"errors"
	"testing"
	"time"
)

func TestSimTimelines(t *testing.T) {
	type want struct {
		release   time.Duration // after t0
		lost      time.Duration
		forced    bool
		completes time.Duration // after t0, of the restored job
	}
	tests := map[string]struct {
		cfg      SimConfig
		renewAt  time.Duration // 0: no renewal
		signalAt time.Duration
		deadline time.Duration // after the signal
		restore  time.Duration // restore time after t0
		want     want
	}{
		"a clean preemption loses only the partial iteration": {
			cfg:      SimConfig{Checkpoint: sec(10), ColdStart: sec(30), Iteration: sec(30), NoRenewalCheckpoint: true},
			signalAt: sec(100), deadline: sec(60), restore: sec(200),
			// 100 s run = 3 iterations + 10 s; resumes from 90 s of work at 230 s.
			want: want{release: sec(110), lost: sec(10), completes: sec(230 + 1000 - 90)},
		},
		"continuous progress loses nothing at a clean flush": {
			cfg:      SimConfig{Checkpoint: sec(10), ColdStart: sec(30)},
			signalAt: sec(100), deadline: sec(60), restore: sec(110),
			want: want{release: sec(110), lost: 0, completes: sec(140 + 900)},
		},
		"past the deadline everything since the last durable snapshot is lost": {
			cfg:      SimConfig{Checkpoint: sec(90), ColdStart: sec(30), Iteration: sec(30), NoRenewalCheckpoint: true},
			signalAt: sec(100), deadline: sec(60), restore: sec(160),
			want: want{release: sec(160), lost: sec(100), forced: true, completes: sec(190 + 1000)},
		},
		"a renewal flush pauses progress and makes whole iterations durable": {
			cfg:     SimConfig{Checkpoint: sec(10), ColdStart: sec(30), Iteration: sec(30)},
			renewAt: sec(50), signalAt: sec(200), deadline: sec(5), restore: sec(300),
			// Renewal at 50 s: 50 s of work, 30 s durable; paused to 60 s.
			// Signal at 200 s: 190 s of work; the flush misses the deadline,
			// so the job falls back to the 30 s snapshot.
			want: want{release: sec(205), lost: sec(160), forced: true, completes: sec(330 + 970)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := NewSim(tc.cfg)
			must(t, err)
			must(t, s.Add("j", sec(1000)))
			must(t, s.Start(t0, "j"))
			if tc.renewAt > 0 {
				f, err := s.Renew(t0.Add(tc.renewAt), "j")
				must(t, err)
				if f != tc.cfg.Checkpoint {
					t.Fatalf("renewal flush %v", f)
				}
			}
			sig := t0.Add(tc.signalAt)
			must(t, s.Checkpoint(sig, "j"))
			r, err := s.WaitReleased("j", sig.Add(tc.deadline))
			must(t, err)
			if r.At.Sub(t0) != tc.want.release || r.Lost != tc.want.lost || r.Forced != tc.want.forced {
				t.Fatalf("release %+v (at +%v), want %+v", r, r.At.Sub(t0), tc.want)
			}
			cold, err := s.Restore(t0.Add(tc.restore), "j")
			must(t, err)
			if cold != tc.cfg.ColdStart {
				t.Fatalf("cold start %v", cold)
			}
			end, ok := s.CompletesAt("j")
			if !ok || end.Sub(t0) != tc.want.completes {
				t.Fatalf("completes at +%v, want +%v", end.Sub(t0), tc.want.completes)
			}
		})
	}
}

func TestSimRejectsMisuse(t *testing.T) {
	s, err := NewSim(SimConfig{})
	must(t, err)
	must(t, s.Add("j", sec(10)))
	for name, tc := range map[string]struct {
		err  error
		want error
	}{
		"a duplicate job":                 {s.Add("j", sec(1)), ErrDuplicateJob},
		"a job without work":              {s.Add("k", 0), ErrInvalidValue},
		"starting an unknown job":         {s.Start(t0, "x"), ErrUnknownJob},
		"signalling a job not running":    {s.Checkpoint(t0, "j"), ErrInvalidTransition},
		"waiting for a job not signalled": {func() error { _, err := s.WaitReleased("j", t0); return err }(), ErrInvalidTransition},
		"finishing an unknown job":        {s.Finish("x"), ErrUnknownJob},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, tc.err, tc.want)
		}
	}
	must(t, s.Start(t0, "j"))
	if err := s.Start(t0, "j"); !errors.Is(err, ErrInvalidTransition) {
		t.Errorf("double start: %v", err)
	}
	if _, err := s.Restore(t0, "j"); !errors.Is(err, ErrInvalidTransition) {
		t.Errorf("restore of a running job: %v", err)
	}
	if p, w, ok := s.Progress("j", t0.Add(sec(4))); !ok || p != sec(4) || w != sec(10) {
		t.Errorf("Progress = %v %v %v", p, w, ok)
	}
}

// A job the Sim does not know has no progress and no work.
func TestSimProgressOfAnUnknownJob(t *testing.T) {
	sim, err := NewSim(SimConfig{})
	must(t, err)
	if p, w, ok := sim.Progress("nobody", t0); ok || p != 0 || w != 0 {
		t.Fatalf("Progress of an unknown job = %v, %v, %v; want 0, 0, false", p, w, ok)
	}
}
