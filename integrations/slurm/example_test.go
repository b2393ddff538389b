package slurm_test

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/astraea-sched/astraea/integrations/slurm"
	"github.com/astraea-sched/astraea/ledger"
)

// Replay a day of sacct output for two accounts with shares 3:1 on 4 GPUs,
// print the sshare-like report and the SiteFactor updates for the queue.
func Example() {
	sacct := `JobIDRaw|Account|AllocTRES|ReqTRES|Submit|Start|End|State
101|chem|billing=4,cpu=4,gres/gpu=4,node=1|cpu=4,gres/gpu=4|2024-05-01T00:00:00|2024-05-01T00:00:00|2024-05-01T12:00:00|COMPLETED
102|phys|cpu=2,gres/gpu:a100=2,node=1|cpu=2,gres/gpu:a100=2|2024-05-01T12:00:00|2024-05-01T12:00:00|Unknown|RUNNING
`
	sshare := `Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare
root|||0.000000|0|1.000000|
 chem||1|0.250000|0|0.000000|
 phys||3|0.750000|0|0.000000|
`
	squeue := "103|chem|gres:gpu:1\n104|phys|gres:gpu:2\n"

	opts := slurm.Options{Location: time.UTC}
	recs, _, err := slurm.ParseSacct(strings.NewReader(sacct), opts)
	if err != nil {
		panic(err)
	}
	jobs, _, err := slurm.GroupJobs(recs, false)
	if err != nil {
		panic(err)
	}
	shares, _, err := slurm.ParseSshare(strings.NewReader(sshare), opts)
	if err != nil {
		panic(err)
	}
	rep, err := slurm.Replay(jobs, slurm.Config{
		Mode:     ledger.QuotaShare,
		Capacity: 4,
		Weights:  slurm.Weights(shares),
		Now:      time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC), // job 102 is billed up to now
	})
	if err != nil {
		panic(err)
	}
	if err := slurm.WriteReport(os.Stdout, rep, slurm.FormatCSV); err != nil {
		panic(err)
	}
	pending, _, err := slurm.ParsePending(strings.NewReader(squeue), opts)
	if err != nil {
		panic(err)
	}
	updates, _ := slurm.SiteFactors(rep.Rows, pending, 1000)
	for _, u := range updates {
		fmt.Println(u)
	}
	// Output:
	// account,raw_shares,norm_shares,used_gpu_hours,owed_gpu_hours,used_gpu_seconds,owed_gpu_seconds,rho,rank
	// phys,3,0.750000,24.000000,72.000000,86400.000,259200.000,0.3333,1
	// chem,1,0.250000,48.000000,24.000000,172800.000,86400.000,2.0000,2
	// scontrol update JobId=103 SiteFactor=0
	// scontrol update JobId=104 SiteFactor=1000
}

// Read a share tree with Fairshare=parent: speech takes no share of its
// own, so its user counts beside vision and nlp, with 1/(2+2+1).
func ExampleParseShareTree() {
	sshare := `Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare
root|||0.000000|0|1.000000|
 ai||10|1.000000|0|0.000000|
  vision||2|0.400000|0|0.000000|
   vision|alice|1|1.000000|0|0.000000|1.000000
  nlp||2|0.400000|0|0.000000|
   nlp|bob|1|1.000000|0|0.000000|1.000000
  speech||parent|1.000000|0|0.000000|
   speech|carol|1|0.200000|0|0.000000|1.000000
`
	tree, _, err := slurm.ParseShareTree(strings.NewReader(sshare), slurm.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range tree.Assocs()[1:] {
		ns, _ := tree.NormShares(a.Account, a.User)
		line := fmt.Sprintf("%-6s %-5s NormShares %.3f", a.Account, a.User, ns)
		if tenant, ok := tree.Tenant(a.Account, a.User); ok {
			parent, _ := tree.TenantParent(tenant)
			line += fmt.Sprintf(", jobs charged to %s under %s", tenant, parent)
		}
		fmt.Println(line)
	}
	// Output:
	// ai           NormShares 1.000
	// vision       NormShares 0.400
	// vision alice NormShares 1.000, jobs charged to vision|alice under vision
	// nlp          NormShares 0.400
	// nlp    bob   NormShares 1.000, jobs charged to nlp|bob under nlp
	// speech       NormShares 1.000
	// speech carol NormShares 0.200, jobs charged to speech|carol under ai
}
