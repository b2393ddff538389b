package kueue

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	astraeaprom "github.com/astraea-sched/astraea/integrations/prometheus"
	"github.com/astraea-sched/astraea/ledger"
)

// ShareAnnotation, on a LocalQueue (ByLocalQueue) or a ClusterQueue
// (ByClusterQueue), gives the tenant's ledger weight W_j: its entitlement
// relative to the others (a positive decimal; 1 when absent or unreadable).
// It is the tenant's share of the capacity, not the weight written to
// Kueue, which the controller derives from it and ρ.
const ShareAnnotation = "astraea-sched.github.io/share"

// DefaultGPU is the resource counted as GPUs unless Options.GPU says
// otherwise.
const DefaultGPU corev1.ResourceName = "nvidia.com/gpu"

// Options configures a Controller. The zero value of each field means its
// documented default.
type Options struct {
	Tenancy Tenancy             // which queue is a tenant; ByLocalQueue
	GPU     corev1.ResourceName // the resource counted; DefaultGPU
	Weights WeightMap           // ρ → weight; DefaultWeightMap()
	// Period is how often the ledger's capacity and tenants are synced
	// and weights written (and the snapshot saved); 30 s.
	Period time.Duration
	// Mode and History configure the ledger (see package ledger); Eq. 8
	// and unbounded history by default.
	Mode    ledger.Mode
	History ledger.History
	// Capacity is the cluster's GPU count M; 0 means the sum of the GPU
	// nominal quotas of all ClusterQueues, re-read every period.
	Capacity ledger.GPUs
	// Snapshot, if not empty, is a file the ledger is saved to every
	// period and restored from at start; without it, a restart rebuilds
	// the ledger from the Workloads' conditions.
	Snapshot string
	// Registerer receives the metrics; nil registers none.
	Registerer prometheus.Registerer
	// Clock returns the current time; time.Now when nil.
	Clock func() time.Time
	// NoWrite leaves queues' weights alone: the controller only records
	// and reports (a dry run, or a measurement without it).
	NoWrite bool
}

func (o Options) withDefaults() (Options, error) {
	if o.GPU == "" {
		o.GPU = DefaultGPU
	}
	if o.Weights == (WeightMap{}) {
		o.Weights = DefaultWeightMap()
	}
	if o.Period == 0 {
		o.Period = 30 * time.Second
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	switch {
	case o.Period < 0:
		return o, fmt.Errorf("%w: period %s must be > 0", ErrConfig, o.Period)
	case o.Tenancy != ByLocalQueue && o.Tenancy != ByClusterQueue:
		return o, fmt.Errorf("%w: unknown tenancy %d", ErrConfig, o.Tenancy)
	case o.Capacity < 0 || o.Capacity > ledger.MaxGPUs:
		return o, fmt.Errorf("%w: capacity %d out of range", ErrConfig, o.Capacity)
	}
	return o, o.Weights.Validate()
}

// Controller records Kueue Workloads in a ledger and writes the queues'
// fair-sharing weights from ρ. Its Reconcile handles Workloads; its Start
// (a manager.Runnable) runs the periodic sync. Build it with New and add it
// to a manager with SetupWithManager.
type Controller struct {
	opts Options
	c    client.Client

	initMu sync.Mutex
	rec    *Recorder // nil until the first sync or reconcile
	// names maps a Workload's name to its job, for deletions (guarded by
	// initMu, which reconciles hold: they run one at a time).
	names map[types.NamespacedName]ledger.JobID

	wmu     sync.Mutex
	weights map[ledger.TenantID]float64 // the weight each tenant's queue had at the last sync
	// weightGauge reports weights; nil without Options.Registerer.
	weightGauge *prometheus.GaugeVec
}

// New returns a controller reading and writing through c (a manager's
// client in production).
func New(c client.Client, opts Options) (*Controller, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Controller{opts: o, c: c, names: map[types.NamespacedName]ledger.JobID{}, weights: map[ledger.TenantID]float64{}}, nil
}

// SetupWithManager registers the Workload reconciler, the periodic sync and
// the metrics.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("astraea-workloads").
		For(&kueuev1beta2.Workload{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(c); err != nil {
		return err
	}
	if err := mgr.Add(c); err != nil {
		return err
	}
	if c.opts.Registerer != nil {
		c.weightGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "astraea_kueue_fair_sharing_weight",
			Help: "The tenant's queue's spec.fairSharing.weight after the last sync.",
		}, []string{"tenant"})
		return c.opts.Registerer.Register(c.weightGauge)
	}
	return nil
}

