package checkpoint_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/astraea-sched/astraea/examples/checkpoint"
)

// Training that is interrupted, stored and resumed ends with exactly the
// bits of an uninterrupted run.
func Example() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "job.snap")

	tr := checkpoint.NewTrainer(1)
	s := checkpoint.Snapshot{Seed: 1}
	for s.Iter < 700 {
		s = tr.Step(s)
	}
	_ = checkpoint.WriteFile(path, s) // preempted after 700 iterations

	resumed, ok, _ := checkpoint.ReadFile(path)
	tr = checkpoint.NewTrainer(1) // a new process
	for resumed.Iter < 2000 {
		resumed = tr.Step(resumed)
	}
	fmt.Println(ok, resumed.Iter, resumed == checkpoint.Train(1, 2000))
	// Output: true 2000 true
}
