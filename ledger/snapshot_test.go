package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// sampleLedger builds a small ledger with every kind of record: removed
// tenant, finished job, weight change, stopped job, dead θ-group.
func sampleLedger(t testing.TB, h History) *Ledger {
	t.Helper()
	l := mustNew(t, Config{Mode: QuotaShare, Capacity: 16, History: h})
	do(t, l, l.AddTenant(t0, "a", 1))
	do(t, l, l.AddTenant(t0, "b", 2))
	do(t, l, l.AddTenant(ts(1), "c", 1))
	do(t, l, l.Submit(ts(1), "a1", "a", 8, 1))
	do(t, l, l.Submit(ts(1), "a2", "a", 2, 1))
	do(t, l, l.Submit(ts(2), "b1", "b", 4, 2))
	do(t, l, l.Start(ts(2), "a1"))
	do(t, l, l.Start(ts(3), "b1"))
	do(t, l, l.SetJobWeight(ts(4), "a2", 3))
	do(t, l, l.Stop(ts(5), "a1"))
	do(t, l, l.Finish(ts(6), "b1", Completed))
	do(t, l, l.RemoveTenant(ts(7), "c"))
	do(t, l, l.SetCapacity(ts(8), 24))
	do(t, l, l.Advance(ts(9)))
	return l
}

func TestSnapshotRoundTripAndContinue(t *testing.T) {
	for _, h := range []History{Unbounded(), TrailingWindow(5 * time.Second), Buckets(3, 2*time.Second), HalfLife(time.Minute)} {
		t.Run(h.String(), func(t *testing.T) {
			a := sampleLedger(t, h)
			data, err := a.MarshalBinary()
			do(t, a, err)
			path := filepath.Join(t.TempDir(), "ledger.snap")
			do(t, a, a.WriteFile(path))
			do(t, a, a.WriteFile(path)) // overwrite in place
			b, err := ReadFile(path)
			do(t, a, err)
			if got, _ := b.MarshalBinary(); !bytes.Equal(got, data) {
				t.Fatal("restored ledger encodes differently")
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Fatalf("WriteFile left %d files behind", len(entries))
			}
			for _, l := range []*Ledger{a, b} {
				do(t, l, l.Start(ts(10), "a1"))
				do(t, l, l.Finish(ts(12), "a2", Failed))
				do(t, l, l.Advance(ts(20)))
			}
			da, _ := a.MarshalBinary()
			db, _ := b.MarshalBinary()
			if !bytes.Equal(da, db) {
				t.Fatal("restore-then-continue differs from never stopping")
			}
			x, _ := a.TenantAccount("a", a.Begin(), ts(20))
			y, _ := b.TenantAccount("a", b.Begin(), ts(20))
			if x != y {
				t.Fatalf("accounts differ: %+v vs %+v", x, y)
			}
		})
	}
}

func TestRestoreRejectsDamage(t *testing.T) {
	data, _ := sampleLedger(t, Unbounded()).MarshalBinary()
	for n := 0; n < len(data); n++ {
		if _, err := Restore(data[:n]); !errors.Is(err, ErrCorruptSnapshot) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x40
		_, err := Restore(bad)
		if !errors.Is(err, ErrCorruptSnapshot) && !errors.Is(err, ErrSnapshotVersion) {
			t.Fatalf("flipped byte %d: %v", i, err)
		}
	}
	newer := bytes.Clone(data)
	binary.LittleEndian.PutUint16(newer[len(snapMagic):], snapVersion+1)
	if _, err := Restore(newer); !errors.Is(err, ErrSnapshotVersion) {
		t.Fatalf("newer version: %v", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("reading a missing file succeeded")
	}
}

func FuzzRestore(f *testing.F) {
	for _, h := range []History{Unbounded(), TrailingWindow(5 * time.Second), Buckets(3, 2*time.Second), HalfLife(time.Minute)} {
		data, _ := sampleLedger(f, h).MarshalBinary()
		f.Add(data)
	}
	empty, _ := mustNew(f, Config{}).MarshalBinary()
	f.Add(empty)
	v1, _ := filepath.Glob(filepath.Join("testdata", "v1", "*.snap"))
	for _, path := range v1 {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRestore(t, data)
		// Also feed the payload decoder with a valid frame around the fuzzed
		// bytes, or the checksum would stop almost every mutation early. The
		// frame keeps a version the decoder reads (1 or 2), so the version-1
		// payload decoder is fuzzed too.
		if len(data) >= snapHeader {
			framed := bytes.Clone(data)
			copy(framed, snapMagic)
			if v := binary.LittleEndian.Uint16(framed[len(snapMagic):]); v < 1 || v > snapVersion {
				binary.LittleEndian.PutUint16(framed[len(snapMagic):], snapVersion)
			}
			binary.LittleEndian.PutUint64(framed[len(snapMagic)+2:], uint64(len(framed)-snapHeader))
			framed = binary.LittleEndian.AppendUint32(framed, crc32.Checksum(framed, castagnoli))
			fuzzRestore(t, framed)
		}
	})
}

