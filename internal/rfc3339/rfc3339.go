// Package rfc3339 parses RFC 3339 times as the standard allows them, for the
// trace readers and commands of this module.
//
// time.Parse with time.RFC3339 lets offsets through that RFC 3339 does not
// allow, hours up to 24 and minutes up to 60, and reads them: "+24:60" as
// 25 hours ahead, "+00:60" as "+01:00". A trace or a flag with such an
// offset is a mistake, and reading it as another instant would hide it.
package rfc3339

import (
	"errors"
	"strings"
	"time"
)

// ErrOffset is the error of a time whose offset RFC 3339 does not allow.
var ErrOffset = errors.New("rfc3339: offset out of range (hours 00-23, minutes 00-59)")

// Parse parses s, with or without fractional seconds, as time.Parse does
// with time.RFC3339Nano, and refuses the offsets RFC 3339 does not allow
// (ErrOffset). Other errors are time.Parse's.
func Parse(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	if strings.HasSuffix(s, "Z") {
		return t, nil
	}
	// time.Parse accepted s, so it ends in "±hh:mm".
	if hh, mm := s[len(s)-5:len(s)-3], s[len(s)-2:]; hh >= "24" || mm >= "60" {
		return time.Time{}, ErrOffset
	}
	return t, nil
}
