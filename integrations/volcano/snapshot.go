package volcano

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/astraea-sched/astraea/internal/atomicfile"
	"github.com/astraea-sched/astraea/ledger"
)

// ErrSnapshot is matched (errors.Is) by every error decoding a snapshot
// file: not one, damaged, or naming jobs its ledger does not have.
var ErrSnapshot = errors.New("astraea: bad snapshot")

// snapshotFormat names the file format and its version.
const snapshotFormat = "astraea-volcano/1"

// MaxSnapshotBytes bounds a snapshot file read at start-up, so that a wrong
// path (a device, a huge file) cannot exhaust memory.
const MaxSnapshotBytes = 1 << 30

// snapshot is the file: the ledger's own snapshot and the records that map
// Volcano's jobs onto it.
type snapshot struct {
	Format  string             `json:"format"`
	Records map[string]*record `json:"records"`
	Ledger  []byte             `json:"ledger"` // ledger.MarshalBinary, base64 in JSON
}

// encodeSnapshot returns the file's bytes.
func encodeSnapshot(l *ledger.Ledger, recs map[string]*record) ([]byte, error) {
	b, err := l.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return json.Marshal(snapshot{Format: snapshotFormat, Records: recs, Ledger: b})
}

// decodeSnapshot reads the file's bytes back. It checks every record
// against the restored ledger (the job exists, is active, belongs to the
// record's tenant, has its demand and is running exactly when the record
// says so), so the two cannot disagree after a restart; any failure
// matches ErrSnapshot.
func decodeSnapshot(data []byte) (*ledger.Ledger, map[string]*record, error) {
	var s snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	if s.Format != snapshotFormat {
		return nil, nil, fmt.Errorf("%w: format %q, want %q", ErrSnapshot, s.Format, snapshotFormat)
	}
	l, err := ledger.Restore(s.Ledger)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrSnapshot, err)
	}
	if s.Records == nil {
		s.Records = map[string]*record{}
	}
	ids := make(map[ledger.JobID]string, len(s.Records))
	for key, r := range s.Records {
		if r == nil {
			return nil, nil, fmt.Errorf("%w: job %q: null record", ErrSnapshot, key)
		}
		if other, dup := ids[r.Ledger]; dup {
			return nil, nil, fmt.Errorf("%w: jobs %q and %q share ledger id %q", ErrSnapshot, other, key, r.Ledger)
		}
		ids[r.Ledger] = key
		j, ok := l.Job(r.Ledger)
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("%w: job %q: ledger has no job %q", ErrSnapshot, key, r.Ledger)
		case !j.Active:
			return nil, nil, fmt.Errorf("%w: job %q: ledger job %q has finished", ErrSnapshot, key, r.Ledger)
		case j.Tenant != r.Tenant || j.Demand != r.Demand || j.Running != r.Running:
			return nil, nil, fmt.Errorf("%w: job %q: record (tenant %q, %d GPUs, running %t) differs from the ledger (tenant %q, %d GPUs, running %t)",
				ErrSnapshot, key, r.Tenant, r.Demand, r.Running, j.Tenant, j.Demand, j.Running)
		case r.Running && !r.Started, r.Gen < 0:
			return nil, nil, fmt.Errorf("%w: job %q: inconsistent record", ErrSnapshot, key)
		}
	}
	return l, s.Records, nil
}

// readSnapshot reads a snapshot file; os.ErrNotExist if there is none.
func readSnapshot(path string) (*ledger.Ledger, map[string]*record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSnapshotBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > MaxSnapshotBytes {
		return nil, nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrSnapshot, path, MaxSnapshotBytes)
	}
	l, recs, err := decodeSnapshot(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, recs, nil
}

// writeSnapshot writes the file atomically: a temporary file in the same
// directory, synced, renamed over path, and the directory synced, so that a
// crash leaves the old file or the new one, never a torn one.
func writeSnapshot(path string, l *ledger.Ledger, recs map[string]*record) error {
	data, err := encodeSnapshot(l, recs)
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, data, 0o600)
}
