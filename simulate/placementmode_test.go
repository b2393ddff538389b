package simulate

import (
	"errors"
	"testing"

	"github.com/astraea-sched/astraea/placement"
)

// TestConfigPlacementModes: a configuration of every placement mode is
// valid; one of a mode that does not exist is ErrConfig.
func TestConfigPlacementModes(t *testing.T) {
	for _, m := range []placement.Mode{placement.Strict, placement.FewestNodes, placement.FirstFit} {
		cfg := DefaultConfig(4, 8, map[string]float64{"x": 1})
		cfg.Placement = m
		if err := cfg.Validate(); err != nil {
			t.Errorf("%v: %v", m, err)
		}
	}
	cfg := DefaultConfig(4, 8, map[string]float64{"x": 1})
	cfg.Placement = placement.Mode(9)
	if err := cfg.Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("Mode(9): %v, want ErrConfig", err)
	}
}
