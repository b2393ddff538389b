package metrics

import (
	"bufio"
	"fmt"
	"io"

	"github.com/astraea-sched/astraea/internal/atomicfile"
)

// writeAtomic writes path through a temporary file in the same directory,
// synced and renamed over path only once everything is written: a full
// disk, a write error or a crash leaves the previous file whole and no
// partial one, and the error names path.
func writeAtomic(path string, write func(w io.Writer) error) error {
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("metrics: %s: %w", path, err)
	}
	return nil
}
