package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"testing"
	"time"
)

// The checksum only catches accidents. A snapshot written by a faulty or
// hostile encoder, with a valid checksum around a record that breaks the
// ledger's rules, must be rejected too (ErrCorruptSnapshot), not restored.
// Each case breaks one rule in a sample ledger before it is encoded.
func TestRestoreRejectsCraftedSnapshots(t *testing.T) {
	for _, tc := range []struct {
		name  string
		craft func(l *Ledger)
	}{
		{"two jobs with one id", func(l *Ledger) { l.jobs.get("a2").id = "a1" }},
		{"two tenants with one id", func(l *Ledger) { l.tenants[1].id = l.tenants[0].id }},
		{"a tenant with a negative weight", func(l *Ledger) { l.tenants[0].weight = -1 }},
		{"a tenant that is its own parent", func(l *Ledger) { l.tenants[0].parent = l.tenants[0] }},
		{"two tenants each the other's parent", func(l *Ledger) {
			l.tenants[0].parent, l.tenants[1].parent = l.tenants[1], l.tenants[0]
		}},
		{"a tenant with jobs under a tenant with jobs", func(l *Ledger) { l.tenants[1].parent = l.tenants[0] }},
		{"a tenant in its sibling's kid group", func(l *Ledger) {
			g := &group{theta: 1, kid: true, n: 1}
			g.s.set(0, 1, 0, 0)
			l.tenants[0].kgroups = append(l.tenants[0].kgroups, g)
			l.tenants[1].pg = g
		}},
		{"a finished job without a final state", func(l *Ledger) { l.jobs.get("b1").final = 0 }},
		{"an active job with a final state", func(l *Ledger) { l.jobs.get("a2").final = Completed }},
		{"a job in an unknown state", func(l *Ledger) { l.jobs.get("a2").state = finished + 1 }},
		{"a job submitted after now", func(l *Ledger) { l.jobs.get("a2").submit = l.now + 1 }},
		{"a job submitted before the clock began", func(l *Ledger) { l.jobs.get("a2").submit = -1 }},
		{"a job finished before it was submitted", func(l *Ledger) {
			j := l.jobs.get("b1")
			j.finish = j.submit - 1
		}},
		{"a job finished after now", func(l *Ledger) { l.jobs.get("b1").finish = l.now + 1 }},
		{"an active job with a finish time", func(l *Ledger) { l.jobs.get("a2").finish = 1 }},
		{"an active job without segments", func(l *Ledger) { l.jobs.get("a2").segs = nil }},
		{"a segment before the job's submit", func(l *Ledger) {
			j := l.jobs.get("a2")
			j.submit = j.segs[0].from + 1
		}},
		{"a segment after now", func(l *Ledger) {
			j := l.jobs.get("a2")
			j.segs[len(j.segs)-1].from = l.now + 1
		}},
		{"a segment with a negative weight", func(l *Ledger) { l.jobs.get("a2").segs[0].w = -2 }},
		{"a segment with a negative base", func(l *Ledger) { l.jobs.get("a2").segs[0].base = -1 }},
		{"a segment with a negative group value", func(l *Ledger) { l.jobs.get("a2").segs[0].gFrom = -1 }},
		{"a job's segment in another tenant's group", func(l *Ledger) {
			l.jobs.get("a2").segs[0].g = l.jobs.get("b1").segs[0].g
		}},
		{"a group with θ 0", func(l *Ledger) { l.tenants[0].groups[0].theta = 0 }},
		{"a group with a negative θ", func(l *Ledger) { l.tenants[0].groups[0].theta = -1 }},
		{"a group with θ NaN", func(l *Ledger) { l.tenants[0].groups[0].theta = math.NaN() }},
		{"a group with a negative size", func(l *Ledger) { l.tenants[0].groups[0].n = -1 }},
		{"a kid group with a negative θ", func(l *Ledger) { kidGroup(t, l).theta = -1 }},
		{"a kid group with θ NaN", func(l *Ledger) { kidGroup(t, l).theta = math.NaN() }},
		{"a kid group with a negative size", func(l *Ledger) { kidGroup(t, l).n = -1 }},
		{"a tenant segment with a negative weight", func(l *Ledger) { tenantSeg(t, l).w = -1 }},
		{"a tenant segment with an infinite weight", func(l *Ledger) { tenantSeg(t, l).w = math.Inf(1) }},
		{"a tenant segment with a negative base", func(l *Ledger) { tenantSeg(t, l).base = -1 }},
		{"a tenant segment with a negative group value", func(l *Ledger) { tenantSeg(t, l).gFrom = -1 }},
		{"a tenant segment after now", func(l *Ledger) { tenantSeg(t, l).from = l.now + 1 }},
		{"a clock before its base", func(l *Ledger) { l.base = l.now + 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := sampleLedger(t, Unbounded())
			tc.craft(l)
			data, err := l.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if got, err := Restore(data); !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("Restore = %v, %v; want ErrCorruptSnapshot", got, err)
			}
		})
	}
	// The untouched sample restores, so each rejection above is the craft's.
	data, _ := sampleLedger(t, Unbounded()).MarshalBinary()
	if _, err := Restore(data); err != nil {
		t.Fatalf("untouched sample: %v", err)
	}
}

// kidGroup returns the first kid group of the sample's tree.
func kidGroup(t *testing.T, l *Ledger) *group {
	t.Helper()
	for _, n := range append([]*tenant{l.root}, l.tenants...) {
		if len(n.kgroups) > 0 {
			return n.kgroups[0]
		}
	}
	t.Fatal("the sample has no kid group")
	return nil
}

// tenantSeg returns the last segment of the first tenant that has one.
func tenantSeg(t *testing.T, l *Ledger) *segment {
	t.Helper()
	for _, tn := range l.tenants {
		if len(tn.segs) > 0 {
			return &tn.segs[len(tn.segs)-1]
		}
	}
	t.Fatal("the sample has no tenant segment")
	return nil
}

// TestRestoreEveryByteChangeResealed changes each byte of a sample
// snapshot's payload (to 0, 0xFF, one more and one less) and cuts the
// payload at every length, each time with a valid frame and checksum, so
// that the decoder itself meets the damage: every result is refused with
// ErrCorruptSnapshot or restores to a ledger that passes Check, and none
// panics.
func TestRestoreEveryByteChangeResealed(t *testing.T) {
	data, err := sampleLedger(t, Unbounded()).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	payload := data[snapHeader : len(data)-4]
	reseal := func(p []byte) []byte {
		b := append([]byte(nil), data[:snapHeader]...)
		binary.LittleEndian.PutUint64(b[len(snapMagic)+2:], uint64(len(p)))
		b = append(b, p...)
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	}
	for i := range payload {
		for _, x := range []byte{0, 0xFF, payload[i] + 1, payload[i] - 1} {
			if x == payload[i] {
				continue
			}
			p := bytes.Clone(payload)
			p[i] = x
			fuzzRestore(t, reseal(p))
		}
		fuzzRestore(t, reseal(payload[:i]))
	}
}

// A start time that time.Time cannot encode (a zone offset of 1,000 hours)
// makes MarshalBinary fail, rather than write a snapshot without its
// start.
func TestMarshalBinaryRefusesAnUnencodableStart(t *testing.T) {
	l := mustNew(t, Config{Mode: QuotaShare, Capacity: 16, Start: time.Date(2020, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 1000*3600))})
	if data, err := l.MarshalBinary(); err == nil {
		t.Fatalf("MarshalBinary = %d bytes, nil; want an error for the start time", len(data))
	}
}