// Recorder returns the controller's ledger, or nil before its first
// reconcile or sync.
func (c *Controller) Recorder() *Recorder {
	c.initMu.Lock()
	defer c.initMu.Unlock()
	return c.rec
}

// NeedLeaderElection: only the leader writes weights.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start runs the periodic sync until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("astraea-sync")
	t := time.NewTicker(c.opts.Period)
	defer t.Stop()
	for {
		if err := c.Sync(ctx); err != nil {
			log.Error(err, "sync")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Reconcile brings the ledger up to one Workload's state.
func (c *Controller) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	c.initMu.Lock()
	defer c.initMu.Unlock()
	if err := c.initLocked(ctx); err != nil {
		return ctrl.Result{}, err
	}
	var wl kueuev1beta2.Workload
	if err := c.c.Get(ctx, req.NamespacedName, &wl); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		if id, ok := c.names[req.NamespacedName]; ok {
			delete(c.names, req.NamespacedName)
			return ctrl.Result{}, c.rec.Gone(id, c.opts.Clock())
		}
		return ctrl.Result{}, nil
	}
	o, share, ok, err := c.read(ctx, &wl)
	if err != nil || !ok {
		if errors.Is(err, errNoQueue) {
			return ctrl.Result{RequeueAfter: c.opts.Period}, nil
		}
		return ctrl.Result{}, err
	}
	if old, had := c.names[req.NamespacedName]; had && old != o.job {
		// deleted and created again under the same name between two looks
		if err := c.rec.Gone(old, o.created); err != nil {
			return ctrl.Result{}, err
		}
	}
	c.names[req.NamespacedName] = o.job
	return ctrl.Result{}, c.rec.Observe(o, share)
}

// errNoQueue: the workload's LocalQueue is not (yet) in the cache.
var errNoQueue = errors.New("kueue: local queue not found")

// read turns a Workload into an observation. ok is false for a workload the
// ledger does not track: one with no queue, or asking for no GPUs.
func (c *Controller) read(ctx context.Context, wl *kueuev1beta2.Workload) (o observation, share float64, ok bool, err error) {
	if wl.Spec.QueueName == "" {
		return o, 0, false, nil
	}
	d, err := Demand(wl, c.opts.GPU)
	if err != nil || d == 0 {
		return o, 0, false, err
	}
	var tenant ledger.TenantID
	switch c.opts.Tenancy {
	case ByLocalQueue:
		tenant = LocalQueueTenant(wl.Namespace, string(wl.Spec.QueueName))
		var lq kueuev1beta2.LocalQueue
		if err := c.c.Get(ctx, types.NamespacedName{Namespace: wl.Namespace, Name: string(wl.Spec.QueueName)}, &lq); err == nil {
			share = shareOf(lq.Annotations)
		}
	case ByClusterQueue:
		cq := ""
		if wl.Status.Admission != nil {
			cq = string(wl.Status.Admission.ClusterQueue)
		} else {
			var lq kueuev1beta2.LocalQueue
			if err := c.c.Get(ctx, types.NamespacedName{Namespace: wl.Namespace, Name: string(wl.Spec.QueueName)}, &lq); err != nil {
				if apierrors.IsNotFound(err) {
					return o, 0, false, errNoQueue
				}
				return o, 0, false, err
			}
			cq = string(lq.Spec.ClusterQueue)
		}
		tenant = ledger.TenantID(cq)
		var q kueuev1beta2.ClusterQueue
		if err := c.c.Get(ctx, types.NamespacedName{Name: cq}, &q); err == nil {
			share = shareOf(q.Annotations)
		}
	}
	return observe(wl, tenant, d), share, true, nil
}

