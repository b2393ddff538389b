package rfc3339

import (
	"errors"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Time // zero: refused
		off  bool      // refused for its offset
	}{
		{"2024-03-01T08:00:00Z", time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC), false},
		{"2024-03-01T08:00:00.5+05:30", time.Date(2024, 3, 1, 2, 30, 0, 5e8, time.UTC), false},
		{"2024-03-01T00:00:00+23:59", time.Date(2024, 2, 29, 0, 1, 0, 0, time.UTC), false},
		{"2024-03-01T08:00:00-08:00", time.Date(2024, 3, 1, 16, 0, 0, 0, time.UTC), false},
		{"2024-03-01T08:00:00+24:00", time.Time{}, true},
		{"2024-03-01T08:00:00-24:00", time.Time{}, true},
		{"2024-03-01T08:00:00+24:60", time.Time{}, true},
		{"2024-03-01T08:00:00+00:60", time.Time{}, true},
		{"2024-03-01T08:00:00z", time.Time{}, false},
		{"2024-03-01 08:00:00", time.Time{}, false},
		{"", time.Time{}, false},
	} {
		got, err := Parse(tt.in)
		switch {
		case tt.want.IsZero() && err == nil:
			t.Errorf("Parse(%q) = %v, want an error", tt.in, got)
		case tt.want.IsZero() && errors.Is(err, ErrOffset) != tt.off:
			t.Errorf("Parse(%q): error %v, ErrOffset %v", tt.in, err, tt.off)
		case !tt.want.IsZero() && (err != nil || !got.Equal(tt.want)):
			t.Errorf("Parse(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"2024-03-01T08:00:00Z", "2024-03-01T08:00:00.5+05:30", "2024-03-01T08:00:00+24:60", "0000-01-01T0:00:00+00:60"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Parse(s)
		if err != nil {
			return
		}
		// An accepted time reads back as the same instant and offset.
		again, err := Parse(got.Format(time.RFC3339Nano))
		if err != nil || !again.Equal(got) {
			t.Fatalf("Parse(%q) = %v, which reads back as %v, %v", s, got, again, err)
		}
		if _, off := got.Zone(); off <= -24*3600 || off >= 24*3600 {
			t.Fatalf("Parse(%q) has offset %ds", s, off)
		}
	})
}