func fuzzRestore(t *testing.T, data []byte) {
	l, err := Restore(data)
	if err != nil {
		if !errors.Is(err, ErrCorruptSnapshot) && !errors.Is(err, ErrSnapshotVersion) {
			t.Fatalf("untyped error %v", err)
		}
		return
	}
	if err := l.Check(); err != nil {
		t.Fatalf("restored ledger fails Check: %v", err)
	}
	again, err := l.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	l2, err := Restore(again)
	if err != nil {
		t.Fatalf("re-encoded snapshot rejected: %v", err)
	}
	if again2, _ := l2.MarshalBinary(); !bytes.Equal(again, again2) {
		t.Fatal("encoding is not stable")
	}
	v := l.View(l.Now())
	for _, tn := range l.tenants {
		_, okA := v.TenantAccount(tn.id)
		_, okR := v.TenantFairRate(tn.id)
		if !okA || !okR {
			t.Fatalf("restored tenant %q missing from its view", tn.id)
		}
	}
	for _, j := range l.jobs.all() {
		v.JobAccount(j.id)
		v.JobFairRate(j.id)
	}
	_, _ = l.ClusterAccount(l.Begin(), l.Now().Add(time.Hour))
	if l.Advance(l.Now().Add(time.Second)) == nil {
		if err := l.Check(); err != nil {
			t.Fatalf("restored ledger fails Check after Advance: %v", err)
		}
	}
}

// Regression: the length check of a segment list assumed 27 bytes per
// segment, so a snapshot whose last job (in id order) had changed weight
// was rejected as corrupt.
func TestSnapshotLastJobWithSeveralSegments(t *testing.T) {
	l := mustNew(t, Config{Capacity: 8})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(t0, "a", "t", 1, 1))
	do(t, l, l.Submit(t0, "z", "t", 1, 1))
	// nanosecond steps keep each segment at its smallest encoding
	do(t, l, l.SetJobWeight(t0.Add(1), "z", 2))
	do(t, l, l.SetJobWeight(t0.Add(2), "z", 3))
	do(t, l, l.SetJobWeight(t0.Add(3), "z", 0.5))
	data, _ := l.MarshalBinary()
	back, err := Restore(data)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := back.MarshalBinary(); !bytes.Equal(again, data) {
		t.Fatal("round trip differs")
	}
}

// overLedger is sampleLedger with more GPUs allocated than the cluster has
// from 11 s on: a capacity cut below the running jobs' demand. With a
// trailing window of 5 s, history then starts inside the over-allocation.
func overLedger(t testing.TB, h History) *Ledger {
	t.Helper()
	l := sampleLedger(t, h)
	do(t, l, l.Start(ts(10), "a1"))
	do(t, l, l.SetCapacity(ts(11), 4)) // 8 GPUs run on 4
	do(t, l, l.Start(ts(12), "a2"))    // 10 on 4
	do(t, l, l.Stop(ts(17), "a2"))     // 8 on 4
	do(t, l, l.Advance(ts(18)))
	return l
}

// Snapshots written in version 2 (an idle series where version 3 keeps the
// over-allocation) restore into the current layout: the restored ledger
// reports the cluster accounts of the ledger that wrote them, over windows
// with and without over-allocation, continues like it, and is written back
// in the current version.
func TestRestoreVersion2(t *testing.T) {
	for name, h := range fixtureHistories() {
		t.Run(name, func(t *testing.T) {
			old := restoreFixture(t, 2, name)
			cur := overLedger(t, h)
			same := func(when string, from, to time.Time) {
				t.Helper()
				if from.Before(cur.Begin()) {
					from = cur.Begin()
				}
				sameCluster(t, when, old, cur, from, to)
			}
			same("restored", cur.Begin(), ts(18))
			// Windows difference a series' values, so a wrong starting value
			// would cancel out of every query: compare the series itself.
			agree(t, "over-allocation value", old.over.at(old.now, old.lam), cur.over.at(cur.now, cur.lam))
			same("restored, over-allocated", ts(11), ts(18))
			for _, l := range []*Ledger{old, cur} {
				do(t, l, l.SetCapacity(ts(19), 16))
				do(t, l, l.Start(ts(20), "a2"))
				do(t, l, l.Advance(ts(22)))
			}
			same("continued", cur.Begin(), ts(22))
			same("continued, since the cut", ts(11), ts(22))
			writtenBack(t, old)
		})
	}
}

// Snapshots written in version 1 (capacity and allocation, and a tenant's
// Alloc and FairShare, in shared series) restore into the current layout:
// the restored ledger reports what the ledger that wrote them reports,
// continues like it, and is written back in the current version.
func TestRestoreVersion1(t *testing.T) {
	for name, h := range fixtureHistories() {
		t.Run(name, func(t *testing.T) {
			old := restoreFixture(t, 1, name)
			cur := sampleLedger(t, h)
			for _, l := range []*Ledger{old, cur} {
				do(t, l, l.Start(ts(10), "a1"))
				do(t, l, l.Finish(ts(12), "a2", Failed))
				do(t, l, l.Advance(ts(20)))
			}
			for _, id := range []TenantID{"a", "b", "c"} {
				x, _ := old.TenantAccount(id, old.Begin(), ts(20))
				y, _ := cur.TenantAccount(id, cur.Begin(), ts(20))
				agree(t, string(id)+" alloc", float64(x.Alloc), float64(y.Alloc))
				agree(t, string(id)+" fair share", float64(x.FairShare), float64(y.FairShare))
			}
			for _, id := range []JobID{"a1", "a2"} {
				x, _ := old.JobAccount(id, old.Begin(), ts(20))
				y, _ := cur.JobAccount(id, cur.Begin(), ts(20))
				agree(t, string(id)+" alloc", float64(x.Alloc), float64(y.Alloc))
				agree(t, string(id)+" fair share", float64(x.FairShare), float64(y.FairShare))
			}
			sameCluster(t, "", old, cur, cur.Begin(), ts(20))
			writtenBack(t, old)
		})
	}
}

