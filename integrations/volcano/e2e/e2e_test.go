// Package e2e runs vc-scheduler, Volcano's scheduler with the astraea
// plugin, against a real kube-apiserver and etcd that the test starts:
// Volcano's CRDs are installed from the volcano.sh/volcano module, Nodes are
// plain API objects with nvidia.com/gpu capacity (no kubelet: the test marks
// pods Succeeded itself), and the test watches the order in which the
// PodGroups' pods are bound.
//
// It needs the binaries that .ci/lib/kube.sh provides:
// ASTRAEA_KUBE_APISERVER and ASTRAEA_ETCD (paths). ASTRAEA_VC_SCHEDULER
// names a built vc-scheduler; without it the test builds one. Without the
// control plane the test is skipped, except under CI=true, where it fails.
package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
	schedv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	vcclient "volcano.sh/apis/pkg/client/clientset/versioned"
)

const (
	token   = "astraea-e2e-token"
	ns      = "default"
	jobTime = 3 * time.Second // how long each job "runs" once bound
)

// binaries returns the paths of kube-apiserver and etcd, or skips.
func binaries(t *testing.T) (apiserver, etcd string) {
	apiserver, etcd = os.Getenv("ASTRAEA_KUBE_APISERVER"), os.Getenv("ASTRAEA_ETCD")
	if apiserver == "" || etcd == "" {
		msg := "ASTRAEA_KUBE_APISERVER and ASTRAEA_ETCD are not set: run .ci/integration.d/volcano.sh (it sources .ci/lib/kube.sh)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return apiserver, etcd
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

// start runs a process until the test ends, its output in dir/name.log,
// shown when the test fails.
func start(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	logPath := filepath.Join(dir, filepath.Base(name)+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); f.Close(); close(done) }()
	t.Cleanup(func() {
		exited := false
		select {
		case <-done:
			exited = true
		default:
		}
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			if exited {
				t.Logf("%s had exited before the test ended: %v", name, waitErr)
			}
			b, _ := os.ReadFile(logPath)
			if len(b) > 6000 {
				b = b[len(b)-6000:]
			}
			t.Logf("---- last of %s:\n%s", logPath, b)
		}
	})
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// controlPlane starts etcd and kube-apiserver and returns a client config.
func controlPlane(t *testing.T, dir string) *rest.Config {
	apiserver, etcd := binaries(t)
	etcdPort, peerPort, apiPort := freePort(t), freePort(t), freePort(t)
	start(t, dir, etcd,
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPort),
		"--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPort),
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peerPort),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peerPort),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", peerPort),
		"--unsafe-no-fsync")

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	saKey, saPub := filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	writeFile(t, saKey, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})))
	writeFile(t, saPub, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})))
	tokens := filepath.Join(dir, "tokens.csv")
	writeFile(t, tokens, token+",admin,admin,system:masters\n")
	start(t, dir, apiserver,
		"--etcd-servers", fmt.Sprintf("http://127.0.0.1:%d", etcdPort),
		"--bind-address", "127.0.0.1",
		"--secure-port", fmt.Sprint(apiPort),
		"--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", tokens,
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", saPub,
		"--service-account-signing-key-file", saKey,
		"--service-cluster-ip-range", "10.0.0.0/24",
		// no controller-manager creates service accounts
		"--disable-admission-plugins", "ServiceAccount")

	cfg := &rest.Config{
		Host:            fmt.Sprintf("https://127.0.0.1:%d", apiPort),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             100,
		Burst:           200,
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "kube-apiserver /readyz", func() error {
		resp, err := hc.Get(cfg.Host + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	})
	return cfg
}

