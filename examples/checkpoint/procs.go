//go:build unix

package checkpoint

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/astraea-sched/astraea/lease"
	"github.com/astraea-sched/astraea/ledger"
)

// Segment is one process lifetime of a job: from a start or restore to its
// exit, as the trainer reported it on stdout.
type Segment struct {
	// From is the iteration the process loaded ("ready"): 0 for a fresh
	// start, else the iteration of the snapshot it resumed from.
	From uint64
	// Last is the last iteration the process reported complete ("iter").
	Last uint64
	// Flushed lists the iterations it wrote to disk, in order.
	Flushed []uint64
	// Done reports that it completed all its iterations.
	Done bool
	// Signalled and Killed report how it was stopped: a checkpoint signal
	// (SIGTERM) or SIGKILL (deadline passed or forced).
	Signalled, Killed bool
	// Err is the process's exit error, if any.
	Err error
}

type proc struct {
	cmd     *exec.Cmd
	ready   chan struct{}
	exited  chan struct{}
	seg     *Segment
	since   time.Time // running since (start, or end of cold start)
	signal  time.Time
	flushes int // len(seg.Flushed) when the signal was sent
	history []*Segment
}

// Procs implements [lease.Effects] with real processes: Start and Restore
// run the job's command (the trainer resumes from its snapshot file if there
// is one) and wait until it reports "ready"; Checkpoint sends SIGTERM;
// WaitReleased waits for the exit and sends SIGKILL once the deadline has
// passed. Times come from Now, so the lease table and the processes agree.
//
// Lost work in a [lease.ReleaseReport] is measured in time: zero when the
// trainer flushed its last complete iteration after the signal (at most the
// iteration in flight is lost, even if the deadline then killed it), and the
// whole running time since the last start or restore when it was killed
// before flushing (it resumes from the snapshot it started from).
type Procs struct {
	// Command returns the command that runs (or resumes) job.
	Command func(job ledger.JobID) *exec.Cmd
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ForceKill, if non-nil and true for a job, makes its checkpoint
	// signal SIGKILL: the deadline passed at once. For fault-injection tests.
	ForceKill func(job ledger.JobID) bool

	mu   sync.Mutex
	jobs map[ledger.JobID]*proc
}

var _ lease.Effects = (*Procs)(nil)

func (p *Procs) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Procs) get(job ledger.JobID) *proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.jobs == nil {
		p.jobs = make(map[ledger.JobID]*proc)
	}
	pr := p.jobs[job]
	if pr == nil {
		pr = &proc{}
		p.jobs[job] = pr
	}
	return pr
}

// launch starts the job's process and waits for its "ready" line.
func (p *Procs) launch(at time.Time, job ledger.JobID) (time.Duration, error) {
	pr := p.get(job)
	p.mu.Lock()
	running := pr.cmd != nil
	p.mu.Unlock()
	if running {
		return 0, fmt.Errorf("job %s already has a process", job)
	}
	cmd := p.Command(job)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	seg := &Segment{}
	ready, exited := make(chan struct{}), make(chan struct{})
	p.mu.Lock()
	pr.cmd, pr.ready, pr.exited, pr.seg = cmd, ready, exited, seg
	pr.history = append(pr.history, seg)
	p.mu.Unlock()

	go func() {
		sc := bufio.NewScanner(out)
		readyOnce := sync.OnceFunc(func() { close(ready) })
		for sc.Scan() {
			verb, arg, _ := strings.Cut(sc.Text(), " ")
			n, _ := strconv.ParseUint(arg, 10, 64)
			p.mu.Lock()
			switch verb {
			case "ready":
				seg.From, seg.Last = n, n
			case "iter":
				seg.Last = n
			case "flushed":
				seg.Flushed = append(seg.Flushed, n)
			case "done":
				seg.Done = true
			}
			p.mu.Unlock()
			if verb == "ready" {
				readyOnce()
			}
		}
		err := cmd.Wait()
		p.mu.Lock()
		seg.Err = err
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			seg.Killed = true
		}
		pr.cmd = nil
		p.mu.Unlock()
		readyOnce()
		close(exited)
	}()

	<-ready
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr.cmd == nil && !seg.Done {
		return 0, fmt.Errorf("job %s exited before it was ready: %v", job, seg.Err)
	}
	cold := p.now().Sub(at)
	if cold < 0 {
		cold = 0
	}
	pr.since = at.Add(cold)
	return cold, nil
}

