package volcano_test

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	schedulingv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	"volcano.sh/volcano/cmd/scheduler/app/options"
	"volcano.sh/volcano/pkg/scheduler/actions/allocate"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
	"volcano.sh/volcano/pkg/scheduler/plugins/gang"
	"volcano.sh/volcano/pkg/scheduler/uthelper"
	"volcano.sh/volcano/pkg/scheduler/util"

	"github.com/astraea-sched/astraea/integrations/volcano"
	"github.com/astraea-sched/astraea/ledger"
)

// These tests run Volcano's own allocate action, through its uthelper
// harness, with the gang plugin and the astraea plugin enabled: the binds
// they check are the ones Volcano's scheduler would send.

const ns = "default"

// TestMain sets Volcano's process-wide scheduler options, which the
// allocate action reads (how many feasible nodes to look for).
func TestMain(m *testing.M) {
	options.Default()
	os.Exit(m.Run())
}

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// cluster is the state one session sees; a test changes it between
// sessions the way the cluster would (pods bound, pods finished).
type cluster struct {
	nodes  []*v1.Node
	queues []*schedulingv1beta1.Queue
	groups []*schedulingv1beta1.PodGroup
	pods   []*v1.Pod
}

func gpuList(gpus int) v1.ResourceList {
	return v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse(fmt.Sprint(gpus)),
		v1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dGi", gpus)),
		"nvidia.com/gpu":  resource.MustParse(fmt.Sprint(gpus)),
	}
}

// node adds a node with n GPUs (and room for 110 pods).
func (c *cluster) node(name string, n int) {
	alloc := gpuList(n)
	alloc[v1.ResourcePods] = resource.MustParse("110")
	c.nodes = append(c.nodes, util.BuildNode(name, alloc, nil))
}

func (c *cluster) queue(name string, weight int32) {
	c.queues = append(c.queues, util.BuildQueue(name, weight, nil))
}

// gang adds a PodGroup of `tasks` pods with `each` GPUs each, all of which
// must run together; bound to a node (and running) when node is not "".
func (c *cluster) gang(name, queue string, tasks, each int, node string) {
	pg := util.BuildPodGroup(name, ns, queue, int32(tasks), nil, schedulingv1beta1.PodGroupInqueue)
	c.groups = append(c.groups, pg)
	phase := v1.PodPending
	if node != "" {
		phase = v1.PodRunning
	}
	for i := range tasks {
		c.pods = append(c.pods, util.BuildPod(ns, fmt.Sprintf("%s-%d", name, i), node, phase, gpuList(each), name, nil, nil))
	}
}

// finish marks every pod of a gang Succeeded.
func (c *cluster) finish(name string) {
	for _, p := range c.pods {
		if p.Annotations[schedulingv1beta1.KubeGroupNameAnnotationKey] == name {
			p.Status.Phase = v1.PodSucceeded
		}
	}
}

// bind records the binds of a session in the cluster, as the API server would.
func (c *cluster) bind(binds map[string]string) {
	for _, p := range c.pods {
		if n, ok := binds[ns+"/"+p.Name]; ok {
			p.Spec.NodeName, p.Status.Phase = n, v1.PodRunning
		}
	}
}

func on() *bool { b := true; return &b }

// tiers is gang, then astraea, as in config/volcano-scheduler.conf.
func tiers(args framework.Arguments) []conf.Tier {
	opt := func(name string) conf.PluginOption {
		return conf.PluginOption{
			Name: name, EnabledJobOrder: on(), EnabledJobReady: on(), EnabledJobPipelined: on(),
			EnabledQueueOrder: on(), EnabledTaskOrder: on(),
		}
	}
	a := opt(volcano.Name)
	a.Arguments = args
	return []conf.Tier{{Plugins: []conf.PluginOption{opt("gang")}}, {Plugins: []conf.PluginOption{a}}}
}

