package volcano_test

import (
	"errors"
	"fmt"

	"volcano.sh/volcano/pkg/scheduler/framework"

	"github.com/astraea-sched/astraea/integrations/volcano"
)

// The arguments under `- name: astraea` in the scheduler configuration, as
// Volcano hands them to the plugin.
func ExampleParseArguments() {
	cfg, err := volcano.ParseArguments(framework.Arguments{
		volcano.ArgMode:    "eq8",
		volcano.ArgHistory: "half-life=168h",
		volcano.ArgLease:   "10m",
	})
	fmt.Println(cfg.Mode, cfg.History, cfg.Lease, cfg.Resource, err)

	_, err = volcano.ParseArguments(framework.Arguments{"astraea.leas": "10m"})
	fmt.Println(errors.Is(err, volcano.ErrArgument))
	// Output:
	// DemandAware half-life 168h0m0s 10m0s nvidia.com/gpu <nil>
	// true
}
