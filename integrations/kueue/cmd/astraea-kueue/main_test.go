package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/astraea-sched/astraea/integrations/kueue"
	"github.com/astraea-sched/astraea/ledger"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		flag string // the flag a refusal names; "" when accepted
		ok   func(config) bool
	}{
		{"no flags give the documented defaults", nil, "", func(c config) bool {
			return c.opts.Tenancy == kueue.ByLocalQueue && c.opts.Mode == ledger.DemandAware &&
				c.opts.Period == 30*time.Second && c.opts.Weights == kueue.DefaultWeightMap() && c.opts.GPU == kueue.DefaultGPU
		}},
		{"ClusterQueue tenancy and quota mode are read", []string{"-tenant", "ClusterQueue", "-mode", "quota"}, "", func(c config) bool {
			return c.opts.Tenancy == kueue.ByClusterQueue && c.opts.Mode == ledger.QuotaShare
		}},
		{"a half-life is a history", []string{"-half-life", "24h"}, "", func(c config) bool {
			return c.opts.History.HalfLifeDuration() == 24*time.Hour
		}},
		{"an unknown tenancy is refused", []string{"-tenant", "Namespace"}, "-tenant", nil},
		{"an unknown mode is refused", []string{"-mode", "fifo"}, "-mode", nil},
		{"a half-life and a window together are refused", []string{"-half-life", "1h", "-window", "1h"}, "-half-life", nil},
		{"a negative capacity is refused", []string{"-capacity", "-1"}, "-capacity", nil},
		{"a zero period is refused", []string{"-period", "0s"}, "-period", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parse(tc.args, &zap.Options{})
			if tc.flag != "" {
				if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.flag) {
					t.Fatalf("parse(%q) = %v, want an errUsage naming %s", tc.args, err, tc.flag)
				}
				return
			}
			if err != nil || !tc.ok(c) {
				t.Fatalf("parse(%q) = %+v, %v", tc.args, c, err)
			}
		})
	}
}