func eventually(t *testing.T, limit time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, limit, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// installCRDs creates Volcano's CRDs from the volcano.sh/volcano module
// this module builds with, and waits until they are served.
func installCRDs(t *testing.T, cfg *rest.Config) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "volcano.sh/volcano").Output()
	if err != nil {
		t.Fatalf("finding the volcano.sh/volcano module: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "volcano", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in the volcano.sh/volcano module: %v", err)
	}
	dc := dynamic.NewForConfigOrDie(cfg)
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(b, &obj); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := dc.Resource(crds).Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating the CRD of %s: %v", filepath.Base(f), err)
		}
	}
	vc := vcclient.NewForConfigOrDie(cfg)
	eventually(t, 30*time.Second, "Volcano's CRDs served", func() error {
		if _, err := vc.SchedulingV1beta1().Queues().List(context.Background(), metav1.ListOptions{}); err != nil {
			return err
		}
		_, err := vc.SchedulingV1beta1().PodGroups(ns).List(context.Background(), metav1.ListOptions{})
		return err
	})
}

// vcScheduler returns a built vc-scheduler binary.
func vcScheduler(t *testing.T, dir string) string {
	if p := os.Getenv("ASTRAEA_VC_SCHEDULER"); p != "" {
		return p
	}
	bin := filepath.Join(dir, "vc-scheduler")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/vc-scheduler")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/vc-scheduler: %v\n%s", err, out)
	}
	return bin
}

const (
	schedulerConf = `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: astraea
    arguments:
      astraea.mode: eq16
      astraea.lease: 15m
`
	schedulerConfWithout = `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
`
)