// Start implements [lease.Effects].
func (p *Procs) Start(at time.Time, job ledger.JobID) error {
	_, err := p.launch(at, job)
	if err != nil {
		return err
	}
	// A fresh start pays no cold start in the lease table: running since at.
	pr := p.get(job)
	p.mu.Lock()
	pr.since = at
	p.mu.Unlock()
	return nil
}

// Restore implements [lease.Effects]; the cold start is the time until the
// process reported "ready" (it had loaded its snapshot).
func (p *Procs) Restore(at time.Time, job ledger.JobID) (time.Duration, error) {
	return p.launch(at, job)
}

// Checkpoint implements [lease.Effects]: SIGTERM (or SIGKILL, see
// ForceKill). A process that already exited is not an error: WaitReleased
// reports its exit.
func (p *Procs) Checkpoint(at time.Time, job ledger.JobID) error {
	pr := p.get(job)
	p.mu.Lock()
	cmd, seg := pr.cmd, pr.seg
	pr.signal = at
	if pr.seg != nil {
		pr.flushes = len(pr.seg.Flushed)
	}
	p.mu.Unlock()
	if cmd == nil || seg == nil {
		return nil
	}
	sig := syscall.SIGTERM
	if p.ForceKill != nil && p.ForceKill(job) {
		sig = syscall.SIGKILL
	}
	p.mu.Lock()
	seg.Signalled = true
	p.mu.Unlock()
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// WaitReleased implements [lease.Effects].
func (p *Procs) WaitReleased(job ledger.JobID, deadline time.Time) (lease.ReleaseReport, error) {
	pr := p.get(job)
	p.mu.Lock()
	exited, cmd := pr.exited, pr.cmd
	p.mu.Unlock()
	if exited == nil {
		return lease.ReleaseReport{}, fmt.Errorf("job %s was never started", job)
	}
	timer := time.NewTimer(max(deadline.Sub(p.now()), 0))
	defer timer.Stop()
	select {
	case <-exited:
	case <-timer.C:
		if cmd != nil {
			_ = cmd.Process.Kill()
		}
		<-exited
	}
	at := p.now()
	if at.After(deadline) {
		at = deadline // the GPUs are the scheduler's again from the deadline
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := lease.ReleaseReport{At: at, Forced: pr.seg.Killed}
	if r.Forced && len(pr.seg.Flushed) == pr.flushes {
		// Killed before it flushed anything: it will resume from the
		// snapshot it started from, so all its running time is lost.
		r.Lost = max(pr.signal.Sub(pr.since), 0)
	}
	return r, nil
}

// Segments returns a copy of the job's process lifetimes so far.
func (p *Procs) Segments(job ledger.JobID) []Segment {
	pr := p.get(job)
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Segment, len(pr.history))
	for i, s := range pr.history {
		out[i] = *s
		out[i].Flushed = append([]uint64(nil), s.Flushed...)
	}
	return out
}

// Progress returns the last iteration the job's current (or last) process
// reported complete, and whether that process has exited.
func (p *Procs) Progress(job ledger.JobID) (last uint64, exited bool) {
	pr := p.get(job)
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr.seg == nil {
		return 0, false
	}
	return pr.seg.Last, pr.cmd == nil
}

// Exited returns a channel closed when the job's current process exits
// (nil if it was never started).
func (p *Procs) Exited(job ledger.JobID) <-chan struct{} {
	pr := p.get(job)
	p.mu.Lock()
	defer p.mu.Unlock()
	return pr.exited
}
