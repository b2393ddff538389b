package baselines

import (
	"slices"

	"github.com/astraea-sched/astraea/simulate"
)

// HiveDConfig tunes [HiveD]. The zero value uses the defaults.
type HiveDConfig struct {
	// NodeGPUs is the size of a node-level cell. Zero means 8, the node size
	// of the Venus and Philly clusters.
	NodeGPUs int
}

// HiveD models HiveD (Zhao et al., OSDI '20): each virtual cluster (tenant)
// owns a guaranteed quota expressed in cells, so that the quota keeps its
// topology, and the GPUs it does not use are lent to others at low priority.
//
//   - Cells: a tenant's quota, weight × cluster GPUs rounded by the largest
//     remainder method, becomes ⌊q ÷ N⌋ node-level cells of N GPUs plus one
//     partial node cell of q mod N GPUs (N = NodeGPUs). A job of d ≤ N GPUs
//     must fit inside one cell (best fit: the cell with the fewest free GPUs
//     that still holds it); a larger job needs ⌊d ÷ N⌋ wholly free node cells
//     plus d mod N GPUs in one more cell. A tenant with 12 free GPUs spread
//     as 4 + 4 + 4 therefore cannot run an 8-GPU job inside its quota, which
//     is HiveD's point: a quota is a set of cells, not a GPU count.
//   - Guaranteed jobs: a waiting job that fits in its tenant's free cells is
//     guaranteed. If the cluster has no room for it, opportunistic jobs are
//     preempted, most recently started first, until it fits; those that turn
//     out not to be needed keep running.
//   - Opportunistic jobs: a job that does not fit in its tenant's free cells
//     (its tenant's quota is in use, or the job is larger than the quota)
//     runs on idle GPUs at low priority, in (submit, id) order, and is the
//     first to go when an owner needs its cells back.
//   - No leases; guaranteed jobs are never preempted.
//
// Simplified: HiveD's buddy cell allocator binds virtual cells to physical
// cells over a GPU → node → rack hierarchy. We keep the tenant-side cell
// accounting at the GPU and node levels (no rack level) and delegate the
// physical binding to the consolidated placer. When fragmentation among
// guaranteed jobs leaves no physical room even after every opportunistic job
// is gone, the guaranteed job waits (HiveD's binding would avoid that case).
// Guaranteed jobs of all tenants are served in (submit, id) order; HiveD's
// intra-tenant priorities are absent from the traces.
//
// Cost per tick: O(p × (c + r)) for p pending jobs, c cells of a tenant and r
// running opportunistic jobs.
type HiveD struct {
	cfg      HiveDConfig
	vcs      map[string]*hivedVC
	builtFor int
	bound    map[string]*hivedBinding // running jobs started by this policy
}

type hivedVC struct {
	cap  []int     // GPUs of each cell
	free []int     // free GPUs of each cell
	skip []bool    // alloc's cells taken whole, false between calls
	uses []cellUse // alloc's cells, before it knows the gang fits
}

type cellUse struct{ cell, gpus int }

type hivedBinding struct {
	vc   string
	uses []cellUse // empty for an opportunistic job
}

// NewHiveD validates cfg and returns a HiveD policy.
func NewHiveD(cfg HiveDConfig) (*HiveD, error) {
	if cfg.NodeGPUs < 0 {
		return nil, configError("hived", "NodeGPUs", cfg.NodeGPUs, "must not be negative")
	}
	if cfg.NodeGPUs == 0 {
		cfg.NodeGPUs = 8
	}
	return &HiveD{cfg: cfg, bound: make(map[string]*hivedBinding)}, nil
}

// Name is "hived".
func (h *HiveD) Name() string { return "hived" }

// Opportunistic reports whether a running job was started outside its
// tenant's cells (false for unknown jobs).
func (h *HiveD) Opportunistic(job string) bool {
	b, ok := h.bound[job]
	return ok && len(b.uses) == 0
}

func (h *HiveD) build(s *simulate.State) {
	if h.vcs != nil && h.builtFor == s.Capacity {
		return
	}
	n := h.cfg.NodeGPUs
	h.vcs = make(map[string]*hivedVC)
	h.builtFor = s.Capacity
	for t, q := range capacities(s.Quotas, s.Capacity) {
		vc := &hivedVC{}
		for range q / n {
			vc.cap = append(vc.cap, n)
		}
		if r := q % n; r > 0 {
			vc.cap = append(vc.cap, r)
		}
		vc.free = slices.Clone(vc.cap)
		h.vcs[t] = vc
	}
	for _, b := range h.bound { // re-take the cells of running guaranteed jobs where possible
		vc := h.vcs[b.vc]
		var kept []cellUse
		for _, u := range b.uses {
			if vc != nil && u.cell < len(vc.free) && vc.free[u.cell] >= u.gpus {
				vc.free[u.cell] -= u.gpus
				kept = append(kept, u)
			}
		}
		b.uses = kept
	}
}

