package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/simulate"
)

// historyError is a -history value the command refuses: the text as given
// and why. It matches simulate.ErrConfig, the error of the setting it
// would have made.
type historyError struct {
	text, reason string
}

func (e *historyError) Error() string { return fmt.Sprintf("%q: %s", e.text, e.reason) }
func (e *historyError) Unwrap() error { return simulate.ErrConfig }

// historyForms is what a -history value may be, for error messages.
const historyForms = "want a duration D ≥ 0 (a continuous trailing window, 0 for the whole run) or NxD (N ≥ 1 buckets of D > 0, e.g. 24x1h)"

// parseHistory reads a -history value: a Go duration D is a continuous
// trailing window of D (ledger.TrailingWindow), 0 the whole run
// (ledger.Unbounded); NxD, N a decimal count and D a duration, is the
// current bucket of D and the N−1 before it (ledger.Buckets), as the
// authors' simulator keeps 24 hourly buckets ("24x1h"). Anything else is a
// *historyError.
func parseHistory(s string) (ledger.History, error) {
	bad := func(reason string) (ledger.History, error) {
		return ledger.History{}, &historyError{text: s, reason: reason}
	}
	count, width, bucketed := strings.Cut(s, "x")
	if !bucketed {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			return bad(historyForms)
		case d < 0:
			return bad("a window must be ≥ 0, 0 for the whole run")
		case d == 0:
			return ledger.Unbounded(), nil
		}
		return ledger.TrailingWindow(d), nil
	}
	if count == "" || strings.Trim(count, "0123456789") != "" {
		return bad(historyForms)
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return bad("the bucket count must be a whole number ≥ 1")
	}
	w, err := time.ParseDuration(width)
	switch {
	case err != nil:
		return bad(historyForms)
	case w <= 0:
		return bad("the bucket width must be > 0")
	case int64(n) > math.MaxInt64/int64(w):
		return bad("the buckets span more than 292 years")
	}
	return ledger.Buckets(n, w), nil
}
