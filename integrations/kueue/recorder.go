package kueue

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/astraea-sched/astraea/internal/atomicfile"
	"github.com/astraea-sched/astraea/ledger"
)

// Recorder is the ledger the controller keeps, with the rules that make
// recording idempotent. It is safe for concurrent use: the reconciler, the
// weight writer and metric scrapes share it.
//
// Every step is applied only if the ledger's own state of the job says it
// has not happened yet (a submit of an unknown job, a start of a pending
// one, a stop of a running one, a finish of an active one), so seeing a
// Workload twice, or again after a restart, records nothing twice.
//
// Times come from the objects (creation time, the Admitted and Finished
// conditions' transition times, which the API server keeps to the second).
// A step older than the ledger's clock, which an informer's delay or that
// rounding produces, is recorded at the clock's time: never in the past of
// an event already recorded, since the ledger rejects that.
type Recorder struct {
	mu     sync.Mutex
	l      *ledger.Ledger
	shares map[ledger.TenantID]float64 // registered tenants and their shares
	jobs   map[ledger.JobID]struct{}   // jobs whose Workload may still exist
}

// NewRecorder wraps a ledger (new, restored from a snapshot, or rebuilt by
// Rebuild). The recorder owns it from then on.
func NewRecorder(l *ledger.Ledger) *Recorder {
	r := &Recorder{l: l, shares: map[ledger.TenantID]float64{}, jobs: map[ledger.JobID]struct{}{}}
	for id := range l.Tenants() {
		if t, _ := l.Tenant(id); t.Registered {
			r.shares[id] = t.Weight
		}
	}
	return r
}

// Rebuild returns a recorder whose ledger holds what the given observations
// say, replayed in the order of their times: the state of a cluster after a
// restart without a snapshot. The ledger starts at the earliest time seen
// (or at now if there is none) with capacity m and the given tenants
// registered; what the objects no longer tell (runs before an eviction, a
// finished workload's admission once its condition is gone, workloads
// already deleted) is not recovered.
func Rebuild(cfg ledger.Config, obs []observation, shares map[ledger.TenantID]float64, now time.Time) (*Recorder, error) {
	var evs []event
	for i := range obs {
		evs = append(evs, obs[i].events()...)
	}
	slices.SortStableFunc(evs, compareEvents)
	cfg.Start = now
	if len(evs) > 0 && evs[0].at.Before(now) {
		cfg.Start = evs[0].at
	}
	l, err := ledger.New(cfg)
	if err != nil {
		return nil, err
	}
	r := NewRecorder(l)
	for _, id := range slices.Sorted(maps.Keys(shares)) {
		if err := r.ensureTenant(cfg.Start, id, shares[id]); err != nil {
			return nil, err
		}
	}
	for _, ev := range evs {
		if err := r.apply(ev); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Observe brings the ledger up to what one Workload shows: the steps of
// its life that the ledger has not recorded yet.
func (r *Recorder) Observe(o observation, share float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ensureTenant(o.created, o.tenant, share); err != nil {
		return err
	}
	for _, ev := range o.events() {
		if err := r.apply(ev); err != nil {
			return err
		}
	}
	return nil
}

// Gone records that a job's Workload was deleted, at at: an active job is
// cancelled then; the record of a finished one is dropped (Ledger.Forget)
// since no object can bring it back.
func (r *Recorder) Gone(id ledger.JobID, at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.l.Job(id)
	if !ok {
		return nil
	}
	if j.Active {
		if err := r.l.Finish(r.clamp(at), id, ledger.Cancelled); err != nil {
			return err
		}
	}
	delete(r.jobs, id)
	return r.l.Forget(id)
}

// Jobs returns the ids of the jobs whose Workloads the recorder has seen and
// not seen deleted, sorted: after a restart from a snapshot, those that the
// API server no longer has were deleted while the controller was away.
func (r *Recorder) Jobs() []ledger.JobID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.jobs))
}

// clamp returns at, or the ledger's clock if at is before it.
func (r *Recorder) clamp(at time.Time) time.Time {
	if now := r.l.Now(); at.Before(now) {
		return now
	}
	return at
}

// ensureTenant registers a tenant the ledger does not have, or updates the
// share of one it has.
func (r *Recorder) ensureTenant(at time.Time, id ledger.TenantID, share float64) error {
	if share <= 0 {
		share = 1
	}
	old, ok := r.shares[id]
	switch {
	case !ok:
		if t, known := r.l.Tenant(id); known && t.Registered {
			r.shares[id] = t.Weight
			return r.ensureTenant(at, id, share)
		}
		if err := r.l.AddTenant(r.clamp(at), id, share); err != nil {
			return err
		}
	case old != share:
		if err := r.l.SetTenantWeight(r.clamp(at), id, share); err != nil {
			return err
		}
	}
	r.shares[id] = share
	return nil
}

