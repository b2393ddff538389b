package simulate

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/placement"
)

// FuzzConfigValidate: no configuration makes Validate panic or allocate a
// cluster beyond MaxNodes and MaxClusterGPUs; an oversized one, or one
// with a SpreadSlowdown outside [0, 1], is ErrConfig.
func FuzzConfigValidate(f *testing.F) {
	f.Add(100, 8, int64(10*time.Second), int64(15*time.Minute), int64(10*time.Second), int64(30*time.Second), 1.0)
	f.Add(math.MaxInt, 8, int64(time.Second), int64(time.Hour), int64(0), int64(0), 0.8)
	f.Add(10000000, 8, int64(time.Second), int64(time.Hour), int64(0), int64(0), 0.0)
	f.Add(100, math.MaxInt, int64(time.Second), int64(time.Hour), int64(0), int64(0), 1.5)
	f.Add(1, 1, int64(-1), int64(-1), int64(-1), int64(1<<62), math.NaN())
	f.Add(100, 8, int64(10*time.Second), int64(15*time.Minute), int64(10*time.Second), int64(30*time.Second), -0.5)
	f.Fuzz(func(t *testing.T, nodes, gpn int, interval, lease, ckpt, cold int64, slow float64) {
		cfg := DefaultConfig(nodes, gpn, map[string]float64{"x": 1})
		cfg.Interval, cfg.Lease = time.Duration(interval), time.Duration(lease)
		cfg.Checkpoint, cfg.ColdStart = time.Duration(ckpt), time.Duration(cold)
		cfg.SpreadSlowdown = slow
		oversized := nodes > MaxNodes || (nodes > 0 && gpn > MaxClusterGPUs/nodes)
		if !oversized && nodes > 4096 {
			return // a valid large cluster: building it only costs time
		}
		err := cfg.Validate()
		if oversized && !errors.Is(err, ErrConfig) {
			t.Fatalf("%d × %d GPUs: %v, want ErrConfig", nodes, gpn, err)
		}
		if !(slow >= 0 && slow <= 1) && !errors.Is(err, ErrConfig) {
			t.Fatalf("SpreadSlowdown %v: %v, want ErrConfig", slow, err)
		}
		if err != nil && !errors.Is(err, ErrConfig) {
			t.Fatalf("an error that is not ErrConfig: %v", err)
		}
	})
}

// TestConfigNodesTotal: explicit Nodes are refused by name once their GPUs
// add up to more than MaxClusterGPUs, nodes of one GPU counted too, before
// any cluster is built; at the limit they pass that check.
func TestConfigNodesTotal(t *testing.T) {
	big := make([]placement.Node, MaxClusterGPUs/placement.MaxNodeGPUs)
	for i := range big {
		big[i] = placement.Node{ID: fmt.Sprintf("n%03d", i), GPUs: placement.MaxNodeGPUs}
	}
	cfg := DefaultConfig(0, 0, map[string]float64{"x": 1})
	cfg.Nodes = append(big, placement.Node{ID: "one", GPUs: 1})
	_, err := cfg.nodes()
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "more than MaxClusterGPUs") {
		t.Fatalf("%d GPUs in %d nodes: %v, want ErrConfig naming MaxClusterGPUs", MaxClusterGPUs+1, len(cfg.Nodes), err)
	}
	cfg.Nodes = big
	if _, err := cfg.nodes(); err != nil {
		t.Fatalf("exactly MaxClusterGPUs GPUs: %v", err)
	}
}
