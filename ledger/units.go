package ledger

// TenantID names a tenant (a team, a virtual cluster, a Slurm account, a
// Kueue ClusterQueue...). IDs are compared as strings wherever an order is
// needed, so ties between tenants break the same way on every run.
type TenantID string

// JobID names a job. A job belongs to exactly one tenant for its whole life.
type JobID string

// GPUs counts whole GPUs: a job's gang demand or the cluster capacity M.
// Fair shares are fractional and are therefore reported as rates in
// GPU·seconds per second (plain float64), never as GPUs.
// It is 64 bits wide on every platform, so that [MaxGPUs] and the sums of
// demands it bounds fit where int has 32 bits.
type GPUs int64

// GPUSeconds is service: GPUs multiplied by the seconds they were held
// (Alloc) or owed (FairShare). It is the unit of every account.
type GPUSeconds float64
