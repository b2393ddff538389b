package trace

import (
	"fmt"
	"io"
	"runtime"
	"testing"
)

// rowSource produces a Venus-format CSV of n rows on the fly, so that the
// input never sits in memory.
type rowSource struct {
	n, i int
	buf  []byte
}

func (s *rowSource) Read(p []byte) (int, error) {
	for len(s.buf) < len(p) && s.i <= s.n {
		if s.i == 0 {
			s.buf = append(s.buf, "job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration\n"...)
		} else {
			sec := s.i / 10
			s.buf = fmt.Appendf(s.buf, "%d,user-with-a-long-name-%d,vc%d,%d,6,COMPLETED,2020-09-%02d %02d:%02d:%02d,%d\n",
				s.i, s.i%97, s.i%15, 1<<(s.i%4), 7+sec/86400, sec/3600%24, sec/60%60, sec%60, s.i%5000)
		}
		s.i++
	}
	if len(s.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestStreamingMemory reads 100,000 rows (about 9 MB of CSV) and checks
// that the heap grows only by the id set, not by the rows: well under the
// size of the input.
func TestStreamingMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 100,000 generated rows")
	}
	const rows = 100000
	r, err := NewReader(&rowSource{n: rows}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := heapAfterGC()
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	after := heapAfterGC()
	runtime.KeepAlive(r)
	if n != rows {
		t.Fatalf("%d rows, want %d", n, rows)
	}
	perRow := float64(int64(after)-int64(before)) / rows
	t.Logf("heap growth %.1f bytes per row (the id set)", perRow)
	if perRow > 64 {
		t.Fatalf("heap grew by %.1f bytes per row; rows are being retained", perRow)
	}
}
