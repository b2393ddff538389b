//go:build linux

package checkpoint

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/lease"
	"github.com/astraea-sched/astraea/ledger"
)

var trainerBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// buildTrainer compiles cmd/trainer once per test binary into a temporary
// directory (removed by TestMain).
func buildTrainer(t *testing.T) string {
	t.Helper()
	b := &trainerBin
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "trainer-")
		if b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "trainer")
		out, err := exec.Command("go", "build", "-o", b.path, "./cmd/trainer").CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func sameBits(a, b Snapshot) bool {
	if a.Seed != b.Seed || a.Iter != b.Iter {
		return false
	}
	for i := range a.Params {
		if math.Float64bits(a.Params[i]) != math.Float64bits(b.Params[i]) {
			return false
		}
	}
	return true
}

func readIter(t *testing.T, path string) uint64 {
	t.Helper()
	s, ok, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return 0
	}
	return s.Iter
}

type testJob struct {
	id   ledger.JobID
	seed uint64
}

// TestPreemptedTrainingMatchesUninterrupted runs three trainers on two
// "GPU slots" under a lease coordinator with real processes. It preempts a
// running job at random (seeded) iteration counts, many times; one
// preemption in four is a SIGKILL instead of the checkpoint signal. It
// asserts:
//
//   - every final model equals the uninterrupted run bit for bit;
//   - a signal preemption loses at most the iteration in flight: the next
//     process of the job resumes from an iteration >= the last iteration the
//     preempted process reported complete (and at most one more, if the
//     iteration in flight finished during the flush);
//   - a SIGKILL loses exactly the progress since the last flushed snapshot:
//     the snapshot file is unchanged by the kill and the next process resumes
//     from it;
//   - the lease table ends consistent: every job completed, usage adds up.
func TestPreemptedTrainingMatchesUninterrupted(t *testing.T) {
	bin := buildTrainer(t)
	dir := t.TempDir()
	const iters = 600
	jobs := []testJob{{"a", 1}, {"b", 2}}
	seedOf := map[ledger.JobID]uint64{}
	for _, j := range jobs {
		seedOf[j.id] = j.seed
	}
	statePath := func(id ledger.JobID) string { return filepath.Join(dir, string(id)+".snap") }

	// The references: one uninterrupted process per job, and the same
	// computation in this process.
	ref := map[ledger.JobID]Snapshot{}
	for _, j := range jobs {
		p := filepath.Join(dir, "ref-"+string(j.id)+".snap")
		out, err := exec.Command(bin, "-state", p, "-iters", strconv.Itoa(iters), "-seed", strconv.FormatUint(j.seed, 10)).CombinedOutput()
		if err != nil {
			t.Fatalf("reference run: %v\n%s", err, out)
		}
		s, _, err := ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := Train(j.seed, iters); !sameBits(s, want) {
			t.Fatalf("reference process %v differs from in-process training %v", s, want)
		}
		ref[j.id] = s
	}

	rng := rand.New(rand.NewPCG(20240101, 5))
	kill := map[ledger.JobID]bool{}
	procs := &Procs{
		Command: func(id ledger.JobID) *exec.Cmd {
			return exec.Command(bin, "-state", statePath(id), "-iters", strconv.Itoa(iters),
				"-seed", strconv.FormatUint(seedOf[id], 10), "-pace", "200us", "-grace", "5s")
		},
		ForceKill: func(id ledger.JobID) bool { return kill[id] },
	}
	tb, err := lease.NewTable(lease.Config{Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	co, err := lease.NewCoordinator(tb, procs, lease.CoordinatorConfig{Grace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if err := tb.Submit(time.Now(), j.id); err != nil {
			t.Fatal(err)
		}
	}

	const slots = 1
	var running []ledger.JobID
	queue := []ledger.JobID{"a", "b"}
	done := map[ledger.JobID]bool{}
	signals, kills := 0, 0

	finishDone := func() {
		for _, id := range slices.Clone(running) {
			if _, exited := procs.Progress(id); exited {
				segs := procs.Segments(id)
				if !segs[len(segs)-1].Done {
					t.Fatalf("job %s exited unasked: %+v", id, segs[len(segs)-1])
				}
				if err := tb.Finish(time.Now(), id, lease.Completed); err != nil {
					t.Fatal(err)
				}
				done[id] = true
				running = slices.DeleteFunc(running, func(x ledger.JobID) bool { return x == id })
			}
		}
	}

	for guard := 0; len(done) < len(jobs); guard++ {
		if guard > 10000 {
			t.Fatal("loop guard: the run does not finish")
		}
		finishDone()
		// Fill free slots from the queue: fresh starts and restores.
		if len(running) < slots && len(queue) > 0 {
			var p lease.Plan
			for len(running) < slots && len(queue) > 0 {
				p.Start = append(p.Start, lease.Grant{Job: queue[0], GPUs: 1})
				running = append(running, queue[0])
				queue = queue[1:]
			}
			if _, err := co.Boundary(time.Now(), p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if len(running) == 0 {
			continue
		}
		// Let a random running job progress a random number of iterations.
		victim := running[rng.IntN(len(running))]
		from, _ := procs.Progress(victim)
		target := from + 1 + uint64(rng.IntN(100))
		for {
			last, exited := procs.Progress(victim)
			if last >= target || exited {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		if _, exited := procs.Progress(victim); exited {
			continue // completed; finishDone records it
		}
		// Preempt it: the checkpoint signal, or a SIGKILL one time in four.
		kill[victim] = rng.IntN(4) == 0
		before := readIter(t, statePath(victim))
		p := lease.Plan{Preempt: []lease.Grant{{Job: victim, GPUs: 1}}}
		if len(queue) > 0 {
			p.Start = []lease.Grant{{Job: queue[0], GPUs: 1}}
		}
		out, err := co.Boundary(time.Now(), p)
		if err != nil {
			t.Fatal(err)
		}
		running = slices.DeleteFunc(running, func(x ledger.JobID) bool { return x == victim })
		if len(queue) > 0 {
			running = append(running, queue[0])
			queue = queue[1:]
		}
		queue = append(queue, victim)

		segs := procs.Segments(victim)
		seg := segs[len(segs)-1]
		after := readIter(t, statePath(victim))
		switch {
		case seg.Done:
			// It completed just before the signal; the restore will say so.
		case kill[victim]:
			kills++
			if !seg.Killed || !out.Decisions[0].Forced || after != before {
				t.Fatalf("SIGKILL of %s: killed=%v forced=%v snapshot %d → %d (must be unchanged)",
					victim, seg.Killed, out.Decisions[0].Forced, before, after)
			}
		default:
			signals++
			if seg.Killed || after < seg.Last || after > seg.Last+1 {
				t.Fatalf("signal preemption of %s: last reported iteration %d, snapshot %d: lost more than the iteration in flight (segment %+v)",
					victim, seg.Last, after, seg)
			}
		}
	}

	// Every restart resumed from what the previous process left on disk.
	for _, j := range jobs {
		segs := procs.Segments(j.id)
		for i := 1; i < len(segs); i++ {
			prev, cur := segs[i-1], segs[i]
			switch {
			case prev.Killed:
				if cur.From != prev.From {
					t.Errorf("job %s segment %d resumed from %d after a SIGKILL, want the last flushed %d", j.id, i, cur.From, prev.From)
				}
			case cur.From < prev.Last || cur.From > prev.Last+1:
				t.Errorf("job %s segment %d resumed from %d, previous process reached %d", j.id, i, cur.From, prev.Last)
			}
		}
		got, _, err := ReadFile(statePath(j.id))
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(got, ref[j.id]) {
			t.Errorf("job %s after %d processes: %v, uninterrupted: %v", j.id, len(segs), got, ref[j.id])
		}
		in, _ := tb.Info(j.id)
		if in.State != lease.Completed || in.Usage.Check() != nil {
			t.Errorf("job %s: %v %+v", j.id, in.State, in.Usage)
		}
	}
	if err := tb.Check(); err != nil {
		t.Fatal(err)
	}
	if signals < 8 || kills < 2 {
		t.Errorf("only %d signal preemptions and %d kills: the test did not exercise preemption", signals, kills)
	}
	t.Logf("%d signal preemptions, %d SIGKILLs; totals %+v", signals, kills, tb.Totals(time.Now()))
}

// TestDeadlineKeepsLastStore: a job whose iteration in flight does not end
// is killed at the coordinator's deadline; the snapshot it flushed at the
// signal stands, so only the iteration in flight is lost.
func TestDeadlineKeepsLastStore(t *testing.T) {
	bin := buildTrainer(t)
	state := filepath.Join(t.TempDir(), "j.snap")
	const iters, stall = 400, 150
	stalled := true
	procs := &Procs{Command: func(id ledger.JobID) *exec.Cmd {
		args := []string{"-state", state, "-iters", strconv.Itoa(iters), "-seed", "7", "-grace", "1h"}
		if stalled {
			args = append(args, "-stall-at", strconv.Itoa(stall))
		}
		return exec.Command(bin, args...)
	}}
	tb, _ := lease.NewTable(lease.Config{Lease: time.Hour})
	co, _ := lease.NewCoordinator(tb, procs, lease.CoordinatorConfig{Grace: time.Second})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tb.Submit(time.Now(), "j"))
	_, err := co.Boundary(time.Now(), lease.Plan{Start: []lease.Grant{{Job: "j", GPUs: 1}}})
	must(err)
	for last, _ := procs.Progress("j"); last < stall; last, _ = procs.Progress("j") {
		time.Sleep(time.Millisecond)
	}
	out, err := co.Boundary(time.Now(), lease.Plan{Preempt: []lease.Grant{{Job: "j", GPUs: 1}}})
	must(err)
	d := out.Decisions[0]
	if !d.Forced || d.Lost != 0 || !d.At.Equal(out.Deadline) {
		t.Fatalf("decision %+v, deadline %v: want a forced release at the deadline with nothing but the iteration in flight lost", d, out.Deadline)
	}
	if got := readIter(t, state); got != stall {
		t.Fatalf("snapshot at iteration %d, want the last store %d", got, stall)
	}
	stalled = false
	_, err = co.Boundary(time.Now(), lease.Plan{Start: []lease.Grant{{Job: "j", GPUs: 1}}})
	must(err)
	<-procs.Exited("j")
	must(tb.Finish(time.Now(), "j", lease.Completed))
	got, _, err := ReadFile(state)
	must(err)
	if want := Train(7, iters); !sameBits(got, want) {
		t.Fatalf("final %v, uninterrupted %v", got, want)
	}
	must(tb.Check())
}

func TestMain(m *testing.M) {
	code := m.Run()
	if trainerBin.dir != "" {
		os.RemoveAll(trainerBin.dir)
	}
	os.Exit(code)
}