// shareOf reads ShareAnnotation; 1 when absent or not a positive number.
func shareOf(ann map[string]string) float64 {
	q, err := resource.ParseQuantity(ann[ShareAnnotation])
	if err != nil {
		return 1
	}
	v := q.AsApproximateFloat64()
	if !(v > 0) || math.IsInf(v, 0) {
		return 1
	}
	return v
}

// initLocked builds the recorder on first use: from the snapshot if there
// is one, then brought up to every Workload's state (and workloads deleted
// meanwhile cancelled); without one, rebuilt from the Workloads.
func (c *Controller) initLocked(ctx context.Context) error {
	if c.rec != nil {
		return nil
	}
	var list kueuev1beta2.WorkloadList
	if err := c.c.List(ctx, &list); err != nil {
		return err
	}
	m, shares, _, err := c.cluster(ctx)
	if err != nil {
		return err
	}
	now := c.opts.Clock()
	var obs []observation
	var obsShares []float64
	names := map[types.NamespacedName]ledger.JobID{}
	for i := range list.Items {
		wl := &list.Items[i]
		o, share, ok, err := c.read(ctx, wl)
		if err != nil && !errors.Is(err, errNoQueue) && !errors.Is(err, ErrWorkload) {
			return err
		}
		if !ok {
			continue
		}
		obs, obsShares = append(obs, o), append(obsShares, share)
		names[types.NamespacedName{Namespace: wl.Namespace, Name: wl.Name}] = o.job
	}
	var rec *Recorder
	if c.opts.Snapshot != "" {
		rec, err = LoadSnapshot(c.opts.Snapshot)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if rec != nil {
		for i := range obs {
			if err := rec.Observe(obs[i], obsShares[i]); err != nil {
				return err
			}
		}
		alive := map[ledger.JobID]bool{}
		for _, id := range names {
			alive[id] = true
		}
		for _, id := range rec.Jobs() {
			if !alive[id] {
				if err := rec.Gone(id, now); err != nil {
					return err
				}
			}
		}
	} else {
		for i, o := range obs {
			if _, ok := shares[o.tenant]; !ok {
				shares[o.tenant] = obsShares[i]
			}
		}
		rec, err = Rebuild(ledger.Config{Mode: c.opts.Mode, History: c.opts.History, Capacity: m}, obs, shares, now)
		if err != nil {
			return err
		}
	}
	if c.opts.Registerer != nil {
		// the ledger's accounts, read at every scrape under the
		// recorder's lock, extrapolated to the scrape's time
		col, err := astraeaprom.NewCollector(rec.l, astraeaprom.Options{Lock: &rec.mu, Now: c.opts.Clock})
		if err != nil {
			return err
		}
		if err := c.opts.Registerer.Register(col); err != nil {
			return err
		}
	}
	c.rec, c.names = rec, names
	return nil
}

// queue is one tenant's Kueue object, for writing its weight.
type queue struct {
	obj    client.Object
	weight **kueuev1beta2.FairSharing
}

// cluster reads the capacity, the tenants with their shares, and the
// tenants' queue objects.
func (c *Controller) cluster(ctx context.Context) (ledger.GPUs, map[ledger.TenantID]float64, map[ledger.TenantID]queue, error) {
	var cqs kueuev1beta2.ClusterQueueList
	if err := c.c.List(ctx, &cqs); err != nil {
		return 0, nil, nil, err
	}
	m := c.opts.Capacity
	shares := map[ledger.TenantID]float64{}
	queues := map[ledger.TenantID]queue{}
	var sum int64
	for i := range cqs.Items {
		cq := &cqs.Items[i]
		for _, rg := range cq.Spec.ResourceGroups {
			for _, f := range rg.Flavors {
				for _, r := range f.Resources {
					if r.Name == c.opts.GPU {
						sum += r.NominalQuota.Value()
					}
				}
			}
		}
		if c.opts.Tenancy == ByClusterQueue {
			id := ledger.TenantID(cq.Name)
			shares[id] = shareOf(cq.Annotations)
			queues[id] = queue{obj: cq, weight: &cq.Spec.FairSharing}
		}
	}
	if m == 0 {
		m = ledger.GPUs(min(max(sum, 0), int64(ledger.MaxGPUs)))
	}
	if c.opts.Tenancy == ByLocalQueue {
		var lqs kueuev1beta2.LocalQueueList
		if err := c.c.List(ctx, &lqs); err != nil {
			return 0, nil, nil, err
		}
		for i := range lqs.Items {
			lq := &lqs.Items[i]
			id := LocalQueueTenant(lq.Namespace, lq.Name)
			shares[id] = shareOf(lq.Annotations)
			queues[id] = queue{obj: lq, weight: &lq.Spec.FairSharing}
		}
	}
	return m, shares, queues, nil
}

// Sync runs one period: the ledger's clock, capacity and tenants follow the
// cluster, each queue's weight is rewritten if the map says so, and the
// snapshot is saved.
func (c *Controller) Sync(ctx context.Context) error {
	c.initMu.Lock()
	err := c.initLocked(ctx)
	rec := c.rec
	c.initMu.Unlock()
	if err != nil {
		return err
	}
	m, shares, queues, err := c.cluster(ctx)
	if err != nil {
		return err
	}
	now := c.opts.Clock()
	if err := rec.Sync(now, m, shares); err != nil {
		return err
	}
	var errs []error
	weights := map[ledger.TenantID]float64{}
	for _, t := range rec.Tenants(now) {
		q, ok := queues[t.ID]
		if !ok {
			continue
		}
		fs := *q.weight
		have := fs != nil && fs.Weight != nil
		cur := 1.0
		if have {
			cur = fs.Weight.AsApproximateFloat64()
		}
		w, write := c.opts.Weights.Next(cur, have, c.opts.Weights.Target(t.Share, t.Account.Rho))
		switch {
		case !write || c.opts.NoWrite:
			w = cur
		default:
			if err := c.writeWeight(ctx, q, w); err != nil {
				errs = append(errs, fmt.Errorf("kueue: writing the weight of %s: %w", t.ID, err))
				w = cur
			}
		}
		weights[t.ID] = w
	}
	c.wmu.Lock()
	c.weights = weights
	c.wmu.Unlock()
	if g := c.weightGauge; g != nil {
		g.Reset()
		for id, w := range weights {
			g.WithLabelValues(string(id)).Set(w)
		}
	}
	if c.opts.Snapshot != "" {
		if err := rec.Snapshot(c.opts.Snapshot); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeWeight patches spec.fairSharing.weight of one queue.
func (c *Controller) writeWeight(ctx context.Context, q queue, w float64) error {
	base := q.obj.DeepCopyObject().(client.Object)
	if *q.weight == nil {
		*q.weight = &kueuev1beta2.FairSharing{}
	}
	(*q.weight).Weight = resource.NewMilliQuantity(int64(math.Round(w*1000)), resource.DecimalSI)
	return c.c.Patch(ctx, q.obj, client.MergeFrom(base))
}

// Weights returns the weight each tenant's queue had after the last sync
// (written by it, or left as it was).
func (c *Controller) Weights() map[ledger.TenantID]float64 {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	out := make(map[ledger.TenantID]float64, len(c.weights))
	for k, v := range c.weights {
		out[k] = v
	}
	return out
}
