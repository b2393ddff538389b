package kueue

import "errors"

// Sentinel errors; every error of this package wraps one of them (or a
// ledger sentinel, for an event the ledger refused) so that callers branch
// with errors.Is.
var (
	// ErrConfig: an Options or WeightMap value that cannot work (a
	// non-positive period, an unknown tenancy, a weight map out of range).
	ErrConfig = errors.New("kueue: invalid config")
	// ErrWorkload: a Workload whose GPU request cannot be read (a negative
	// or fractional GPU count, a total beyond ledger.MaxGPUs).
	ErrWorkload = errors.New("kueue: unusable workload")
)
