package main

import (
	"strings"
	"testing"
)

// The output is the paper's section 11 round: A1 on node 1, A2 on node 2,
// A's ρ 0.75 → 0.85 → 0.90, B1 waits because 4 free GPUs cannot hold 8.
const want = `
ASTRAEA worked example (paper §11): 2 nodes × 8 GPUs, tenants A and B of equal weight, lease 900 s

Accounts at 9000 s (Eq. 16, quota 8 GPUs each):
  tenant A: received  54000 of  72000 GPU·s owed, ρ_tenant 0.75
  tenant B: received  72000 of  72000 GPU·s owed, ρ_tenant 1.00
  job A1 (tenant A): demand 8 GPUs, received  7200 of 14400 GPU·s owed, ρ_job 0.50
  job A2 (tenant A): demand 4 GPUs, received 28800 of 36000 GPU·s owed, ρ_job 0.80
  job B1 (tenant B): demand 8 GPUs, received  8000 of 20000 GPU·s owed, ρ_job 0.40

The round (Phase 1: lowest ρ_tenant; Phase 2: highest reward = −ρ_job):
step 1 (fair stage): tenant A (ρ 0.75) → job A1 (reward -0.5)
  A1 placed on node-1 GPUs 0-7 (new lease)
  pre-credit 8 GPUs × 900 s = 7200 GPU·s: ρ_A 0.75 → 0.85
step 2 (fair stage): tenant A (ρ 0.85) → job A2 (reward -0.8)
  A2 placed on node-2 GPUs 0-3 (new lease)
  pre-credit 4 GPUs × 900 s = 3600 GPU·s: ρ_A 0.85 → 0.90
step 3 (fair stage): tenant B (ρ 1.00) → job B1 (reward -0.4)
  B1 does not fit: needs 8 GPUs, largest free block 4 (4 free in total); tenant B leaves play for this round
step 4 (backfill stage): tenant B (ρ 1.00) → job B1 (reward -0.4)
  B1 does not fit: needs 8 GPUs, largest free block 4 (4 free in total)

Granted 2 leases; 4 of 16 GPUs free.
Why does B1 wait? It does not fit: needs 8 GPUs, largest free block 4 (4 free in total).
A gang is never split, so B1 cannot start on the 4 free GPUs. At the next lease
boundary A's account has grown and B's has not, so B is likely to be served first.
`

func TestOutput(t *testing.T) {
	var b strings.Builder
	if err := run(&b); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != strings.TrimPrefix(want, "\n") {
		t.Fatalf("output changed:\n%s\nwant:\n%s", got, strings.TrimPrefix(want, "\n"))
	}
}

func TestSpan(t *testing.T) {
	tests := map[string]struct {
		in   []int
		want string
	}{
		"a whole node":         {[]int{0, 1, 2, 3, 4, 5, 6, 7}, "0-7"},
		"one GPU":              {[]int{3}, "3"},
		"runs and single GPUs": {[]int{0, 1, 2, 5, 7, 8}, "0-2,5,7-8"},
		"nothing":              {nil, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := span(tc.in); got != tc.want {
				t.Fatalf("span(%v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
