package slurm

import (
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

func TestParseSinfoPartitions(t *testing.T) {
	nodes, total, _, err := ParseSinfo(openFixture(t, "real-tree/sinfo.txt"), Options{})
	if err != nil || total != 4 || len(nodes) != 1 || nodes[0].Used != 1 || len(nodes[0].Partitions) != 1 || nodes[0].Partitions[0] != "debug" {
		t.Fatalf("real capture: %+v %d %v", nodes, total, err)
	}
	// A node in two partitions counts once in M and in each partition.
	in := "gpu[01-02]|gpu*|gpu:a100:8(S:0-1)|gpu:a100:2(IDX:0-1)\n" +
		"gpu[01-02]|long|gpu:a100:8(S:0-1)|gpu:a100:2(IDX:0-1)\n" +
		"v01|long|gpu:v100:4|gpu:v100:0\n" +
		"cpu01|cpu|(null)|(null)\n"
	nodes, total, _, err = ParseSinfo(strings.NewReader(in), Options{})
	if err != nil || total != 20 || len(nodes) != 4 {
		t.Fatalf("%+v %d %v", nodes, total, err)
	}
	got := Partitions(nodes)
	want := []Partition{{"gpu", 2, 16, 12}, {"long", 3, 20, 16}, {"cpu", 1, 0, 0}}
	if len(got) != len(want) {
		t.Fatalf("partitions %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("partition %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Without GresUsed the free GPUs are unknown.
	nodes, _, _, _ = ParseSinfo(strings.NewReader("n1|p|gpu:4\n"), Options{})
	if p := Partitions(nodes); len(p) != 1 || p[0].Free != -1 || nodes[0].Used != -1 {
		t.Errorf("%+v %+v", p, nodes)
	}
	for name, in := range map[string]string{
		"more used than held":     "n1|p|gpu:2|gpu:3\n",
		"an empty partition name": "n1||gpu:2\n",
		"five fields":             "n1|p|gpu:2|gpu:1|x\n",
		"a bad used GRES":         "n1|p|gpu:2|gpu:x\n",
	} {
		if _, _, _, err := ParseSinfo(strings.NewReader(in), Options{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParsePendingUserAndPartition(t *testing.T) {
	jobs, _, err := ParsePending(openFixture(t, "real-tree/squeue.txt"), Options{})
	if err != nil || len(jobs) != 3 || jobs[1] != (PendingJob{ID: "12", Account: "nlp", GPUs: 4, User: "root", Partition: "debug", Line: 2}) {
		t.Fatalf("%+v %v", jobs, err)
	}
	if _, _, err := ParsePending(strings.NewReader("1|a|N/A|bad user\n"), Options{}); err == nil {
		t.Error("a user name with a space accepted")
	}
}

// explainReal replays the tree capture and explains its queue.
func explainReal(t *testing.T, pending []PendingJob, nodes []Node) []Waiting {
	t.Helper()
	tree, _, err := ParseShareTree(openFixture(t, "real-tree/sshare.txt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	jobs := mustJobs(t, readFixture(t, "real-tree/sacct.txt"))
	now, _ := time.Parse(TimeLayout, "2026-12-02T01:19:05")
	rep, err := Replay(jobs, Config{Mode: ledger.QuotaShare, Capacity: 4, Tree: tree, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := Explain(rep, tree, pending, nodes, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestExplainRealQueue(t *testing.T) {
	pending, _, err := ParsePending(openFixture(t, "real-tree/squeue.txt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	nodes, _, _, err := ParseSinfo(openFixture(t, "real-tree/sinfo.txt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Job 9 holds 1 of the 4 GPUs: jobs 10 (1 GPU) and 11 (2) fit in the
	// 3 free, job 12 (4) cannot.
	ws := explainReal(t, pending, nodes)
	for i, want := range []struct {
		next bool
		why  string
	}{
		{true, "next in fair order"},
		{false, "does not fit: needs 4 GPUs, largest free block 3 (3 free in total)"},
		{true, "next in fair order"},
	} {
		if ws[i].Next != want.next || !strings.HasPrefix(ws[i].Why, want.why) {
			t.Errorf("job %s: next %v, why %q; want %v %q", ws[i].ID, ws[i].Next, ws[i].Why, want.next, want.why)
		}
	}
	if ws[0].Tenant != "team-a|root" {
		t.Errorf("job 10 charged to %q", ws[0].Tenant)
	}
}

func TestExplainCases(t *testing.T) {
	full := []Node{{Name: "n1", GPUs: 4, Used: 4, Partitions: []string{"debug"}}}
	free := []Node{{Name: "n1", GPUs: 4, Used: -1}} // no partitions, use unknown
	for name, tc := range map[string]struct {
		job   PendingJob
		nodes []Node
		why   string
	}{
		"a user without an association in the account": {PendingJob{ID: "1", Account: "nlp", User: "nobody", GPUs: 1}, free,
			"no association with this account and user"},
		"an account that is not a leaf": {PendingJob{ID: "1", Account: "ai", GPUs: 1}, free,
			"no association with this account and user"},
		"a job without GPUs":   {PendingJob{ID: "1", Account: "nlp", User: "root"}, free, "needs no GPUs"},
		"a full partition":     {PendingJob{ID: "1", Account: "nlp", User: "root", GPUs: 1, Partition: "debug"}, full, "no free GPU in partition debug"},
		"an unknown partition": {PendingJob{ID: "1", Account: "nlp", User: "root", GPUs: 1, Partition: "gpu"}, full, "sinfo lists no partition gpu"},
		"without partitions every node is tried": {PendingJob{ID: "1", Account: "nlp", User: "root", GPUs: 4, Partition: "debug"}, free,
			"next in fair order"},
	} {
		t.Run(name, func(t *testing.T) {
			ws := explainReal(t, []PendingJob{tc.job}, tc.nodes)
			if !strings.HasPrefix(ws[0].Why, tc.why) {
				t.Fatalf("why %q, want %q", ws[0].Why, tc.why)
			}
		})
	}
	ws := explainReal(t, []PendingJob{{ID: "7", Account: "nlp", User: "root", GPUs: 1}, {ID: "7", Account: "nlp", User: "root", GPUs: 1}}, free)
	if ws[1].Why != "listed twice" || !ws[0].Next {
		t.Fatalf("%+v", ws)
	}
}
