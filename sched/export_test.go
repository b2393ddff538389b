package sched

import "pgregory.net/rapid"

// ReferenceRound is the specification of a round, in spec_example_test.go
// (package sched_test, which sets it): the property tests hold Round to it.
var ReferenceRound func(Input, Options) (Result, error)

// reference runs ReferenceRound and fails the test on an error, which the
// valid rounds of the tests never give.
func reference(t *rapid.T, in Input, opts Options) Result {
	res, err := ReferenceRound(in, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
