package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// jobs returns how many jobs every run of w reads, when it is known before
// the runs: the synthetic workload's count, or the jobs of a trace kept
// from the quota pass; 0 otherwise.
func (w *workload) jobs(o options) int {
	switch {
	case o.trace == "":
		return o.jobs
	case w.kept != nil:
		return len(w.kept)
	}
	return 0
}

// display shows the runs' progress on stderr as one line, redrawn in
// place, when stderr is a terminal and -quiet is not set: the runs ended
// of all, the jobs finished of each run in progress, the share of all
// the work done and the time left, where the jobs per run are known. The
// line is cut to the terminal's width, so that it never wraps. Runs in
// parallel share it.
type display struct {
	mu     sync.Mutex
	w      io.Writer        // nil: nothing is shown
	width  func() int       // the terminal's columns
	clock  func() time.Time // the wall clock
	began  time.Time
	drawn  time.Time // when the line was last drawn
	runs   int       // runs in all
	ended  int       // runs ended
	total  int       // jobs per run; 0 when not known
	active []*runProgress
}

// redraw is how often the line is redrawn at most.
const redraw = 100 * time.Millisecond

func newDisplay(o options, stderr io.Writer, runs int, twin bool, jobs int) *display {
	d := &display{runs: runs, total: jobs}
	if twin {
		d.runs *= 2
	}
	f, ok := stderr.(*os.File)
	if o.quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return d
	}
	d.w, d.clock = stderr, time.Now
	d.width = func() int {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
		return 80
	}
	d.began = d.clock()
	return d
}

// runProgress is one run's part of the line.
type runProgress struct {
	d     *display
	label string
	done  int       // jobs finished
	now   time.Time // simulated time
	// update is the run's simulate.Config.Progress: nil when nothing is
	// shown, so that the engine does not call it.
	update func(done int, now time.Time)
}

// start adds a run labelled label to the line.
func (d *display) start(label string) *runProgress {
	r := &runProgress{d: d, label: label}
	if d.w == nil {
		return r
	}
	r.update = func(done int, now time.Time) {
		d.mu.Lock()
		defer d.mu.Unlock()
		r.done, r.now = done, now
		if t := d.clock(); t.Sub(d.drawn) >= redraw {
			d.drawn = t
			d.draw(t)
		}
	}
	d.mu.Lock()
	d.active = append(d.active, r)
	d.mu.Unlock()
	return r
}

// end counts r's run as ended and takes it off the line.
func (r *runProgress) end() {
	d := r.d
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ended++
	for i, a := range d.active {
		if a == r {
			d.active = append(d.active[:i], d.active[i+1:]...)
			break
		}
	}
}

// finish clears the line.
func (d *display) finish() {
	if d.w != nil && !d.drawn.IsZero() {
		fmt.Fprint(d.w, "\r\x1b[K")
	}
}

// draw writes the line; d.mu is held.
func (d *display) draw(t time.Time) {
	fmt.Fprint(d.w, "\r"+fit(d.line(t), d.width()-1)+"\x1b[K")
}

// line is the text of the progress line at wall time t.
func (d *display) line(t time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d runs", d.ended, d.runs)
	done := float64(d.ended)
	for _, r := range d.active {
		if d.total > 0 {
			fmt.Fprintf(&b, " · %s %d/%d jobs", r.label, r.done, d.total)
			done += min(1, float64(r.done)/float64(d.total))
		} else {
			fmt.Fprintf(&b, " · %s %d jobs", r.label, r.done)
		}
		if !r.now.IsZero() {
			b.WriteString(", " + r.now.UTC().Format("2006-01-02 15:04"))
		}
	}
	if d.total > 0 && d.runs > 0 {
		share := done / float64(d.runs)
		fmt.Fprintf(&b, " · %.0f %%", 100*share)
		if elapsed := t.Sub(d.began); share > 0.01 && elapsed >= time.Second {
			left := time.Duration(float64(elapsed) * (1 - share) / share)
			b.WriteString(" · ETA " + left.Round(time.Second).String())
		}
	}
	return b.String()
}

// fit cuts s to at most width characters, ending in "…" when cut.
func fit(s string, width int) string {
	r := []rune(s)
	if width < 1 {
		return ""
	}
	if len(r) <= width {
		return s
	}
	return string(r[:width-1]) + "…"
}
