package kueue

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	corev1 "k8s.io/api/core/v1"

	"github.com/astraea-sched/astraea/ledger"
)

// metricsCertDir is where Kueue's manager reads its metrics certificate
// when it does not manage certificates itself; the path is fixed in Kueue.
const metricsCertDir = "/etc/kueue/metrics/certs"

// needKueue returns the Kueue manager binary ($ASTRAEA_KUEUE_BIN), skipping
// the test when there is none (failing under CI=true).
func needKueue(t *testing.T) string {
	t.Helper()
	needAPIServer(t)
	bin := os.Getenv("ASTRAEA_KUEUE_BIN")
	fail := t.Skipf
	if os.Getenv("CI") == "true" {
		fail = t.Fatalf
	}
	if bin == "" {
		fail("ASTRAEA_KUEUE_BIN is not set: no Kueue manager to test against (.ci/integration.d/kueue.sh builds it)")
	}
	if err := writeCert(metricsCertDir, false); err != nil {
		fail("Kueue's manager needs a certificate in %s: %v", metricsCertDir, err)
	}
	return bin
}

// writeCert writes a self-signed certificate for 127.0.0.1 and localhost to
// dir/tls.crt and dir/tls.key; unless replace, a key already there is kept.
func writeCert(dir string, replace bool) error {
	if !replace {
		if _, err := os.Stat(filepath.Join(dir, "tls.key")); err == nil {
			return nil
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startKueue runs Kueue's manager against env's API server until the test
// ends, with admission fair sharing (the given half-life, sampled every
// second).
func startKueue(t *testing.T, bin string, env *envtest.Environment, c client.Client, halfLife time.Duration) {
	t.Helper()
	dir := t.TempDir()
	user, err := env.AddUser(envtest.User{Name: "kueue", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), kc, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeCert(filepath.Join(dir, "webhook"), true); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: 127.0.0.1:%d
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
integrations:
  frameworks: ["batch/job"]
admissionFairSharing:
  usageHalfLifeTime: %s
  usageSamplingInterval: 1s
`, freePort(t), freePort(t), freePort(t), filepath.Join(dir, "webhook"), halfLife)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kueue-system"}}); err != nil {
		t.Fatal(err)
	}
	logf, err := os.CreateTemp("", "astraea-kueue-manager-*.log") // kept for a post-mortem
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", filepath.Join(dir, "config.yaml"), "--feature-gates=VisibilityOnDemand=false")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "kubeconfig"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Kueue: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			var errs []string
			for _, line := range strings.Split(string(b), "\n") {
				if strings.Contains(line, `"level":"error"`) && len(errs) < 20 {
					errs = append(errs, line)
				}
			}
			t.Logf("Kueue's log (%s), its first errors:\n%s", logf.Name(), strings.Join(errs, "\n"))
		}
	})
}

// admissions records, in the order the API server reports them, the
// Workloads of namespace team whose Admitted condition becomes true.
type admissions struct {
	mu    sync.Mutex
	order []string
	seen  map[string]bool
}

func watchAdmissions(t *testing.T, cfg *rest.Config) *admissions {
	t.Helper()
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: testScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &admissions{seen: map[string]bool{}}
	record := func(wl *kueuev1beta2.Workload) {
		if apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueuev1beta2.WorkloadAdmitted) {
			a.mu.Lock()
			if !a.seen[wl.Name] {
				a.seen[wl.Name] = true
				a.order = append(a.order, wl.Name)
			}
			a.mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the order: watch events, in the API server's order
		defer wg.Done()
		for ctx.Err() == nil {
			w, err := wc.Watch(ctx, &kueuev1beta2.WorkloadList{}, client.InNamespace("team"))
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				if wl, ok := ev.Object.(*kueuev1beta2.Workload); ok && ev.Type != watch.Deleted {
					record(wl)
				}
			}
			w.Stop()
		}
	}()
	go func() { // a safety net should a watch end and miss an event
		defer wg.Done()
		for ctx.Err() == nil {
			var list kueuev1beta2.WorkloadList
			if err := wc.List(ctx, &list, client.InNamespace("team")); err == nil {
				for i := range list.Items {
					record(&list.Items[i])
				}
			}
			time.Sleep(time.Second)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return a
}

// among returns the admitted workloads of names, in admission order.
func (a *admissions) among(names []string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	in := map[string]bool{}
	for _, n := range names {
		in[n] = true
	}
	var out []string
	for _, n := range a.order {
		if in[n] {
			out = append(out, n)
		}
	}
	return out
}

func names(prefix string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

// finish marks workloads finished, as their jobs would on success.
func finish(t *testing.T, c client.Client, ns []string) {
	t.Helper()
	ctx := context.Background()
	for _, n := range ns {
		for try := 0; ; try++ {
			var wl kueuev1beta2.Workload
			if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: n}, &wl); err != nil {
				t.Fatal(err)
			}
			apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{
				Type: kueuev1beta2.WorkloadFinished, Status: metav1.ConditionTrue,
				Reason: kueuev1beta2.WorkloadFinishedReasonSucceeded, Message: "done",
			})
			err := c.Status().Update(ctx, &wl)
			if err == nil {
				break
			}
			if !apierrors.IsConflict(err) || try > 20 {
				t.Fatalf("finishing %s: %v", n, err)
			}
		}
	}
}

// scenarioResult is what runScenario saw: the admission order of the
// eight waiting workloads, and at the decision the ledger's ρ (with the
// controller), the queues' weights and Kueue's decayed usage.
type scenarioResult struct {
	order   []string
	rho     map[ledger.TenantID]ledger.Rho
	weights map[string]string
	usage   map[string]string
}

// runScenario is the measured example of docs/kueue.md: two LocalQueues
// share a ClusterQueue of 4 GPUs under Kueue's admission fair sharing.
// Queue qa fills it for starve while qb waits with four workloads; then qb
// runs for serve while qa waits with four more; then qb submits four more
// and its running ones finish, and Kueue fills the 4 freed GPUs from the
// eight waiting workloads.
func runScenario(t *testing.T, withController bool, starve, serve, halfLife time.Duration) scenarioResult {
	bin := needKueue(t)
	env, cfg, c := startAPIServer(t)
	ctx := context.Background()
	queues(t, c, "team", 4, "qa", "qb")
	startKueue(t, bin, env, c, halfLife)
	adm := watchAdmissions(t, cfg)
	var ctl *Controller
	if withController {
		ctl, _ = startController(t, cfg, Options{Period: time.Second})
	}
	create := func(ns []string, q string) {
		t.Helper()
		for _, n := range ns {
			wl := &kueuev1beta2.Workload{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: n},
				Spec:       kueuev1beta2.WorkloadSpec{QueueName: kueuev1beta2.LocalQueueName(q), PodSets: podSets(1)},
			}
			if err := c.Create(ctx, wl); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond) // distinct creation order
		}
	}
	admitted := func(ns []string, what string) {
		t.Helper()
		eventually(t, 2*time.Minute, what, func() bool { return len(adm.among(ns)) == len(ns) })
	}
	a1, b1, a2, b2 := names("a", 1, 4), names("b", 1, 4), names("a", 5, 8), names("b", 5, 8)
	create(a1, "qa")
	admitted(a1, "qa's first workloads admitted")
	create(b1, "qb")
	time.Sleep(starve)
	finish(t, c, a1)
	admitted(b1, "qb's first workloads admitted")
	create(a2, "qa")
	time.Sleep(serve)
	create(b2, "qb")
	time.Sleep(1500 * time.Millisecond) // a sync of the controller sees qb's new demand
	res := scenarioResult{rho: map[ledger.TenantID]ledger.Rho{}, weights: map[string]string{}, usage: map[string]string{}}
	for _, q := range []string{"qa", "qb"} {
		var lq kueuev1beta2.LocalQueue
		if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: q}, &lq); err != nil {
			t.Fatal(err)
		}
		res.weights[q] = "1 (unset)"
		if lq.Spec.FairSharing != nil && lq.Spec.FairSharing.Weight != nil {
			res.weights[q] = lq.Spec.FairSharing.Weight.String()
		}
		if fs := lq.Status.FairSharing; fs != nil && fs.AdmissionFairSharingStatus != nil {
			u := fs.AdmissionFairSharingStatus.ConsumedResources[DefaultGPU]
			res.usage[q] = u.String()
		}
	}
	if ctl != nil {
		for _, s := range ctl.Recorder().Tenants(time.Now()) {
			res.rho[s.ID] = s.Account.Rho
		}
	}
	finish(t, c, b1)
	waiting := append(append([]string{}, a2...), b2...)
	eventually(t, 60*time.Second, "four of the waiting workloads admitted", func() bool { return len(adm.among(waiting)) >= 4 })
	time.Sleep(500 * time.Millisecond)
	res.order = adm.among(waiting)
	return res
}

// TestE2EAdmissionOrder runs the real Kueue manager with and without the
// controller on the same history and asserts that the controller's weights
// make Kueue admit the starved queue's workloads first, where Kueue's own
// decayed usage admits the other queue's.
func TestE2EAdmissionOrder(t *testing.T) {
	const starve, serve, halfLife = 30 * time.Second, 10 * time.Second, 10 * time.Second
	report := func(label string, r scenarioResult) {
		t.Logf("%s: admitted %s; weights qa=%s qb=%s; Kueue's decayed GPU usage qa=%s qb=%s; ρ %v",
			label, strings.Join(r.order, " "), r.weights["qa"], r.weights["qb"], r.usage["qa"], r.usage["qb"], r.rho)
	}
	var without, with scenarioResult
	t.Run("without the controller", func(t *testing.T) {
		without = runScenario(t, false, starve, serve, halfLife)
		report("without", without)
		if !all(without.order, "a") {
			t.Fatalf("without the controller Kueue admitted %v; the example expects qa's four (its decayed usage is lower)", without.order)
		}
	})
	t.Run("with the controller", func(t *testing.T) {
		with = runScenario(t, true, starve, serve, halfLife)
		report("with", with)
		if !all(with.order, "b") {
			t.Fatalf("with the controller Kueue admitted %v, want qb's four (ρ %v)", with.order, with.rho)
		}
		if !(with.rho["team/qb"] < 1 && with.rho["team/qa"] > 1) {
			t.Fatalf("ρ %v: want qb below 1 and qa above", with.rho)
		}
	})
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "without: %s\nwith: %s\n", strings.Join(without.order, " "), strings.Join(with.order, " "))
	if p := os.Getenv("ASTRAEA_KUEUE_REPORT"); p != "" {
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// all reports whether order holds four workloads, all named with prefix.
func all(order []string, prefix string) bool {
	if len(order) != 4 {
		return false
	}
	for _, n := range order {
		if !strings.HasPrefix(n, prefix) {
			return false
		}
	}
	return true
}
