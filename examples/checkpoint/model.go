package checkpoint

import (
	"fmt"
	"math/rand/v2"
)

// Features is the number of inputs of the toy model; the model has
// Features weights and one bias.
const Features = 4

// Samples is the size of the toy data set.
const Samples = 64

// LearningRate is the SGD step size.
const LearningRate = 0.05

// Dataset is the toy regression data: y = w·x + b + noise, generated from a
// seed so that every process that trains the same job sees the same data.
type Dataset struct {
	X [Samples][Features]float64
	Y [Samples]float64
}

// NewDataset generates the data set of seed deterministically.
func NewDataset(seed uint64) *Dataset {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var truth [Features + 1]float64
	for i := range truth {
		truth[i] = r.Float64()*4 - 2
	}
	d := &Dataset{}
	for s := range Samples {
		y := truth[Features]
		for f := range Features {
			x := r.Float64()*2 - 1
			d.X[s][f] = x
			y += float64(truth[f] * x)
		}
		d.Y[s] = y + float64(0.01*r.NormFloat64())
	}
	return d
}

// Snapshot is the complete training state after Iter iterations: everything
// needed to continue bit for bit. The sample order of each epoch is derived
// from (Seed, epoch), so it needs no storage.
type Snapshot struct {
	Seed   uint64
	Iter   uint64
	Params [Features + 1]float64 // weights, then bias
}

// order returns the sample permutation of one epoch.
func order(seed, epoch uint64) []int {
	return rand.New(rand.NewPCG(seed, epoch)).Perm(Samples)
}

// Step performs one SGD iteration on one sample and returns the new state.
// It is a pure function of its inputs; explicit float64 conversions keep the
// compiler from fusing multiply-adds, so every build computes the same bits.
// perm, if non-nil, is the current epoch's order (a cache for callers that
// step many times); it is recomputed when nil.
func Step(d *Dataset, s Snapshot, perm []int) Snapshot {
	if perm == nil {
		perm = order(s.Seed, s.Iter/Samples)
	}
	i := perm[s.Iter%Samples]
	pred := s.Params[Features]
	for f := range Features {
		pred += float64(s.Params[f] * d.X[i][f])
	}
	g := float64(pred - d.Y[i])
	next := s
	for f := range Features {
		next.Params[f] -= float64(LearningRate * float64(g*d.X[i][f]))
	}
	next.Params[Features] -= float64(LearningRate * g)
	next.Iter++
	return next
}

// Trainer steps a snapshot forward, caching the epoch order.
type Trainer struct {
	data  *Dataset
	epoch uint64
	perm  []int
}

// NewTrainer returns a trainer for the data set of seed.
func NewTrainer(seed uint64) *Trainer { return &Trainer{data: NewDataset(seed)} }

// Step performs one iteration.
func (t *Trainer) Step(s Snapshot) Snapshot {
	if e := s.Iter / Samples; t.perm == nil || e != t.epoch {
		t.epoch, t.perm = e, order(s.Seed, e)
	}
	return Step(t.data, s, t.perm)
}

// Train runs n iterations from a fresh model without interruption: the
// reference a preempted run must equal bit for bit.
func Train(seed uint64, n uint64) Snapshot {
	t := NewTrainer(seed)
	s := Snapshot{Seed: seed}
	for s.Iter < n {
		s = t.Step(s)
	}
	return s
}

// String prints the parameters with their exact bits.
func (s Snapshot) String() string {
	return fmt.Sprintf("seed %d iter %d params %v", s.Seed, s.Iter, s.Params)
}
