package baselines

import "github.com/astraea-sched/astraea/simulate"

// FIFOConfig tunes [FIFO]. The zero value is strict FIFO.
type FIFOConfig struct {
	// Backfill lets a job start when an earlier one does not fit (first fit
	// in submission order). The default, false, is strict FIFO: the head of
	// the queue blocks everything behind it, so the cluster can idle while a
	// large gang waits for GPUs to drain. Strict FIFO is therefore not
	// work-conserving; Backfill is, at the price of possibly starving a large
	// gang behind a stream of small jobs.
	Backfill bool
}

// FIFO is the reference scheduler: one global queue in (submit time, id)
// order, consolidated placement by the cluster's placer, no preemption, no
// leases and no tenant level. It is the plain first-come-first-served policy
// most cluster managers start with (Tiresias NSDI '19 and many others use it
// as their baseline).
//
// Cost per tick: O(p log n) for p pending jobs and n nodes in the worst case
// (Backfill); strict FIFO stops at the first job that does not fit.
type FIFO struct{ cfg FIFOConfig }

// NewFIFO returns a FIFO policy. Every FIFOConfig is valid.
func NewFIFO(cfg FIFOConfig) *FIFO { return &FIFO{cfg: cfg} }

// Name is "fifo", or "fifo-backfill" with Backfill.
func (f *FIFO) Name() string {
	if f.cfg.Backfill {
		return "fifo-backfill"
	}
	return "fifo"
}

// Traits tells the engine that this policy never reads the progress of
// running jobs.
func (f *FIFO) Traits() simulate.Traits { return simulate.Traits{ProgressBlind: true} }

// Schedule starts pending jobs in submission order while they fit.
func (f *FIFO) Schedule(s *simulate.State) (simulate.Decision, error) {
	p := newPlan(s)
	for _, js := range s.Pending {
		if p.free() == 0 {
			break
		}
		if js.Job.GPUs > p.free() || !p.start(js, 0) {
			if !f.cfg.Backfill {
				break
			}
		}
	}
	return p.decision(), nil
}
