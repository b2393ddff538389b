// Package ledger keeps ASTRAEA's two-level long-term GPU-time fairness
// accounts: for every tenant and every job, the GPU·seconds actually received
// (Alloc) and the GPU·seconds fairly owed (FairShare), and their ratio ρ.
//
// The ledger is pure accounting: it records events at explicit times and
// answers queries; it never decides anything.
package ledger
