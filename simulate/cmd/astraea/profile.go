package main

import (
	"flag"
	"fmt"
	"strings"
)

// A profile is a named bundle of flag values: the conventions the paper
// leaves open, read one way. A flag given on the command line overrides
// its profile's value.
type profile struct {
	name    string
	summary string
	// settings are the profile's flag values, in the order they are
	// printed, each with its source: a section of the paper, "the
	// authors' simulator", or this project's choice with its reason.
	settings []setting
}

type setting struct {
	flag, value, source string
}

// defaultProfile is the command's profile when -profile is not given.
const defaultProfile = "paper"

// profiles are the command's -profile values. Every flag a profile names
// exists (TestProfilesNameRealFlags).
func profiles() []profile {
	return []profile{
		{
			name:    "paper",
			summary: "the library's reference reading of the paper (the default)",
			settings: []setting{
				{"admit", "tick", "§十二: each round handles the jobs submitted in the interval before it, so a job is owed from the tick that sees it"},
				{"drop-over-quota", "false", "the paper drops no job; a job larger than its tenant's quota borrows (§八: quota is lent and won back)"},
				{"metrics", "eq16", "§八, §十二: the policy's tenant accounts are Eq. 16; job ρ is read from the same books (tenant loss is shown under both)"},
				{"checkpoint", "10s", "our choice: the paper publishes no checkpoint time (§十二)"},
				{"coldstart", "30s", "our choice: the paper publishes no cold-start time (§十二)"},
				{"overhead", "false", "the direct overhead is the headline (§十六); the twin run's JCT rise depends on how two schedules diverge"},
				{"no-backfill", "false", "§九: a round repeats until no candidate fits the free GPUs and placement, so a small job of a tenant that left play still starts"},
				{"starved-below", "0", "not in the paper"},
				{"wait-first", "0s", "not in the paper"},
				{"displace-young", "0s", "not in the paper: a running job keeps its GPUs until its lease ends"},
				{"placement", "spread", "§十, §十八.6: a job goes on as few nodes as possible, which its free GPUs allow (on Venus, phase 0, drop on: 13.7 % sharing-loss jobs against 15.3 % strict)"},
				{"history", "0s", "§八: ρ is a ratio over [t_begin, t_now], the whole run"},
				{"job-share", "capped", "§六, §七: a job is owed min(demand, its tenant's share split over its active jobs), so a small job is not owed GPUs it cannot use"},
				{"spread-slowdown", "1", "§三 says a gang split over two machines usually runs slower than on one, but gives no figure: none is modelled"},
				{"new-jobs", "smallest", "§八: new jobs go first so that short jobs finish quickly; the formula is unpublished, and smallest first keeps a gang that does not fit from holding back its tenant's small jobs (Venus average JCT 13,726 s against 17,954 s, strict, drop on)"},
			},
		},
		{
			name:    "authors",
			summary: "the behaviour of the authors' public simulator, as far as this command emulates it",
			settings: []setting{
				{"admit", "tick", "the authors' simulator: a job enters at the round that sees it"},
				{"tick-phase", "0s", "the authors' simulator: ticks at t ≡ 0 mod the interval"},
				{"phases", "1", "the authors' simulator runs one tick phase"},
				{"drop-over-quota", "true", "the authors' simulator: jobs larger than their tenant's integer quota are dropped (here counted)"},
				{"checkpoint", "0s", "the authors' simulator charges no checkpoint time"},
				{"coldstart", "0s", "the authors' simulator charges no cold-start time"},
				{"metrics", "eq16", "the authors' simulator selects tenants by Eq. 16 (and reports tenants by Eq. 8, shown beside)"},
				{"overhead", "false", "no overheads are charged, so there is no twin to compare"},
				{"no-backfill", "true", "the authors' simulator: a tenant stops for the round at its first job that does not fit, and there is no backfill stage"},
				{"starved-below", "0.2", "the authors' simulator: a tenant running below 20 % of its quota is served before the ρ order"},
				{"wait-first", "6h", "the authors' simulator: jobs pending 6 h since they last ran go first in their tenant, oldest submission first"},
				{"displace-young", "300s", "the authors' simulator: a new job may preempt its own tenant's jobs that have run less than 300 s of their current lease, which lose that lease's progress (here after the round, for the new job at which its tenant left play)"},
				{"placement", "firstfit", "the authors' simulator: first-fit over nodes in order, spreading a job it cannot consolidate"},
				{"history", "24x1h", "the authors' simulator: its last 24 hourly buckets"},
				{"job-share", "split", "the authors' simulator: a job is owed its tenant's quota split equally over the tenant's active jobs, without the demand cap (ρ_job in the results stays capped)"},
				{"spread-slowdown", "1", "the authors' simulator runs a spread job at full speed"},
				{"new-jobs", "smallest", "the authors' simulator: a tenant's new jobs smallest demand first"},
			},
		},
		{
			name:    "v1",
			summary: "the first release's defaults, to re-run old results",
			settings: []setting{
				{"admit", "submit", "v1: owed from the submission"},
				{"drop-over-quota", "false", "v1: over-quota jobs run"},
				{"metrics", "eq16", "v1: Eq. 16"},
				{"checkpoint", "10s", "v1"},
				{"coldstart", "30s", "v1"},
				{"overhead", "true", "v1: the twin run without overheads"},
				{"no-backfill", "false", "v1: backfill"},
				{"starved-below", "0", "v1"},
				{"wait-first", "0s", "v1"},
				{"displace-young", "0s", "v1"},
				{"placement", "strict", "v1: strict consolidation"},
				{"history", "0s", "v1: the whole run"},
				{"job-share", "capped", "v1: capped at the demand"},
				{"spread-slowdown", "1", "v1: no spread slowdown"},
				{"new-jobs", "fifo", "v1: new jobs first in, first out"},
			},
		},
	}
}

// profileNamed returns the profile called name.
func profileNamed(name string) (profile, bool) {
	for _, p := range profiles() {
		if p.name == name {
			return p, true
		}
	}
	return profile{}, false
}

func profileNames() string {
	var names []string
	for _, p := range profiles() {
		names = append(names, p.name)
	}
	return strings.Join(names, ", ")
}

// applyProfile sets on fs, which has parsed the command line, every value
// of the profile name whose flag the command line did not give, and
// returns the profile and the conventions the run uses.
func applyProfile(fs *flag.FlagSet, name string) (profile, []convention, error) {
	p, ok := profileNamed(name)
	if !ok {
		return profile{}, nil, fmt.Errorf("-profile %q: unknown (known: %s)", name, profileNames())
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, s := range p.settings {
		if given[s.flag] {
			continue
		}
		if err := fs.Set(s.flag, s.value); err != nil {
			return profile{}, nil, fmt.Errorf("profile %s: -%s %s: %w", p.name, s.flag, s.value, err)
		}
	}
	return p, conventions(fs, p, given), nil
}

// conventions describes the settings a run uses: the profile's, each
// marked when the command line overrode it.
func conventions(fs *flag.FlagSet, p profile, given map[string]bool) []convention {
	var out []convention
	for _, s := range p.settings {
		c := convention{Flag: s.flag, Value: fs.Lookup(s.flag).Value.String(), Source: s.source}
		if given[s.flag] {
			c.Source, c.Overridden = "given on the command line", true
		}
		out = append(out, c)
	}
	return out
}

// convention is one setting of the profile as it ran (JSON "conventions").
type convention struct {
	Flag       string `json:"flag"`
	Value      string `json:"value"`
	Source     string `json:"source"`
	Overridden bool   `json:"overridden,omitempty"`
}
