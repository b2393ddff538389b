package checkpoint

import (
	"errors"
	"math"
	"path/filepath"
	"testing"
)

func TestResumeIsBitExact(t *testing.T) {
	const n = 3 * Samples / 2
	want := Train(9, n)
	// Stop at every possible iteration, go through the encoding, continue.
	for cut := uint64(0); cut <= n; cut += 7 {
		s := Train(9, cut)
		b, _ := s.MarshalBinary()
		var back Snapshot
		if err := back.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		tr := NewTrainer(9)
		for back.Iter < n {
			back = tr.Step(back)
		}
		for i := range want.Params {
			if math.Float64bits(back.Params[i]) != math.Float64bits(want.Params[i]) {
				t.Fatalf("cut at %d: %v, want %v", cut, back, want)
			}
		}
	}
}

func TestTrainingConverges(t *testing.T) {
	s := Train(3, 200*Samples)
	d := NewDataset(3)
	var mse float64
	for i := range Samples {
		p := s.Params[Features]
		for f := range Features {
			p += s.Params[f] * d.X[i][f]
		}
		mse += (p - d.Y[i]) * (p - d.Y[i])
	}
	if mse /= Samples; mse > 1e-3 {
		t.Fatalf("mean squared error %g after 200 epochs", mse)
	}
}

func TestSnapshotFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.snap")
	if _, ok, err := ReadFile(p); ok || err != nil {
		t.Fatalf("missing file: ok=%v err=%v", ok, err)
	}
	want := Train(1, 10)
	if err := WriteFile(p, want); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, Train(1, 11)); err != nil { // replaces atomically
		t.Fatal(err)
	}
	got, ok, err := ReadFile(p)
	if err != nil || !ok || got.Iter != 11 {
		t.Fatalf("ReadFile = %v, %v, %v", got, ok, err)
	}
	matches, _ := filepath.Glob(p + ".tmp-*")
	if len(matches) != 0 {
		t.Fatalf("temporary files left behind: %v", matches)
	}
}

func TestSnapshotRejectsDamage(t *testing.T) {
	good, _ := Train(1, 5).MarshalBinary()
	tests := map[string]struct {
		b    []byte
		want error
	}{
		"a truncated file": {good[:len(good)-1], ErrCorrupt},
		"an empty file":    {nil, ErrCorrupt},
		"a flipped bit": {func() []byte {
			b := append([]byte(nil), good...)
			b[30] ^= 1
			return b
		}(), ErrCorrupt},
		"a wrong magic": {func() []byte {
			b := append([]byte(nil), good...)
			b[0] = 'X'
			return b
		}(), ErrCorrupt},
	}
	for name, tc := range tests {
		var s Snapshot
		if err := s.UnmarshalBinary(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		}
	}
}

func FuzzSnapshot(f *testing.F) {
	good, _ := Train(1, 5).MarshalBinary()
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte("ASTRCKPT"))
	before := Train(2, 3)
	f.Fuzz(func(t *testing.T, b []byte) {
		s := before
		if err := s.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("untyped error %v", err)
			}
			if s != before {
				t.Fatalf("rejected, yet the snapshot changed to %+v", s)
			}
			return
		}
		again, _ := s.MarshalBinary()
		if string(again) != string(b) {
			t.Fatalf("decode-encode changed the bytes")
		}
	})
}
