// Package slurm puts the astraea ledger beside a Slurm cluster: it reads
// Slurm's accounting (sacct), share tree (sshare or sacctmgr), nodes
// (sinfo) and queue (squeue), replays the jobs into a [ledger.Ledger] whose
// tenant tree is Slurm's tree of accounts and users, and reports each
// association's GPU-hours used and owed and its long-term fairness ratio ρ
// — and turns the ranking into
// `scontrol update JobId=N SiteFactor=V` commands that favour the accounts
// owed the most.
//
// # Parsers
//
// Each parser reads the pipe-separated output of one Slurm command, named by
// a constant: [ParseSacct] ([SacctFormat]) with [GroupJobs] for requeued
// jobs, [ParseShareTree] ([SshareCommand]) or [ParseAssoc]
// ([AssocCommand]) for the share tree, [ParseSshare] and [ParseWeights]
// for flat account weights, [ParseSinfo] ([SinfoCommand]) for the GPU capacity, and
// [ParsePending] ([SqueueCommand]) for the queue. A bad line is a
// *[ParseError] naming the input, line and field, matching one of the
// sentinels (ErrMalformed, ErrUnknownTRES, ErrEndBeforeStart, ...) with
// errors.Is; with Options.Lenient the line is skipped and counted by reason
// in a [Skipped].
//
// Slurm prints local times without an offset: Options.Location says which
// zone they are in.
//
// # The share tree
//
// A [Tree] holds Slurm's associations with its Fairshare=parent rule
// applied as Fair Tree applies it: such an association is not accounted
// itself, its children count among its parent's children. NormShares
// ([Tree.NormShares]) are then RawShares over the merged level's, exactly
// what sshare prints (the integration test compares them on a real
// Slurm), and each association without Fairshare=parent is a ledger tenant
// under its nearest ancestor without it ([ledger.Ledger.AddTenantUnder]),
// so a quota is M × the NormShares on its path.
//
// # Replay and report
//
// [Replay] turns jobs into ledger events (Submit, Start/Stop per run, Finish
// with the state mapped by [State.Final]) and returns a [Report] with one
// [Row] per account for a window, optionally with a half-life;
// [WriteReport] prints it as text, CSV or JSON. Config.Resume and
// Config.Persist continue a saved ledger with only the accounting since
// its time (the command's -state). [Partitions] sums the nodes' GPUs by
// partition, and [Explain] runs one ASTRAEA round per partition to say
// why each pending job waits. [SiteFactors] maps ranks to
// site factors ([SiteFactorFor]) and [Apply] runs the scontrol commands
// through an injectable [Runner].
//
// The command astraea-slurm (cmd/astraea-slurm) wires these together.
package slurm
