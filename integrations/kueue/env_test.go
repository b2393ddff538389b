package kueue

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// needAPIServer skips a test when no API server binaries are at hand
// (KUBEBUILDER_ASSETS unset) and fails it under CI=true, where they must be.
func needAPIServer(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no API server")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") != "" {
		return
	}
	msg := "KUBEBUILDER_ASSETS is not set: no kube-apiserver and etcd to test against (.ci/integration.d/kueue.sh sets them up)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// kueueCRDs is the directory of the CRDs that the kueue module in use
// ships, found in the module cache rather than copied here.
func kueueCRDs(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kueue").Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/kueue: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "components", "crd", "bases")
	if _, err := os.Stat(filepath.Join(dir, "kueue.x-k8s.io_workloads.yaml")); err != nil {
		t.Fatalf("kueue CRDs: %v", err)
	}
	return dir
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := kueuev1beta2.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// quiet silences controller-runtime's own logging in tests.
var quiet sync.Once

// startAPIServer runs etcd and kube-apiserver with Kueue's CRDs until the
// test ends.
func startAPIServer(t *testing.T) (*envtest.Environment, *rest.Config, client.Client) {
	t.Helper()
	needAPIServer(t)
	quiet.Do(func() { ctrllog.SetLogger(logr.Discard()) })
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{kueueCRDs(t)},
		ErrorIfCRDPathMissing: true,
		// a loaded machine takes its time to serve eleven CRDs
		CRDInstallOptions: envtest.CRDInstallOptions{MaxTime: 2 * time.Minute},
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the API server: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("stopping the API server: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{Scheme: testScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	return env, cfg, c
}

// startController runs our controller in a manager of its own until stop is
// called or the test ends.
func startController(t *testing.T, cfg *rest.Config, opts Options) (ctl *Controller, stop func()) {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 testScheme(t),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err = New(mgr.GetClient(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
	t.Cleanup(stop)
	return ctl, stop
}

// eventually polls f every 50 ms until it returns true or d passes.
func eventually(t *testing.T, d time.Duration, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// queues creates namespace ns, a ResourceFlavor, a ClusterQueue "cq" with
// gpus GPUs under admission fair sharing, and the LocalQueues lqs on it.
func queues(t *testing.T, c client.Client, ns string, gpus int64, lqs ...string) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	must(c.Create(ctx, &kueuev1beta2.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "default"}}))
	must(c.Create(ctx, &kueuev1beta2.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: "cq"},
		Spec: kueuev1beta2.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			QueueingStrategy:  kueuev1beta2.BestEffortFIFO,
			AdmissionScope:    &kueuev1beta2.AdmissionScope{AdmissionMode: kueuev1beta2.UsageBasedAdmissionFairSharing},
			ResourceGroups: []kueuev1beta2.ResourceGroup{{
				CoveredResources: []corev1.ResourceName{DefaultGPU},
				Flavors: []kueuev1beta2.FlavorQuotas{{Name: "default", Resources: []kueuev1beta2.ResourceQuota{
					{Name: DefaultGPU, NominalQuota: *resource.NewQuantity(gpus, resource.DecimalSI)},
				}}},
			}},
		},
	}))
	for _, q := range lqs {
		must(c.Create(ctx, &kueuev1beta2.LocalQueue{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: q},
			Spec:       kueuev1beta2.LocalQueueSpec{ClusterQueue: "cq"},
		}))
	}
}

// podSets is one pod asking for gpus GPUs, with everything the API server
// requires of a pod template.
func podSets(gpus int64) []kueuev1beta2.PodSet {
	return []kueuev1beta2.PodSet{{
		Name:  "main",
		Count: 1,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{DefaultGPU: *resource.NewQuantity(gpus, resource.DecimalSI)},
					Limits:   corev1.ResourceList{DefaultGPU: *resource.NewQuantity(gpus, resource.DecimalSI)},
				},
			}},
		}},
	}}
}