// session runs one allocate session over c with builder b (nil: without
// the astraea plugin), checks that Volcano's binder received exactly the
// binds the session committed, records them in c and returns them, ns/pod →
// node.
func session(t *testing.T, c *cluster, b *volcano.Builder, args framework.Arguments) map[string]string {
	t.Helper()
	plugins := map[string]framework.PluginBuilder{"gang": gang.New}
	if b != nil {
		plugins[volcano.Name] = b.Build
	}
	test := uthelper.TestCommonStruct{
		Name:      t.Name(),
		Plugins:   plugins,
		Pods:      c.pods,
		Nodes:     c.nodes,
		PodGroups: c.groups,
		Queues:    c.queues,
	}
	ssn := test.RegisterSession(tiers(args), nil)
	defer test.Close()
	test.Run([]framework.Action{allocate.New()})
	binds := map[string]string{}
	for _, j := range ssn.Jobs {
		for _, task := range j.Tasks {
			if task.Status == api.Binding {
				binds[task.Namespace+"/"+task.Name] = task.NodeName
			}
		}
	}
	test.ExpectBindMap, test.ExpectBindsNum = binds, len(binds)
	if err := test.CheckBind(0); err != nil {
		t.Fatal(err)
	}
	c.bind(binds)
	return binds
}

// pods returns the sorted pod names of binds.
func pods(binds map[string]string) []string {
	return slices.Sorted(maps.Keys(binds))
}

// servedHour is the history of the first tests: on one 4-GPU node, queue qa
// ran a 4-GPU gang for an hour while qb had nothing, so qa's ρ is 2 and qb's
// 0 under Eq. 16 with equal weights. Then each queue submits a 4-GPU gang.
func servedHour(t *testing.T, b *volcano.Builder, args framework.Arguments, now *time.Time) *cluster {
	c := &cluster{}
	c.node("n1", 4)
	c.queue("qa", 1)
	c.queue("qb", 1)
	c.gang("a1", "qa", 2, 2, "n1")
	*now = t0
	expect(t, session(t, c, b, args))
	*now = t0.Add(time.Hour)
	c.finish("a1")
	c.gang("a2", "qa", 2, 2, "")
	c.gang("b1", "qb", 2, 2, "")
	return c
}

// expect fails unless exactly the pods named were bound.
func expect(t *testing.T, binds map[string]string, want ...string) {
	t.Helper()
	for i := range want {
		want[i] = ns + "/" + want[i]
	}
	slices.Sort(want)
	if got := pods(binds); !slices.Equal(got, want) {
		t.Fatalf("bound %v, want %v", got, want)
	}
}

func TestAllocate(t *testing.T) {
	for name, tc := range map[string]struct {
		plugin bool
		want   []string
	}{
		// Volcano's own tie-break (queue name) serves qa: the test would
		// fail if the plugin's order were not used.
		"without the plugin, the first queue by name is served": {false, []string{"a2-0", "a2-1"}},
		"the queue with the lower ρ has its gang bound first":   {true, []string{"b1-0", "b1-1"}},
	} {
		t.Run(name, func(t *testing.T) {
			var now time.Time
			b := volcano.NewBuilder(func() time.Time { return now })
			c := servedHour(t, b, nil, &now)
			if !tc.plugin {
				b = nil
			}
			expect(t, session(t, c, b, nil), tc.want...)
		})
	}
}

func TestGangThatDoesNotFitDoesNotBlockOtherQueue(t *testing.T) {
	var now time.Time
	b := volcano.NewBuilder(func() time.Time { return now })
	c := servedHour(t, b, nil, &now)
	// qb, the lower ρ, asks for 8 GPUs on the 4-GPU node instead.
	c.groups, c.pods = c.groups[:len(c.groups)-1], c.pods[:len(c.pods)-2]
	c.gang("b-big", "qb", 2, 4, "")
	expect(t, session(t, c, b, nil), "a2-0", "a2-1")
	var rhoA, rhoB ledger.Rho
	b.Read(func(l *ledger.Ledger) {
		v := l.View(l.Now())
		a, _ := v.TenantAccount("qa")
		bb, _ := v.TenantAccount("qb")
		rhoA, rhoB = a.Rho, bb.Rho
	})
	if rhoB.Compare(rhoA) >= 0 {
		t.Fatalf("qb's ρ %s is not below qa's %s: the test does not test what it says", rhoB, rhoA)
	}
}