func kubeconfig(cfg *rest.Config) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: admin}
current-context: e2e
`, cfg.Host, token)
}

func gpuRequest(gpus int) v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("100m"),
		v1.ResourceMemory: resource.MustParse("64Mi"),
		"nvidia.com/gpu":  resource.MustParse(fmt.Sprint(gpus)),
	}
}

func createNode(t *testing.T, kc kubernetes.Interface, name string, gpus int) {
	ctx := context.Background()
	n, err := kc.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	capacity := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("32"),
		v1.ResourceMemory: resource.MustParse("128Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
		"nvidia.com/gpu":  resource.MustParse(fmt.Sprint(gpus)),
	}
	n.Status = v1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
	}
	n, err = kc.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The API server taints a new node not-ready until its kubelet
	// reports; there is no kubelet, and the node is ready.
	n.Spec.Taints = nil
	if _, err := kc.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createQueue(t *testing.T, vc vcclient.Interface, name string, weight int32) {
	q := &schedv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedv1beta1.QueueSpec{Weight: weight, Reclaimable: new(bool)}}
	if _, err := vc.SchedulingV1beta1().Queues().Create(context.Background(), q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createGang creates a PodGroup of `tasks` pods with `each` GPUs in queue.
func createGang(t *testing.T, kc kubernetes.Interface, vc vcclient.Interface, name, queue string, tasks, each int) {
	ctx := context.Background()
	pg := &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       schedv1beta1.PodGroupSpec{MinMember: int32(tasks), Queue: queue},
	}
	if _, err := vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range tasks {
		pod := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("%s-%d", name, i), Namespace: ns,
				Annotations: map[string]string{schedv1beta1.KubeGroupNameAnnotationKey: name},
				Labels:      map[string]string{"astraea-e2e/gang": name},
			},
			Spec: v1.PodSpec{
				SchedulerName: "volcano",
				Containers: []v1.Container{{Name: "work", Image: "registry.invalid/none",
					Resources: v1.ResourceRequirements{Requests: gpuRequest(each), Limits: gpuRequest(each)}}},
			},
		}
		if _, err := kc.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBindingOrder: one node with 4 GPUs, every gang takes all of it (two
// pods × 2 GPUs) for jobTime. Queue qa submits three gangs at once; queue
// qb, two gangs a little later, while qa's second runs. Volcano without the
// plugin orders queues of equal standing by creation and name, so it runs
// a1 a2 a3 b1 b2. With the plugin, qb was owed a third of the cluster (the
// default queue is the third tenant) all along and received nothing, so
// once qb has work it catches up: its two gangs run before qa's third.
func TestBindingOrder(t *testing.T) {
	for name, tc := range map[string]struct {
		conf string
		want []string
	}{
		"without the plugin qa's gangs run first":      {schedulerConfWithout, []string{"a1", "a2", "a3", "b1", "b2"}},
		"with the plugin the starved queue catches up": {schedulerConf, []string{"a1", "a2", "b1", "b2", "a3"}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := bindingOrder(t, tc.conf); !slices.Equal(got, tc.want) {
				t.Fatalf("binding order %v, want %v", got, tc.want)
			}
		})
	}
}

// bindingOrder runs the scenario of TestBindingOrder with a scheduler
// configuration and returns the order in which the gangs were bound.
func bindingOrder(t *testing.T, schedulerConf string) []string {
	dir := t.TempDir()
	cfg := controlPlane(t, dir)
	installCRDs(t, cfg)
	kc := kubernetes.NewForConfigOrDie(cfg)
	vc := vcclient.NewForConfigOrDie(cfg)
	createNode(t, kc, "gpu-node-1", 4)
	createQueue(t, vc, "qa", 1)
	createQueue(t, vc, "qb", 1)

	// vc-scheduler reloads its configuration on every change in the
	// file's directory: keep it away from the logs.
	confDir := filepath.Join(dir, "conf")
	if err := os.Mkdir(confDir, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(confDir, "scheduler.conf")
	writeFile(t, conf, schedulerConf)
	kubecfg := filepath.Join(dir, "kubeconfig")
	writeFile(t, kubecfg, kubeconfig(cfg))
	start(t, dir, vcScheduler(t, dir),
		"--kubeconfig", kubecfg, "--scheduler-conf", conf, "--schedule-period", "500ms",
		"--leader-elect=false", "--listen-address", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"--healthz-address", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--cache-dumper=false", "-v", "3")

	for _, g := range []string{"a1", "a2", "a3"} {
		createGang(t, kc, vc, g, "qa", 2, 2)
	}
	w := &watcher{kc: kc, t: t, boundAt: map[string]time.Time{}}
	// qb's work arrives once a2 runs
	w.until(t, 60*time.Second, func() bool { return w.has("a2") })
	for _, g := range []string{"b1", "b2"} {
		createGang(t, kc, vc, g, "qb", 2, 2)
	}
	w.until(t, 90*time.Second, func() bool { return len(w.order) == 5 })
	t.Logf("binding order: %s", strings.Join(w.order, " "))
	return w.order
}

// watcher finishes every gang jobTime after all its pods are bound, the way
// a kubelet would report the pods Succeeded, and records the gangs in the
// order they were bound.
type watcher struct {
	t       *testing.T
	kc      kubernetes.Interface
	order   []string
	boundAt map[string]time.Time
	done    map[string]bool
}

func (w *watcher) has(g string) bool { _, ok := w.boundAt[g]; return ok }

// until polls the pods every 100 ms, binding-order bookkeeping and job
// ends included, until cond holds.
func (w *watcher) until(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	if w.done == nil {
		w.done = map[string]bool{}
	}
	ctx := context.Background()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s; bound so far: %v", limit, w.order)
		}
		pods, err := w.kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		gangs := map[string][]v1.Pod{}
		for _, p := range pods.Items {
			g := p.Labels["astraea-e2e/gang"]
			gangs[g] = append(gangs[g], p)
		}
		for _, g := range slices.Sorted(maps.Keys(gangs)) {
			ps := gangs[g]
			if !w.has(g) && allBound(ps) {
				w.boundAt[g] = time.Now()
				w.order = append(w.order, g)
				t.Logf("%s: gang %s bound to %s", time.Now().Format("15:04:05.000"), g, ps[0].Spec.NodeName)
			}
			if w.has(g) && !w.done[g] && time.Since(w.boundAt[g]) >= jobTime {
				for i := range ps {
					ps[i].Status.Phase = v1.PodSucceeded
					if _, err := w.kc.CoreV1().Pods(ns).UpdateStatus(ctx, &ps[i], metav1.UpdateOptions{}); err != nil {
						t.Fatalf("marking %s Succeeded: %v", ps[i].Name, err)
					}
				}
				w.done[g] = true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func allBound(ps []v1.Pod) bool {
	for _, p := range ps {
		if p.Spec.NodeName == "" {
			return false
		}
	}
	return len(ps) > 0
}
