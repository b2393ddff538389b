package ledger

import (
	"strconv"
	"testing"
	"unsafe"
)

// TestJobRecordLayout pins the layout the event path relies on (see job): a
// 256-byte record, so records start on cache-line boundaries, with the part
// of the alloc series an append writes in its second line.
func TestJobRecordLayout(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("the sizes pinned here are those of 64-bit platforms")
	}
	var j job
	hot := unsafe.Offsetof(j.alloc) + unsafe.Offsetof(j.alloc.st.head)
	end := unsafe.Offsetof(j.alloc) + unsafe.Offsetof(j.alloc.st.cur)
	if size := unsafe.Sizeof(j); size != 256 {
		t.Errorf("job record is %d bytes, want 256", size)
	}
	if hot != 64 || end != 128 {
		t.Errorf("alloc series' append state at bytes %d..%d, want 64..128", hot, end)
	}
	if off := unsafe.Offsetof(j.state); off >= 64 {
		t.Errorf("state at byte %d, outside the first line", off)
	}
}
