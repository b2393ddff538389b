package oracle

import (
	"math"
	"testing"
)

const s = int64(1e9) // one second in ns

// The paper's §六 example computed by the oracle itself: 8 GPUs, two
// equal-weight jobs needing 1 and 8 GPUs are owed 1 and 4 GPUs per second.
func TestOracleEightGPUExample(t *testing.T) {
	o := New(false, 8, 0, 0)
	for _, k := range []Kind{
		o.AddTenant(0, "t", 1),
		o.Submit(0, "small", "t", 1, 1),
		o.Submit(0, "big", "t", 8, 1),
		o.Start(0, "big"),
		o.Advance(3600 * s),
	} {
		if k != OK {
			t.Fatalf("event rejected: %s", k)
		}
	}
	_, fs, _ := o.JobAccount("small", 0, 3600*s)
	ab, fb, _ := o.JobAccount("big", 0, 3600*s)
	if fs != 3600 || fb != 4*3600 || ab != 8*3600 {
		t.Fatalf("small fair %v, big fair %v alloc %v", fs, fb, ab)
	}
	if r, _ := o.JobFairRate("small"); r != 1 {
		t.Fatalf("small rate %v", r)
	}
}

func TestOracleRejectsLikeTheLedger(t *testing.T) {
	o := New(true, 4, 0, 0)
	tests := map[string]struct{ got, want Kind }{
		"unknown tenant":   {o.Submit(0, "j", "nobody", 1, 1), UnknownTenant},
		"bad weight":       {o.AddTenant(0, "t", math.NaN()), InvalidValue},
		"tenant added":     {o.AddTenant(0, "t", 1), OK},
		"duplicate tenant": {o.AddTenant(0, "t", 1), DuplicateTenant},
		"zero demand":      {o.Submit(0, "j", "t", 0, 1), InvalidValue},
		"job submitted":    {o.Submit(5, "j", "t", 1, 1), OK},
		"backwards":        {o.Start(4, "j"), TimeBackwards},
		"stop pending":     {o.Stop(5, "j"), InvalidTransition},
		"busy tenant":      {o.RemoveTenant(5, "t"), TenantBusy},
		"finished":         {o.Finish(6, "j", true), OK},
		"finish twice":     {o.Finish(6, "j", true), InvalidTransition},
		"duplicate job":    {o.Submit(6, "j", "t", 1, 1), DuplicateJob},
	}
	for name, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", name, tc.got, tc.want)
		}
	}
}

// Eq. 16 under decay: a tenant owed 4 GPUs for one half-life accrues
// 4·(1 − 1/2)/λ.
func TestOracleDecay(t *testing.T) {
	o := New(true, 4, 0, 100*s)
	o.AddTenant(0, "t", 1)
	o.Advance(100 * s)
	_, f, _ := o.TenantAccount("t", 0, 100*s)
	want := 4 * 0.5 / (math.Ln2 / 100)
	if math.Abs(f-want) > 1e-9*want {
		t.Fatalf("decayed fair %v, want %v", f, want)
	}
}

// Three buckets of 10 s keep the current bucket and the two before it: the
// start of history moves only at multiples of 10 s, never before the base.
func TestOracleBucketsBegin(t *testing.T) {
	o := NewBuckets(false, 4, 3, 10*s)
	for _, tc := range []struct{ at, begin int64 }{
		{0, 0}, {19 * s, 0}, {20 * s, 0}, {29*s + 1, 0}, {30 * s, 10 * s}, {39 * s, 10 * s}, {40 * s, 20 * s}, {125 * s, 100 * s},
	} {
		if got := o.beginAt(tc.at); got != tc.begin {
			t.Errorf("beginAt(%d s) = %d s, want %d s", tc.at/s, got/s, tc.begin/s)
		}
	}
}
