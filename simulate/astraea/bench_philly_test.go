package astraea

import (
	"errors"
	"fmt"
	"github.com/astraea-sched/astraea/simulate"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/internal/testtraces"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// benchRun simulates the snapshot end to end (open, parse, simulate) once
// per iteration and reports simulated jobs, ticks and the cost per tick.
// Cost: O(E log E) for E engine events, plus one round per tick that can
// change something, over the waiting jobs the policy's queue hands it.
func benchRun(b *testing.B, s snapshot) {
	dir := testtraces.Dir(b)
	cfg := s.config(b, dir)
	b.ReportAllocs()
	b.ResetTimer()
	var r *simulate.Result
	for b.Loop() {
		r = s.run(b, dir, cfg)
	}
	b.ReportMetric(float64(r.Stats.Jobs), "jobs")
	b.ReportMetric(float64(r.Stats.Ticks), "ticks")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Stats.Ticks), "ns/tick")
}

// BenchmarkVenusTwoWeek: the Venus two-week snapshot (13,236 jobs) on
// 100 × 8 GPUs with the official VC quotas, under ASTRAEA.
func BenchmarkVenusTwoWeek(b *testing.B) { benchRun(b, venusSnapshot) }

// BenchmarkPhillyTwoWeek: the Philly two-week snapshot (31,903 jobs; one job
// runs 48 days, so about 59 days are simulated) on 210 × 8 GPUs with quotas
// ∝ requested GPUs, under ASTRAEA.
func BenchmarkPhillyTwoWeek(b *testing.B) { benchRun(b, phillySnapshot) }

// BenchmarkPhillyTwoWeek140: the same on 140 × 8 GPUs.
func BenchmarkPhillyTwoWeek140(b *testing.B) {
	s := phillySnapshot
	s.nodes = 140
	benchRun(b, s)
}

// parseAll drains a trace, the floor against which a simulation is compared.
func parseAll(b *testing.B, path string) int {
	r, err := trace.Open(path, trace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

// BenchmarkPhillyParse only reads the Philly two-week snapshot.
func BenchmarkPhillyParse(b *testing.B) {
	path := filepath.Join(testtraces.Dir(b), phillySnapshot.trace)
	b.ReportAllocs()
	for b.Loop() {
		parseAll(b, path)
	}
}

// BenchmarkPhillyPrefix simulates the 1-, 2-, 4-, 7- and 14-day prefixes of
// the Philly snapshot in the ASTRAEA artifact's format on 210 × 8 GPUs with
// the artifact's VC weights: cost should grow linearly with jobs. Per job
// it rises at 14 days, the first prefix where queues form (the shorter ones
// never preempt) and rounds weigh waiting jobs; per tick (ns/tick) it stays
// within about 1.5× across the prefixes.
func BenchmarkPhillyPrefix(b *testing.B) {
	dir := filepath.Join(testtraces.Dir(b), "philly", "artifact-format")
	for _, days := range []int{1, 2, 4, 7, 14} {
		b.Run(fmt.Sprintf("%dd", days), func(b *testing.B) {
			q, err := trace.ReadQuotas(filepath.Join(dir, fmt.Sprintf("philly_%dd_share.csv", days)))
			if err != nil {
				b.Fatal(err)
			}
			cfg := simulate.DefaultConfig(210, 8, q)
			path := filepath.Join(dir, fmt.Sprintf("philly_%dd.csv", days))
			b.ReportAllocs()
			var r *simulate.Result
			for b.Loop() {
				src, err := trace.Open(path, trace.Options{})
				if err != nil {
					b.Fatal(err)
				}
				p, _ := New(DefaultOptions())
				if r, err = simulate.Run(cfg, src, p); err != nil {
					b.Fatal(err)
				}
				src.Close()
			}
			b.ReportMetric(float64(r.Stats.Jobs), "jobs")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Stats.Jobs), "ns/job")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Stats.Ticks), "ns/tick")
		})
	}
}

// BenchmarkSyntheticDefault runs the embedded default workload (5,200 jobs)
// on 100 × 8 GPUs: what the command runs with no flags.
func BenchmarkSyntheticDefault(b *testing.B) {
	cfg := simulate.DefaultConfig(100, 8, trace.SyntheticQuotas())
	b.ReportAllocs()
	for b.Loop() {
		p, _ := New(DefaultOptions())
		if _, err := simulate.Run(cfg, trace.Synthetic(trace.DefaultSynthetic()), p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyntheticScale runs the synthetic workload at one arrival rate
// (750 jobs a day) over 8, 16, 32 and 64 days on 130 × 8 GPUs, where that
// rate is about 85 % of capacity: queues build by day and drain by night.
// Jobs run up to 15 days, so the first two weeks are a warm-up in which
// long jobs accumulate; from then on every day is alike, and the cost per
// job (ns/job) must stay flat from 16 to 64 days if the engine is linear in
// jobs. The Philly prefixes cannot show this on their own: their load
// changes from prefix to prefix.
func BenchmarkSyntheticScale(b *testing.B) {
	for _, days := range []int{8, 16, 32, 64} {
		b.Run(fmt.Sprintf("%dd", days), func(b *testing.B) {
			sc := trace.DefaultSynthetic()
			sc.Jobs, sc.Span = 750*days, time.Duration(days)*24*time.Hour
			cfg := simulate.DefaultConfig(130, 8, trace.SyntheticQuotas())
			b.ReportAllocs()
			var r *simulate.Result
			for b.Loop() {
				p, _ := New(DefaultOptions())
				var err error
				if r, err = simulate.Run(cfg, trace.Synthetic(sc), p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Stats.Jobs), "ns/job")
			b.ReportMetric(float64(r.Stats.Ticks)/float64(r.Stats.Jobs), "ticks/job")
		})
	}
}
