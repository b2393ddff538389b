// Command astraea-kueue runs the controller of package kueue: it records the
// Workloads Kueue admits in an astraea ledger and writes each queue's
// spec.fairSharing.weight from the queue's long-term fairness ratio ρ.
//
// Usage:
//
//	astraea-kueue [flags]
//
// It reads the cluster's configuration as controller-runtime does
// (--kubeconfig, in-cluster, $KUBECONFIG) and serves the ledger's gauges on
// --metrics-bind-address. Run one replica, or several with
// --leader-elect: only the leader records and writes.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/astraea-sched/astraea/integrations/kueue"
	"github.com/astraea-sched/astraea/ledger"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "astraea-kueue:", err)
		os.Exit(1)
	}
}

// config is what the flags say.
type config struct {
	opts                   kueue.Options
	metricsAddr, probeAddr string
	leaderElect            bool
	leaderNamespace        string
}

// errUsage marks a bad flag value.
var errUsage = errors.New("bad flag")

func parse(args []string, zo *zap.Options) (config, error) {
	fs := flag.NewFlagSet("astraea-kueue", flag.ContinueOnError)
	var c config
	def := kueue.DefaultWeightMap()
	tenancy := fs.String("tenant", "LocalQueue", "which queue is a tenant: LocalQueue or ClusterQueue")
	gpu := fs.String("gpu-resource", string(kueue.DefaultGPU), "the resource counted as GPUs")
	mode := fs.String("mode", "demand", "tenant fair share: demand (Eq. 8, owed only while it has work) or quota (Eq. 16, owed always)")
	halfLife := fs.Duration("half-life", 0, "discount old service with this half-life (0: remember everything)")
	window := fs.Duration("window", 0, "remember only this trailing window (0: remember everything)")
	capacity := fs.Int("capacity", 0, "cluster GPUs M (0: the sum of the ClusterQueues' GPU nominal quotas)")
	fs.DurationVar(&c.opts.Period, "period", 30*time.Second, "how often weights are written and the snapshot saved")
	fs.Float64Var(&c.opts.Weights.Base, "weight-base", def.Base, "weight of a tenant of share 1 at ρ = 1")
	fs.Float64Var(&c.opts.Weights.MaxFactor, "weight-max-factor", def.MaxFactor, "bound R: weights stay within [base/R, base·R] × share")
	fs.Float64Var(&c.opts.Weights.Band, "weight-band", def.Band, "hysteresis: rewrite a weight only when it changes by this fraction")
	fs.StringVar(&c.opts.Snapshot, "snapshot", "", "save the ledger to this file every period and restore it at start")
	fs.BoolVar(&c.opts.NoWrite, "dry-run", false, "record and report, but write no weights")
	fs.StringVar(&c.metricsAddr, "metrics-bind-address", ":8080", "where the metrics are served (0 to turn off)")
	fs.StringVar(&c.probeAddr, "health-probe-bind-address", ":8081", "where /healthz and /readyz are served")
	fs.BoolVar(&c.leaderElect, "leader-elect", false, "elect a leader among replicas")
	fs.StringVar(&c.leaderNamespace, "leader-election-namespace", "", "namespace of the leader-election lease (default: the pod's)")
	zo.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch strings.ToLower(*tenancy) {
	case "localqueue":
		c.opts.Tenancy = kueue.ByLocalQueue
	case "clusterqueue":
		c.opts.Tenancy = kueue.ByClusterQueue
	default:
		return c, fmt.Errorf("%w: -tenant %q: want LocalQueue or ClusterQueue", errUsage, *tenancy)
	}
	switch *mode {
	case "demand":
		c.opts.Mode = ledger.DemandAware
	case "quota":
		c.opts.Mode = ledger.QuotaShare
	default:
		return c, fmt.Errorf("%w: -mode %q: want demand or quota", errUsage, *mode)
	}
	switch {
	case *halfLife < 0 || *window < 0:
		return c, fmt.Errorf("%w: -half-life and -window must be ≥ 0", errUsage)
	case *halfLife > 0 && *window > 0:
		return c, fmt.Errorf("%w: -half-life and -window exclude each other", errUsage)
	case *halfLife > 0:
		c.opts.History = ledger.HalfLife(*halfLife)
	case *window > 0:
		c.opts.History = ledger.TrailingWindow(*window)
	}
	if *capacity < 0 || int64(*capacity) > int64(ledger.MaxGPUs) {
		return c, fmt.Errorf("%w: -capacity %d out of range", errUsage, *capacity)
	}
	if c.opts.Period <= 0 {
		return c, fmt.Errorf("%w: -period %s must be > 0", errUsage, c.opts.Period)
	}
	c.opts.Capacity = ledger.GPUs(*capacity)
	c.opts.GPU = corev1.ResourceName(*gpu)
	return c, nil
}

func run(args []string) error {
	zo := zap.Options{}
	c, err := parse(args, &zo)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zo)))
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := kueuev1beta2.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: c.metricsAddr},
		HealthProbeBindAddress:  c.probeAddr,
		LeaderElection:          c.leaderElect,
		LeaderElectionID:        "astraea-kueue",
		LeaderElectionNamespace: c.leaderNamespace,
	})
	if err != nil {
		return err
	}
	c.opts.Registerer = metrics.Registry
	ctl, err := kueue.New(mgr.GetClient(), c.opts)
	if err != nil {
		return err
	}
	if err := ctl.SetupWithManager(mgr); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
