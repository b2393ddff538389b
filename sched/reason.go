package sched

import (
	"fmt"

	"github.com/astraea-sched/astraea/ledger"
)

// ReasonCode classifies why a candidate waits or why a tenant left play.
type ReasonCode uint8

const (
	// NoFit: the job was tried and its gang demand could not be placed, even
	// counting the GPUs of expiring jobs not yet renewed as free. Need,
	// LargestFree and FreeTotal describe that view.
	NoFit ReasonCode = iota + 1
	// OutOfPlay: with [Options.NoBackfill], the job was never tried because
	// its tenant left play when By, which ranks higher in the tenant, did not
	// fit (Need, LargestFree and FreeTotal are By's).
	OutOfPlay
	// Preempted: an expiring running job whose GPUs were granted to By,
	// which was served first, and that was not tried again (its tenant left
	// play, or no GPU was left).
	Preempted
	// ClusterFull: every GPU was granted before the job's turn came.
	ClusterFull
	// Held: an expiring running job on nodes a [Reserver] holds for By. It
	// was not renewed there; the round tried it again as a new placement
	// elsewhere (see Grants and Waiting).
	Held
)

// String returns "no-fit", "out-of-play", "preempted", "cluster-full" or
// "held".
func (c ReasonCode) String() string {
	switch c {
	case NoFit:
		return "no-fit"
	case OutOfPlay:
		return "out-of-play"
	case Preempted:
		return "preempted"
	case ClusterFull:
		return "cluster-full"
	case Held:
		return "held"
	}
	return fmt.Sprintf("ReasonCode(%d)", uint8(c))
}

// Reason is why a candidate received nothing, as data; String renders it as
// a sentence for people.
type Reason struct {
	Code ReasonCode
	// Need is the demand that did not fit (the candidate's own, or By's for
	// OutOfPlay). LargestFree is the largest number of GPUs free on one node
	// and FreeTotal the free GPUs overall, as the placer reported them, or -1
	// when the placer did not say.
	Need, LargestFree, FreeTotal int
	// By is the job the reason refers to (see the codes).
	By ledger.JobID
}

// String renders the reason, e.g. "does not fit: needs 8 GPUs, largest free
// block 4 (4 free in total)".
func (r Reason) String() string {
	fit := func() string {
		s := fmt.Sprintf("needs %d GPUs", r.Need)
		if r.LargestFree >= 0 {
			s += fmt.Sprintf(", largest free block %d", r.LargestFree)
		}
		if r.FreeTotal >= 0 {
			s += fmt.Sprintf(" (%d free in total)", r.FreeTotal)
		}
		return s
	}
	switch r.Code {
	case NoFit:
		return "does not fit: " + fit()
	case OutOfPlay:
		return fmt.Sprintf("tenant out of play: ranked below %s, which does not fit: %s", r.By, fit())
	case Preempted:
		return fmt.Sprintf("preempted by %s", r.By)
	case ClusterFull:
		return "cluster full: no free GPU left"
	case Held:
		return fmt.Sprintf("its nodes are held for %s", r.By)
	}
	return "no reason"
}
