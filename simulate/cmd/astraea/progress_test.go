package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// testDisplay is a display on a terminal of width columns whose clock
// advances by a second at every reading.
func testDisplay(out *bytes.Buffer, width, runs, jobs int) *display {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &display{w: out, width: func() int { return width }, runs: runs, total: jobs}
	d.clock = func() time.Time { t = t.Add(time.Second); return t }
	d.began = d.clock()
	return d
}

// lines returns the lines drawn: each redraw starts with a carriage
// return and ends by clearing the rest of the line.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\r") {
		if l = strings.TrimSuffix(l, "\x1b[K"); l != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

func TestProgressLine(t *testing.T) {
	sim := time.Date(2020, 9, 7, 12, 0, 0, 0, time.UTC)
	t.Run("with the jobs per run known it shows the share done and the time left", func(t *testing.T) {
		var out bytes.Buffer
		d := testDisplay(&out, 200, 2, 1000)
		r := d.start("astraea")
		r.update(500, sim)
		ls := lines(out.String())
		if len(ls) != 1 {
			t.Fatalf("lines %q", ls)
		}
		// one run of two half done: a quarter of the work, 1 s in, 3 s left
		for _, want := range []string{"0/2 runs", "astraea 500/1000 jobs", "2020-09-07 12:00", "25 %", "ETA 3s"} {
			if !strings.Contains(ls[0], want) {
				t.Errorf("line %q lacks %q", ls[0], want)
			}
		}
		r.end()
		d.finish()
		if !strings.HasSuffix(out.String(), "\r\x1b[K") {
			t.Errorf("the line is not cleared at the end: %q", out.String())
		}
	})
	t.Run("without the jobs per run it shows counts only", func(t *testing.T) {
		var out bytes.Buffer
		d := testDisplay(&out, 200, 1, 0)
		d.start("fifo").update(42, sim)
		l := lines(out.String())[0]
		if !strings.Contains(l, "fifo 42 jobs") || strings.Contains(l, "%") || strings.Contains(l, "ETA") {
			t.Errorf("line %q", l)
		}
	})
	t.Run("the line never wraps", func(t *testing.T) {
		for _, width := range []int{1, 2, 10, 30, 79} {
			var out bytes.Buffer
			d := testDisplay(&out, width, 8, 5200)
			for _, name := range []string{"astraea", "astraea-reserve (no overhead)", "gandiva-fair"} {
				d.start(name).update(1234, sim)
			}
			for _, l := range lines(out.String()) {
				if n := utf8.RuneCountInString(l); n >= width {
					t.Errorf("width %d: line of %d characters: %q", width, n, l)
				}
			}
		}
	})
	t.Run("it is redrawn at most every 100 ms", func(t *testing.T) {
		var out bytes.Buffer
		d := testDisplay(&out, 80, 1, 10)
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		now := base
		d.clock = func() time.Time { return now }
		r := d.start("astraea")
		for i := range 10 {
			now = base.Add(time.Duration(i) * 30 * time.Millisecond)
			r.update(i, sim)
		}
		// at 0, 120, 240 ms (the first draw is at once)
		if n := len(lines(out.String())); n != 3 {
			t.Errorf("%d redraws in 270 ms, want 3: %q", n, out.String())
		}
	})
}

// Off a terminal nothing is shown, and the engine is not even called back.
func TestProgressOffATerminal(t *testing.T) {
	var out bytes.Buffer
	d := newDisplay(options{}, &out, 2, true, 100)
	r := d.start("astraea")
	if r.update != nil {
		t.Error("a progress callback off a terminal")
	}
	r.end()
	d.finish()
	if out.Len() > 0 {
		t.Errorf("wrote %q", out.String())
	}
}
