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
type GPUs int

// GPUSeconds is service: GPUs multiplied by the seconds they were held
// (Alloc) or owed (FairShare). It is the unit of every account.
type GPUSeconds float64