func TestPreCreditInterleavesQueuesInOneSession(t *testing.T) {
	for name, tc := range map[string]struct {
		lease string
		want  []string
	}{
		// Both queues are new (ρ 1 each): without pre-credit the first
		// by name takes both nodes; with it, qa's first gang makes qa
		// served and qb's gang gets the other node.
		"without pre-credit one queue takes every free GPU": {"0s", []string{"a1-0", "a2-0"}},
		"a full lease of pre-credit hands the next pick on": {"15m", []string{"a1-0", "b1-0"}},
	} {
		t.Run(name, func(t *testing.T) {
			now := t0
			b := volcano.NewBuilder(func() time.Time { return now })
			c := &cluster{}
			c.node("n1", 4)
			c.node("n2", 4)
			c.queue("qa", 1)
			c.queue("qb", 1)
			c.gang("a1", "qa", 1, 4, "")
			c.gang("a2", "qa", 1, 4, "")
			c.gang("b1", "qb", 1, 4, "")
			expect(t, session(t, c, b, framework.Arguments{volcano.ArgLease: tc.lease}), tc.want...)
		})
	}
}

func TestNewJobsFirstInsideAQueue(t *testing.T) {
	var now time.Time
	b := volcano.NewBuilder(func() time.Time { return now })
	c := &cluster{}
	c.node("n1", 4)
	c.queue("qa", 1)
	c.gang("old", "qa", 1, 4, "n1")
	c.gang("filler", "qa", 1, 4, "")
	now = t0
	expect(t, session(t, c, b, nil))
	// After 10 min old is preempted (its pod pending and unbound again)
	// and filler, owed half the node all along, runs.
	now = t0.Add(10 * time.Minute)
	c.pods[0].Spec.NodeName, c.pods[0].Status.Phase = "", v1.PodPending
	expect(t, session(t, c, b, nil), "filler-0")
	// Twenty minutes on filler is done and a new job arrives. old was
	// owed half the node for 30 min and held all of it for 10 (ρ 2/3),
	// the new job was owed nothing yet (ρ 1), and old is first by id:
	// only "new jobs first" serves z-new.
	now = t0.Add(30 * time.Minute)
	c.finish("filler")
	c.gang("z-new", "qa", 1, 4, "")
	expect(t, session(t, c, b, nil), "z-new-0")
	var rho ledger.Rho
	b.Read(func(l *ledger.Ledger) {
		a, _ := l.View(l.Now()).JobAccount("default/old")
		rho = a.Rho
	})
	if math.Abs(float64(rho)-2.0/3) > 1e-9 {
		t.Fatalf("old's ρ = %s, want 0.6667: the test does not test what it says", rho)
	}
}

func TestRestartFromSnapshotKeepsTheOrder(t *testing.T) {
	var now time.Time
	path := filepath.Join(t.TempDir(), "ledger.json")
	args := framework.Arguments{volcano.ArgSnapshot: path}
	first := volcano.NewBuilder(func() time.Time { return now })
	c := servedHour(t, first, args, &now)
	// The scheduler restarts: a new Builder reads the snapshot that the
	// first one wrote at its last session close.
	restarted := volcano.NewBuilder(func() time.Time { return now })
	expect(t, session(t, c, restarted, args), "b1-0", "b1-1")
	var rho ledger.Rho
	restarted.Read(func(l *ledger.Ledger) {
		a, _ := l.View(l.Now()).TenantAccount("qa")
		rho = a.Rho
	})
	if rho != 2 {
		t.Errorf("qa's ρ after the restart = %s, want 2.0000 (4 GPUs for an hour, owed 2)", rho)
	}

	// Without the snapshot a restarted scheduler knows no history: both
	// queues look new and qa, first by name, is served.
	c = servedHour(t, volcano.NewBuilder(func() time.Time { return now }), nil, &now)
	expect(t, session(t, c, volcano.NewBuilder(func() time.Time { return now }), nil), "a2-0", "a2-1")
}
