package volcano

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
)

func TestSnapshotRoundTrip(t *testing.T) {
	l, recs := newLedger(t), map[string]*record{}
	run := jobObs{key: "ns/run", uid: "u1", tenant: "qa", demand: 4, formed: true, running: true}
	wait := jobObs{key: "ns/wait", tenant: "qb", demand: 2, formed: true}
	step(t, l, recs, twoQueues(run, wait), t1)
	step(t, l, recs, twoQueues(run, wait), t2)
	path := filepath.Join(t.TempDir(), "s.json")
	if err := writeSnapshot(path, l, recs); err != nil {
		t.Fatal(err)
	}
	l2, recs2, err := readSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(recs, recs2) {
		t.Fatalf("records: %+v, want %+v", recs2, recs)
	}
	// both continue identically
	step(t, l, recs, twoQueues(wait), t3)
	step(t, l2, recs2, twoQueues(wait), t3)
	for _, q := range []string{"qa", "qb"} {
		a, _ := l.TenantAccount(ledger.TenantID(q), t0, t3)
		b, _ := l2.TenantAccount(ledger.TenantID(q), t0, t3)
		if a != b {
			t.Fatalf("%s: restored %+v, never stopped %+v", q, b, a)
		}
	}
}

func TestSnapshotRejects(t *testing.T) {
	l, recs := newLedger(t), map[string]*record{}
	step(t, l, recs, twoQueues(jobObs{key: "ns/a", tenant: "qa", demand: 4, formed: true, running: true}), t1)
	good, err := encodeSnapshot(l, recs)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty input":               nil,
		"not JSON":                  []byte("ledger"),
		"another format":            bytes.Replace(good, []byte(snapshotFormat), []byte("astraea-volcano/9"), 1),
		"a record the ledger lacks": bytes.Replace(good, []byte(`"ledger":"ns/a"`), []byte(`"ledger":"ns/b"`), 1),
		"a record's demand differs": bytes.Replace(good, []byte(`"demand":4`), []byte(`"demand":5`), 1),
		"a record not running":      bytes.Replace(good, []byte(`"running":true`), []byte(`"running":false`), 1),
		"a truncated file":          good[:len(good)/2],
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := decodeSnapshot(data); !errors.Is(err, ErrSnapshot) {
				t.Fatalf("err = %v, want ErrSnapshot", err)
			}
		})
	}
	t.Run("a missing file is fs.ErrNotExist", func(t *testing.T) {
		if _, _, err := readSnapshot(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v", err)
		}
	})
}

// FuzzDecodeSnapshot checks that any input is decoded or refused with
// ErrSnapshot, never a panic, and that what is accepted encodes to a file
// that decodes to the same records.
func FuzzDecodeSnapshot(f *testing.F) {
	l, err := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Start: t0})
	if err != nil {
		f.Fatal(err)
	}
	good, err := encodeSnapshot(l, map[string]*record{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"format":"astraea-volcano/1","records":{"x":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, recs, err := decodeSnapshot(data)
		if err != nil {
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("err = %v, not ErrSnapshot", err)
			}
			return
		}
		again, err := encodeSnapshot(l, recs)
		if err != nil {
			t.Fatal(err)
		}
		_, recs2, err := decodeSnapshot(again)
		if err != nil || !reflect.DeepEqual(recs, recs2) {
			t.Fatalf("re-encoded snapshot: %v, %+v want %+v", err, recs2, recs)
		}
	})
}