// apply records one step if the ledger's state of the job says it is due.
func (r *Recorder) apply(ev event) error {
	o := ev.obs
	j, known := r.l.Job(o.job)
	at := r.clamp(ev.at)
	var err error
	switch ev.kind {
	case evSubmit:
		if known {
			return nil
		}
		if _, ok := r.shares[o.tenant]; !ok {
			if err := r.ensureTenant(at, o.tenant, 1); err != nil {
				return err
			}
		}
		if err = r.l.Submit(at, o.job, o.tenant, o.demand, 1); err == nil {
			r.jobs[o.job] = struct{}{}
		}
	case evStart:
		if !known || !j.Active || j.Running {
			return nil
		}
		err = r.l.Start(at, o.job)
	case evStop:
		if !known || !j.Running {
			return nil
		}
		err = r.l.Stop(at, o.job)
	case evFinish:
		if !known || !j.Active {
			return nil
		}
		err = r.l.Finish(at, o.job, o.final)
	}
	if err != nil {
		return fmt.Errorf("kueue: recording workload %s: %w", o.job, err)
	}
	return nil
}

// Sync moves the ledger's clock to now, sets its capacity to m when it
// changed, and registers the given tenants with their shares (and removes
// registered tenants that are absent and have no active job, so that a
// deleted queue stops drawing a quota).
func (r *Recorder) Sync(now time.Time, m ledger.GPUs, shares map[ledger.TenantID]float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now = r.clamp(now)
	if err := r.l.Advance(now); err != nil {
		return err
	}
	if r.l.Capacity() != m {
		if err := r.l.SetCapacity(now, m); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(shares)) {
		if err := r.ensureTenant(now, id, shares[id]); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.shares)) {
		if _, ok := shares[id]; ok {
			continue
		}
		if t, _ := r.l.Tenant(id); t.ActiveJobs == 0 {
			if err := r.l.RemoveTenant(now, id); err != nil && !errors.Is(err, ledger.ErrTenantBusy) {
				return err
			}
			delete(r.shares, id)
		}
	}
	return nil
}

// TenantState is one tenant's standing at a time, as the metrics and the
// weight writer read it.
type TenantState struct {
	ID      ledger.TenantID
	Share   float64        // the tenant's ledger weight W_j
	Account ledger.Account // over the ledger's retained history up to the time
	Demand  ledger.GPUs    // Σ demand of its active jobs
	Alloc   ledger.GPUs    // Σ demand of its running jobs
}

// Tenants returns the standing of every registered tenant at at (≥ the
// ledger's clock; the current state is extrapolated), ordered by id.
func (r *Recorder) Tenants(at time.Time) []TenantState {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.l.View(r.clamp(at))
	var out []TenantState
	for _, id := range slices.Sorted(maps.Keys(r.shares)) {
		acc, _ := v.TenantAccount(id)
		t, _ := r.l.Tenant(id)
		out = append(out, TenantState{ID: id, Share: t.Weight, Account: acc, Demand: t.Demand, Alloc: t.Alloc})
	}
	return out
}

// Job returns the ledger's state of a job.
func (r *Recorder) Job(id ledger.JobID) (ledger.JobInfo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.l.Job(id)
}

// snapshotFile is the snapshot's format: the ledger's own versioned
// encoding and the ids of the jobs whose Workloads were alive, which the
// ledger does not list.
type snapshotFile struct {
	Format string         `json:"format"`
	Jobs   []ledger.JobID `json:"jobs"`
	Ledger []byte         `json:"ledger"`
}

const snapshotFormat = "astraea-kueue/v1"

// Snapshot writes the recorder's state to path atomically: a temporary file
// in the same directory, synced and renamed over path, so that a crash
// leaves the old snapshot or the new one.
func (r *Recorder) Snapshot(path string) error {
	r.mu.Lock()
	data, err := r.l.MarshalBinary()
	jobs := slices.Sorted(maps.Keys(r.jobs))
	r.mu.Unlock()
	if err != nil {
		return err
	}
	b, err := json.Marshal(snapshotFile{Format: snapshotFormat, Jobs: jobs, Ledger: data})
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, b, 0o600)
}

// LoadSnapshot reads a snapshot written by Snapshot. A file that is not one
// fails with ledger.ErrCorruptSnapshot (or the ledger's own error for its
// part).
func LoadSnapshot(path string) (*Recorder, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s snapshotFile
	if err := json.Unmarshal(b, &s); err != nil || s.Format != snapshotFormat {
		return nil, fmt.Errorf("kueue: snapshot %s: %w: not an %s file", path, ledger.ErrCorruptSnapshot, snapshotFormat)
	}
	l, err := ledger.Restore(s.Ledger)
	if err != nil {
		return nil, fmt.Errorf("kueue: snapshot %s: %w", path, err)
	}
	r := NewRecorder(l)
	for _, id := range s.Jobs {
		if _, ok := l.Job(id); !ok {
			return nil, fmt.Errorf("kueue: snapshot %s: %w: job %q is listed but not in the ledger", path, ledger.ErrCorruptSnapshot, id)
		}
		r.jobs[id] = struct{}{}
	}
	return r, nil
}

// Check runs the ledger's invariant check.
func (r *Recorder) Check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.l.Check()
}