// fixtureHistories names the history policies of the snapshot fixtures in
// testdata/v1 and testdata/v2.
func fixtureHistories() map[string]History {
	return map[string]History{"unbounded": Unbounded(), "trailing": TrailingWindow(5 * time.Second), "halflife": HalfLife(time.Minute)}
}

// restoreFixture restores testdata/vN/vN-name.snap, which must be written
// in version N.
func restoreFixture(t *testing.T, version uint16, name string) *Ledger {
	t.Helper()
	v := fmt.Sprintf("v%d", version)
	data, err := os.ReadFile(filepath.Join("testdata", v, v+"-"+name+".snap"))
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint16(data[len(snapMagic):]); got != version {
		t.Fatalf("fixture has version %d", got)
	}
	l, err := Restore(data)
	do(t, l, err)
	return l
}

// agree fails unless x and y agree to 12 digits.
func agree[F ~float64](t *testing.T, what string, x, y F) {
	t.Helper()
	if math.Abs(float64(x-y)) > 1e-12*max(1, math.Abs(float64(x)), math.Abs(float64(y))) {
		t.Errorf("%s: restored %v, written %v", what, x, y)
	}
}

// sameCluster compares the cluster accounts over [from, to) of a restored
// ledger and of the ledger rebuilt by the same events.
func sameCluster(t *testing.T, when string, old, cur *Ledger, from, to time.Time) {
	t.Helper()
	x, err := old.ClusterAccount(from, to)
	do(t, old, err)
	y, err := cur.ClusterAccount(from, to)
	do(t, cur, err)
	agree(t, when+" capacity", x.Capacity, y.Capacity)
	agree(t, when+" allocated", x.Allocated, y.Allocated)
	agree(t, when+" idle", x.Idle, y.Idle)
}

// writtenBack checks that a restored ledger is written in the current
// version, and restores again.
func writtenBack(t *testing.T, l *Ledger) {
	t.Helper()
	again, _ := l.MarshalBinary()
	if v := binary.LittleEndian.Uint16(again[len(snapMagic):]); v != snapVersion {
		t.Fatalf("written back as version %d", v)
	}
	if _, err := Restore(again); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotManyJobs restores a ledger of 5,000 jobs, enough for its job
// index to split tables and double its directory while it is rebuilt, and
// checks that every job is found with the account it had, that the restored
// ledger writes the same bytes, and that it continues as the original does.
func TestSnapshotManyJobs(t *testing.T) {
	l := mustNew(t, Config{Mode: QuotaShare, Capacity: 4096})
	for k := range 7 {
		do(t, l, l.AddTenant(t0, TenantID(fmt.Sprintf("t%d", k)), float64(1+k%3)))
	}
	var ids []JobID
	must := func(err error) { // do checks the whole ledger: once, below
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5000 {
		at := ts(float64(i) / 10)
		id := JobID(fmt.Sprintf("job-%05d", i))
		ids = append(ids, id)
		must(l.Submit(at, id, TenantID(fmt.Sprintf("t%d", i%7)), GPUs(1+i%4), 1))
		if i%3 != 0 {
			must(l.Start(at, id))
		}
		if i%5 == 4 {
			must(l.Finish(at, ids[i-2], Completed))
		}
	}
	do(t, l, l.Advance(ts(600)))
	data, err := l.MarshalBinary()
	do(t, l, err)
	back, err := Restore(data)
	do(t, l, err)
	if again, _ := back.MarshalBinary(); !bytes.Equal(again, data) {
		t.Fatal("the restored ledger writes other bytes")
	}
	for _, id := range ids {
		x, err1 := l.JobAccount(id, l.Begin(), l.Now())
		y, err2 := back.JobAccount(id, back.Begin(), back.Now())
		if err1 != nil || err2 != nil || x != y {
			t.Fatalf("job %s: %v, %v restored as %v, %v", id, x, err1, y, err2)
		}
	}
	for _, m := range []*Ledger{l, back} {
		do(t, m, m.Stop(ts(601), ids[4999]))
		do(t, m, m.Submit(ts(602), "late", "t3", 2, 1))
		do(t, m, m.Advance(ts(700)))
	}
	a, _ := l.MarshalBinary()
	b, _ := back.MarshalBinary()
	if !bytes.Equal(a, b) {
		t.Fatal("the restored ledger continued differently")
	}
}
