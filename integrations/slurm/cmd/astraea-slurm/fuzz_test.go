package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/integrations/slurm"
)

// FuzzParseTime checks the parser of -from, -to and -now on any text: an
// error matches slurm.ErrBadTime, and a time it accepts reads back as the
// same instant from its RFC 3339 form, in any zone.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2024-05-01T10:00:00", "2024-05-01T10:00:00Z", "2024-05-01T10:00:00.5+02:00",
		"2024-05-01", " 2024-05-01 ", "2024-02-30", "yesterday", "", "0000-01-01T00:00:00", "9999-12-31T23:59:59-23:59",
		"2024-05-01T24:00:00", "2024-05-01T10:00:00+24:00", "2024-05-01T10:00:00-00:00", "2024-05-01T10:00:00+00:60",
		"2024-05-01T10:00:00+23:59"} {
		f.Add(s)
	}
	zones := []*time.Location{time.UTC, time.FixedZone("UTC-5", -5*3600), time.FixedZone("UTC+5:45", 5*3600+45*60)}
	f.Fuzz(func(t *testing.T, s string) {
		for _, loc := range zones {
			got, err := parseTime(s, loc)
			if err != nil {
				var te *timeError
				if !errors.Is(err, slurm.ErrBadTime) || !errors.As(err, &te) || te.s != strings.TrimSpace(s) {
					t.Fatalf("parseTime(%q): error %v does not match slurm.ErrBadTime or does not name the text", s, err)
				}
				continue
			}
			back, err := parseTime(got.Format(time.RFC3339Nano), loc)
			if err != nil || !back.Equal(got) {
				t.Fatalf("parseTime(%q) = %v; its RFC 3339 form reads back as %v, %v", s, got, back, err)
			}
		}
	})
}
