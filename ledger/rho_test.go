package ledger

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

func TestRatioPolicy(t *testing.T) {
	tests := map[string]struct {
		alloc, fair GPUSeconds
		want        Rho
	}{
		"nothing owed and nothing received is exactly fair": {0, 0, 1},
		"service received while nothing owed is +Inf":       {5, 0, Rho(math.Inf(1))},
		"paper §十一 tenant A is 0.75":                        {54000, 72000, 0.75},
		"paper §十一 tenant B is 1.00":                        {72000, 72000, 1},
		"paper §十一 A after pre-credit of A1 is 0.85":        {54000 + 7200, 72000, 0.85},
		"paper §十一 A after pre-credit of A2 is 0.90":        {54000 + 7200 + 3600, 72000, 0.9},
		"NaN alloc counts as zero":                          {GPUSeconds(math.NaN()), 10, 0},
		"negative fair counts as zero":                      {0, -3, 1},
		"negative alloc counts as zero":                     {-4, 8, 0},
		"NaN fair with service received is +Inf":            {2, GPUSeconds(math.NaN()), Rho(math.Inf(1))},
		"a finite share of an infinite debt is 0":           {1e300, GPUSeconds(math.Inf(1)), 0},
		"infinite service of an infinite debt is 1":         {GPUSeconds(math.Inf(1)), GPUSeconds(math.Inf(1)), 1},
		"infinite service of a finite debt is +Inf":         {GPUSeconds(math.Inf(1)), 3, Rho(math.Inf(1))},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Ratio(tc.alloc, tc.fair)
			if math.IsNaN(float64(got)) {
				t.Fatalf("Ratio(%v, %v) is NaN", tc.alloc, tc.fair)
			}
			if math.Abs(float64(got-tc.want)) > 1e-12 && !(got.IsInf() && tc.want.IsInf()) {
				t.Fatalf("Ratio(%v, %v) = %v, want %v", tc.alloc, tc.fair, got, tc.want)
			}
		})
	}
}

func TestRhoCompareOrdersInfLast(t *testing.T) {
	inf := Rho(math.Inf(1))
	if inf.Compare(2) != 1 || Rho(2).Compare(inf) != -1 || inf.Compare(inf) != 0 {
		t.Fatal("+Inf must sort after finite values and equal itself")
	}
	if Rho(0.5).Compare(0.75) != -1 || Rho(0.75).Compare(0.75) != 0 {
		t.Fatal("finite compare broken")
	}
}

func TestRhoJSONRoundTrip(t *testing.T) {
	for _, r := range []Rho{0, 0.75, 1, 123.5, Rho(math.Inf(1))} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("marshal %v: %v", r, err)
		}
		var back Rho
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		if back.Compare(r) != 0 {
			t.Fatalf("round trip %v -> %s -> %v", r, b, back)
		}
	}
	if b, _ := json.Marshal(Rho(math.Inf(1))); string(b) != `"+Inf"` {
		t.Fatalf("+Inf encodes as %s", b)
	}
	for _, bad := range []string{`"NaN"`, `-1`, `"x"`, `{}`} {
		var r Rho
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Fatalf("unmarshal %s: want error", bad)
		}
	}
	if _, err := json.Marshal(Rho(math.NaN())); err == nil {
		t.Fatal("marshal NaN: want error")
	}
}

func TestRhoJSONErrors(t *testing.T) {
	for _, bad := range []string{`"NaN"`, `-1`, `"x"`, `{}`, `1e400`, ``, `"+Inf`} {
		r := Rho(0.5)
		err := r.UnmarshalJSON([]byte(bad))
		if !errors.Is(err, ErrInvalidValue) {
			t.Fatalf("unmarshal %q: got %v, want ErrInvalidValue", bad, err)
		}
		if r != 0.5 {
			t.Fatalf("unmarshal %q changed the value to %v", bad, r)
		}
	}
	// null is a no-op, as encoding/json treats it for its own types
	r := Rho(0.5)
	if err := json.Unmarshal([]byte(`null`), &r); err != nil || r != 0.5 {
		t.Fatalf("unmarshal null: %v, %v", r, err)
	}
	var in struct{ Rho Rho }
	if err := json.Unmarshal([]byte(`{"Rho": -2}`), &in); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("unmarshal a field: got %v, want ErrInvalidValue", err)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(-1)} {
		if _, err := json.Marshal(Rho(bad)); !errors.Is(err, ErrInvalidValue) {
			t.Fatalf("marshal %v: got %v, want ErrInvalidValue", bad, err)
		}
	}
}

// FuzzRhoJSON checks the ρ decoder on any bytes: it accepts only what it
// can encode again (a number ≥ 0 or +Inf, which round-trips to the same
// ρ), and rejects the rest with ErrInvalidValue, leaving the value as it
// was.
func FuzzRhoJSON(f *testing.F) {
	for _, s := range []string{`0`, `-0`, `0.75`, `1`, `123.5`, `1e-320`, `1e308`, `"+Inf"`, `"Inf"`, `null`,
		`-1`, `"NaN"`, `"-Inf"`, `1e400`, `{}`, `[]`, `"x"`, ``, `0.5 `, ` 2`, `"\u002bInf"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		const before = Rho(0.5)
		r := before
		if err := r.UnmarshalJSON(b); err != nil {
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("%q: error %v does not match ErrInvalidValue", b, err)
			}
			if math.Float64bits(float64(r)) != math.Float64bits(float64(before)) {
				t.Fatalf("%q: rejected, yet the value changed to %v", b, r)
			}
			return
		}
		if math.IsNaN(float64(r)) || r < 0 {
			t.Fatalf("%q: accepted as %v", b, r)
		}
		out, err := r.MarshalJSON()
		if err != nil {
			t.Fatalf("%q: accepted as %v, which does not encode: %v", b, r, err)
		}
		if !json.Valid(out) {
			t.Fatalf("%q: encodes as invalid JSON %q", b, out)
		}
		var back Rho
		if err := back.UnmarshalJSON(out); err != nil || back.Compare(r) != 0 {
			t.Fatalf("%q: %v encodes as %s, which decodes as %v (%v)", b, r, out, back, err)
		}
	})
}
