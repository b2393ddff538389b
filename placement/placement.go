package placement

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Node describes one machine of a cluster: an identifier, a number of GPUs
// and an optional topology path.
//
// Topology lists the node's network domains from the outermost to the
// innermost, for example {"rack-3", "switch-12"}. Domains are identified by
// their whole path prefix, so two switches called "switch-1" in different
// racks are different domains. Nodes may have paths of different depths, or
// none at all.
type Node struct {
	ID       string
	GPUs     int
	Topology []string
}

// Slot is the part of a placement that lives on one node: the node's ID and
// the indices of the GPUs used there, in ascending order, as a real
// integration would pass them to CUDA_VISIBLE_DEVICES.
type Slot struct {
	Node string
	GPUs []int
}

// Placement names every GPU of a gang: one [Slot] per node, ordered by node
// ID. The zero Placement holds nothing.
type Placement struct{ Slots []Slot }

// GPUs returns the number of GPUs in the placement. O(nodes).
func (p Placement) GPUs() int {
	n := 0
	for _, s := range p.Slots {
		n += len(s.GPUs)
	}
	return n
}

// Nodes returns the number of nodes the placement spans.
func (p Placement) Nodes() int { return len(p.Slots) }

// Equal reports whether p and q name the same GPUs in the same slot order,
// for callers that check a job holds what it claims. O(GPUs).
func (p Placement) Equal(q Placement) bool {
	return slices.EqualFunc(p.Slots, q.Slots, func(x, y Slot) bool {
		return x.Node == y.Node && slices.Equal(x.GPUs, y.GPUs)
	})
}

// Overlaps reports whether p and q name a GPU in common: whether a job
// placed at q needs the GPUs of one that holds p, e.g. to find which of
// the jobs let go in a [Cluster.PlaceWithout] look its answer displaces.
// O(GPUs of both) for slots in node order, as placements are.
func (p Placement) Overlaps(q Placement) bool {
	i, j := 0, 0
	for i < len(p.Slots) && j < len(q.Slots) {
		a, b := p.Slots[i], q.Slots[j]
		switch {
		case a.Node < b.Node:
			i++
		case a.Node > b.Node:
			j++
		default:
			for _, g := range a.GPUs {
				if slices.Contains(b.GPUs, g) {
					return true
				}
			}
			i, j = i+1, j+1
		}
	}
	return false
}

// String formats the placement as "node:gpu,gpu node:gpu", for logs and
// examples.
func (p Placement) String() string {
	var b strings.Builder
	for i, s := range p.Slots {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.Node)
		b.WriteByte(':')
		for j, g := range s.GPUs {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(g))
		}
	}
	return b.String()
}

// clone returns a deep copy of p whose slices share nothing with p.
func (p Placement) clone() Placement {
	if p.Slots == nil {
		return Placement{}
	}
	slots := make([]Slot, len(p.Slots))
	gpus := make([]int, 0, p.GPUs())
	for i, s := range p.Slots {
		start := len(gpus)
		gpus = append(gpus, s.GPUs...)
		slots[i] = Slot{Node: s.Node, GPUs: gpus[start:len(gpus):len(gpus)]}
	}
	return Placement{Slots: slots}
}

// Placer is the face of a placement engine that a scheduler consumes.
//
// Planning and committing are separate so that a scheduler can plan a whole
// round (on a clone, or step by step) before it changes anything: Place and
// Fits never mutate, Allocate and Release do.
type Placer interface {
	// Place plans where demand GPUs would go; it does not change state. A
	// job that cannot be placed gets an error matching ErrNoFit, whose
	// concrete type *NoFitError carries the reason (Demand, LargestFree,
	// FreeTotal, a human sentence).
	Place(demand int) (Placement, error)
	// Fits reports whether Place(demand) would succeed, more cheaply.
	Fits(demand int) bool
	// Allocate occupies exactly the GPUs of p under allocation id.
	Allocate(id string, p Placement) error
	// Release frees the GPUs held by allocation id and returns them.
	Release(id string) (Placement, error)
}

// Option configures a [Cluster] at construction.
type Option func(*config)

type config struct {
	mode Mode
	bad  bool // an unknown Mode
}

// StrictConsolidation is the default policy: a job whose demand is at most
// the GPU count of the largest node that accepts placements must land on a
// single node, and waits otherwise. Larger jobs take the fewest nodes that
// can hold them. Strict consolidation keeps small jobs off the network and
// keeps the cluster from being splintered by jobs that would fit on one node
// later.
func StrictConsolidation() Option { return func(c *config) { c.mode = Strict } }

// AllowSpread lets a job that no single node can hold be spread over the
// fewest nodes that can, even when its demand is at most a node's size.
// It trades communication locality for shorter waits.
func AllowSpread() Option { return func(c *config) { c.mode = FewestNodes } }

// Mode is a cluster's consolidation rule for gangs that one node could
// hold (see the package's Rules).
type Mode uint8

const (
	// Strict places a gang on the fewest nodes it could occupy on an
	// empty cluster: a gang no larger than the largest node that accepts
	// placements gets one node, or waits (StrictConsolidation, the
	// default).
	Strict Mode = iota
	// FewestNodes places a gang on the fewest nodes its currently free
	// GPUs allow, innermost topology domain first, then best fit: it
	// spreads when no node holds it, even where one node could hold it
	// empty (AllowSpread).
	FewestNodes
	// FirstFit places a gang first-fit over the nodes in the order the
	// cluster received them (the slice given to NewCluster, then AddNode
	// calls), the rule of simulators that scan a node list; topology
	// domains and best fit play no part. With G the GPU count of the
	// largest node that accepts placements, a gang of d ≤ G GPUs takes the
	// first node with d free; a gang of d > G takes the first ⌊d/G⌋ wholly
	// free nodes of G GPUs and, when d mod G > 0, the first other node
	// with d mod G free — the fewest nodes an empty cluster gives it
	// ([Cluster.MinNodes]) when it has that many nodes of G GPUs. A gang
	// with no such placement is spread: every node in order gives all its
	// free GPUs, the last one only what is still missing, so it waits only
	// when the free GPUs of the accepting nodes fall short of d. In a
	// cluster of mixed sizes a gang larger than G that the nodes of G GPUs
	// cannot take whole (plus the remainder) is thus spread, although
	// smaller nodes, taken whole, might hold it on MinNodes nodes.
	FirstFit
)

// String returns "strict", "spread" or "firstfit", the text ParseMode
// reads.
func (m Mode) String() string {
	switch m {
	case Strict:
		return "strict"
	case FewestNodes:
		return "spread"
	case FirstFit:
		return "firstfit"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ParseMode is the inverse of String: "strict", "spread" or "firstfit".
// Any other text is an error matching ErrInvalidMode.
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{Strict, FewestNodes, FirstFit} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, &Error{Op: "parse mode", Err: ErrInvalidMode, Detail: fmt.Sprintf("%q: want strict, spread or firstfit", s)}
}

// WithMode is StrictConsolidation for Strict and AllowSpread for
// FewestNodes, and selects FirstFit; an unknown mode makes NewCluster fail
// with ErrInvalidMode.
func WithMode(m Mode) Option {
	return func(c *config) {
		switch m {
		case Strict, FewestNodes, FirstFit:
			c.mode = m
		default:
			c.bad = true
		}
	}
}