// alloc takes d GPUs from the tenant's free cells, or reports false.
func (vc *hivedVC) alloc(d, n int) ([]cellUse, bool) {
	// skip marks the cells a large gang takes whole: a slice kept
	// between calls rather than a map made at each, which cost more than
	// the search itself.
	skip := vc.skip
	bestFit := func(g int) int {
		best := -1
		for i, f := range vc.free {
			if !skip[i] && f >= g && (best < 0 || f < vc.free[best]) {
				best = i
			}
		}
		return best
	}
	if len(skip) < len(vc.free) {
		skip = make([]bool, len(vc.free))
		vc.skip = skip
	}
	// Built in a buffer kept between calls and copied only when the gang
	// fits: most calls find that it does not.
	uses := vc.uses[:0]
	defer func() { vc.uses = uses[:0] }()
	if d <= n {
		c := bestFit(d)
		if c < 0 {
			return nil, false
		}
		uses = append(uses, cellUse{c, d})
	} else {
		defer clear(skip)
		for i := range vc.free {
			if len(uses) == d/n {
				break
			}
			if vc.cap[i] == n && vc.free[i] == n {
				skip[i] = true
				uses = append(uses, cellUse{i, n})
			}
		}
		if len(uses) < d/n {
			return nil, false
		}
		if r := d % n; r > 0 {
			c := bestFit(r)
			if c < 0 {
				return nil, false
			}
			uses = append(uses, cellUse{c, r})
		}
	}
	for _, u := range uses {
		vc.free[u.cell] -= u.gpus
	}
	return slices.Clone(uses), true
}

func (vc *hivedVC) release(uses []cellUse) {
	for _, u := range uses {
		vc.free[u.cell] += u.gpus
	}
}

// Traits tells the engine that this policy never reads the progress of
// running jobs.
func (h *HiveD) Traits() simulate.Traits { return simulate.Traits{ProgressBlind: true} }

// Schedule reconciles finished jobs, admits guaranteed jobs (reclaiming
// cells from opportunistic ones), then fills idle GPUs opportunistically.
func (h *HiveD) Schedule(s *simulate.State) (simulate.Decision, error) {
	h.build(s)
	running := make(map[string]*simulate.JobState, len(s.Running))
	for _, js := range s.Running {
		running[js.Job.ID] = js
		if _, ok := h.bound[js.Job.ID]; !ok {
			h.bound[js.Job.ID] = &hivedBinding{vc: js.Job.Tenant}
		}
	}
	// Only the jobs that left are sorted (a release adds to a count, so
	// their order changes nothing, but no map order is relied on): not
	// every bound job at every tick.
	var gone []string
	for id := range h.bound {
		if _, ok := running[id]; !ok {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	for _, id := range gone {
		b := h.bound[id]
		if vc := h.vcs[b.vc]; vc != nil {
			vc.release(b.uses)
		}
		delete(h.bound, id)
	}
	var opportunistic []*simulate.JobState
	for _, js := range s.Running {
		if len(h.bound[js.Job.ID].uses) == 0 {
			opportunistic = append(opportunistic, js)
		}
	}
	// Most recently started first: the cheapest to take back.
	slices.SortFunc(opportunistic, func(a, b *simulate.JobState) int {
		if c := b.LastStart.Compare(a.LastStart); c != 0 {
			return c
		}
		return simulate.CompareJobs(b, a)
	})

	p := newPlan(s)
	for _, js := range s.Pending {
		vc := h.vcs[js.Job.Tenant]
		if vc == nil {
			continue
		}
		d := js.Job.GPUs
		uses, ok := vc.alloc(d, h.cfg.NodeGPUs)
		if !ok {
			continue
		}
		var victims []string
		for _, v := range opportunistic {
			if p.fits(d) {
				break
			}
			if p.decided[v.Job.ID] {
				continue
			}
			if err := p.stop(v); err != nil {
				return simulate.Decision{}, err
			}
			victims = append(victims, v.Job.ID)
		}
		if !p.start(js, 0) {
			vc.release(uses)
			for i := len(victims) - 1; i >= 0; i-- {
				p.unstop(victims[i])
			}
			continue
		}
		h.bound[js.Job.ID] = &hivedBinding{vc: js.Job.Tenant, uses: uses}
		for i := len(victims) - 1; i >= 0; i-- { // keep the victims that were not needed
			p.unstop(victims[i])
		}
	}
	for _, js := range s.Pending {
		if p.free() == 0 {
			break
		}
		if !p.decided[js.Job.ID] && js.Job.GPUs <= p.free() && p.start(js, 0) {
			h.bound[js.Job.ID] = &hivedBinding{vc: js.Job.Tenant}
		}
	}
	for _, id := range p.preempt {
		delete(h.bound, id)
	}
	return p.decision(), nil
}
