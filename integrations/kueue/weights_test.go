package kueue

import (
	"errors"
	"math"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
)

func TestTarget(t *testing.T) {
	m := DefaultWeightMap()
	for _, tc := range []struct {
		name  string
		share float64
		rho   ledger.Rho
		want  float64
	}{
		{"a tenant served exactly what it was owed keeps the base weight", 1, 1, 1},
		{"a tenant served half of what it was owed gets twice the weight", 1, 0.5, 2},
		{"a tenant served twice what it was owed gets half the weight", 1, 2, 0.5},
		{"a tenant served nothing of what it was owed gets the upper bound", 1, 0, 4},
		{"a tenant served while owed nothing gets the lower bound", 1, ledger.Rho(math.Inf(1)), 0.25},
		{"a far-behind tenant is bounded above", 1, 0.01, 4},
		{"a far-ahead tenant is bounded below", 1, 100, 0.25},
		{"the share scales the weight", 2, 0.5, 4},
		{"weights are rounded to thousandths", 1, 3, 0.333},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := m.Target(tc.share, tc.rho); got != tc.want {
				t.Fatalf("Target(%g, %v) = %g, want %g", tc.share, tc.rho, got, tc.want)
			}
		})
	}
}

func TestNext(t *testing.T) {
	m := DefaultWeightMap() // band 10 %
	for _, tc := range []struct {
		name      string
		current   float64
		have      bool
		target    float64
		want      float64
		wantWrite bool
	}{
		{"a queue without a weight is always written", 0, false, 1, 1, true},
		{"an unchanged target writes nothing", 2, true, 2, 2, false},
		{"a rise inside the band keeps the old weight", 1, true, 1.09, 1, false},
		{"a fall inside the band keeps the old weight", 1, true, 0.92, 1, false},
		{"a rise of the band's size is written", 1, true, 1.1, 1.1, true},
		{"a fall of the band's size is written", 1.1, true, 1, 1, true},
		{"a large change is written", 0.25, true, 4, 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, write := m.Next(tc.current, tc.have, tc.target)
			if got != tc.want || write != tc.wantWrite {
				t.Fatalf("Next(%g, %v, %g) = %g, %v; want %g, %v", tc.current, tc.have, tc.target, got, write, tc.want, tc.wantWrite)
			}
		})
	}
}

// TestHysteresisDoesNotFlap: a ρ wobbling ±4 % around 0.5 writes once.
func TestHysteresisDoesNotFlap(t *testing.T) {
	m := DefaultWeightMap()
	cur, have, writes := 0.0, false, 0
	for i := range 100 {
		rho := ledger.Rho(0.5 * (1 + 0.04*math.Sin(float64(i))))
		w, write := m.Next(cur, have, m.Target(1, rho))
		if write {
			writes++
		}
		cur, have = w, true
	}
	if writes != 1 {
		t.Fatalf("%d writes for a ρ within ±4 %% of 0.5, want 1", writes)
	}
	if cur < 1.9 || cur > 2.1 {
		t.Fatalf("weight %g, want about 2", cur)
	}
}

func TestWeightMapValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    WeightMap
		ok   bool
	}{
		{"the default map is valid", DefaultWeightMap(), true},
		{"a factor of 1 (constant weights) is valid", WeightMap{Base: 1, MaxFactor: 1}, true},
		{"a zero base is refused", WeightMap{Base: 0, MaxFactor: 4}, false},
		{"a factor below 1 is refused", WeightMap{Base: 1, MaxFactor: 0.5}, false},
		{"a negative band is refused", WeightMap{Base: 1, MaxFactor: 4, Band: -0.1}, false},
		{"a lower bound below a thousandth is refused", WeightMap{Base: 1, MaxFactor: 2000}, false},
		{"NaN is refused", WeightMap{Base: math.NaN(), MaxFactor: 4}, false},
		{"an infinite factor is refused", WeightMap{Base: 1, MaxFactor: math.Inf(1)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.m.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrConfig)) {
				t.Fatalf("Validate() = %v, want ok %v (ErrConfig otherwise)", err, tc.ok)
			}
		})
	}
}
