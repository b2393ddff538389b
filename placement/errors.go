package placement

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors, matched with [errors.Is]. Concrete errors are *[Error]
// (or *[NoFitError] for ErrNoFit) and name the allocation, node and GPU at
// fault. Every call that returns an error leaves the cluster unchanged.
var (
	// ErrNoFit: the demand cannot be placed now; see *NoFitError.
	ErrNoFit = errors.New("placement: does not fit")
	// ErrUnknownAllocation: no allocation has this id (never allocated, or already released).
	ErrUnknownAllocation = errors.New("placement: unknown allocation")
	// ErrDuplicateAllocation: an allocation with this id already exists.
	ErrDuplicateAllocation = errors.New("placement: duplicate allocation")
	// ErrUnknownNode: no node has this id.
	ErrUnknownNode = errors.New("placement: unknown node")
	// ErrInvalidMode: an unknown Mode (WithMode, ParseMode).
	ErrInvalidMode = errors.New("placement: invalid mode")
	// ErrInvalidDemand: a demand of zero or fewer GPUs.
	ErrInvalidDemand = errors.New("placement: invalid demand")
	// ErrConflict: a GPU asked for is already held by another allocation.
	ErrConflict = errors.New("placement: GPU already held")
	// ErrDuplicateNode: a node with this id already exists.
	ErrDuplicateNode = errors.New("placement: duplicate node")
	// ErrInvalidNode: a node with an empty id, GPUs outside [1, MaxNodeGPUs], or an empty or NUL-containing topology label.
	ErrInvalidNode = errors.New("placement: invalid node")
	// ErrInvalidPlacement: a malformed placement or allocation id (empty, slots not ordered by
	// node, GPU indices not strictly ascending or out of range).
	ErrInvalidPlacement = errors.New("placement: invalid placement")
	// ErrNodeBusy: the node still holds allocations and cannot be removed.
	ErrNodeBusy = errors.New("placement: node busy")
)

// Error is the concrete type of every error of this package except
// *NoFitError. It names the operation and the allocation and node at fault.
type Error struct {
	Op         string // "allocate", "release", "add node", "drain node", "remove node", "place", ...
	Allocation string // allocation id, if any
	Node       string // node id, if any
	Detail     string // what exactly is wrong; empty means Err's text
	Err        error  // one of the sentinels
}

// Error formats the error as "placement: <op> <allocation> on node <node>: <detail>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("placement: ")
	b.WriteString(e.Op)
	switch {
	case e.Allocation != "" && e.Node != "":
		fmt.Fprintf(&b, " %q on node %q", e.Allocation, e.Node)
	case e.Allocation != "":
		fmt.Fprintf(&b, " %q", e.Allocation)
	case e.Node != "":
		fmt.Fprintf(&b, " %q", e.Node)
	}
	b.WriteString(": ")
	if e.Detail != "" {
		b.WriteString(e.Detail)
	} else {
		b.WriteString(strings.TrimPrefix(e.Err.Error(), "placement: "))
	}
	return b.String()
}

// Unwrap returns the sentinel, so that errors.Is(err, ErrConflict) works.
func (e *Error) Unwrap() error { return e.Err }

// NoFitError says why a demand cannot be placed now, as data a scheduler can
// report ("why is my job waiting?"). It matches [ErrNoFit].
type NoFitError struct {
	Demand      int    // GPUs asked for
	MaxNodes    int    // nodes the policy allowed the job to span: 1 under strict consolidation, 0 for any number
	LargestFree int    // free GPUs on the emptiest node that accepts placements
	FreeTotal   int    // free GPUs on all nodes that accept placements
	Reason      string // a human sentence, e.g. "needs 8 on ≤ 1 node, largest free block is 4"
}

// Error returns the reason, prefixed with the package name.
func (e *NoFitError) Error() string { return "placement: " + e.Reason }

// Is makes errors.Is(err, ErrNoFit) true.
func (e *NoFitError) Is(target error) bool { return target == ErrNoFit }

// newNoFit returns the *NoFitError of a decision. Its reason is written
// into a buffer on the stack and copied once into a string, rather than
// formatted by fmt.Sprintf or concatenated, each several times as costly: a
// scheduler meets no-fits on every round (noFitReason is the reference).
func newNoFit(demand, maxNodes, largest, total int) *NoFitError {
	e := &NoFitError{Demand: demand, MaxNodes: maxNodes, LargestFree: largest, FreeTotal: total}
	var buf [128]byte // room for the longest reason, of three 20-character integers
	b := append(buf[:0], "needs "...)
	b = strconv.AppendInt(b, int64(demand), 10)
	if maxNodes == 1 {
		b = append(b, " on ≤ 1 node, largest free block is "...)
		b = strconv.AppendInt(b, int64(largest), 10)
	} else {
		b = append(b, ", only "...)
		b = strconv.AppendInt(b, int64(total), 10)
		b = append(b, " free in total (largest free block is "...)
		b = strconv.AppendInt(b, int64(largest), 10)
		b = append(b, ')')
	}
	e.Reason = string(b)
	return e
}
