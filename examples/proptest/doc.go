// Package proptest shows how to property-test a scheduler of your own with
// astraea's ledger: drive the scheduler with random workloads, record what
// it does in a ledger.Ledger, and let the ledger judge every decision.
//
// The scheduler under test only has to answer one question, which jobs of
// the queue to start now (Scheduler). Run plays a toy cluster around it:
// every step it finishes the jobs that are done, submits the step's
// arrivals, asks the scheduler, checks that the answer can be carried out
// (existing, distinct jobs that fit the free GPUs), and starts those jobs,
// telling the ledger about each event. An answer that cannot be carried
// out, more GPUs than are free among them, is an error (ErrDecision) and
// fails a test by itself. The ledger then answers what a fairness property
// needs: each tenant's ρ at the moment of the decision, and its own
// invariants (Ledger.Check).
//
// The tests of this package state three properties with
// pgregory.net/rapid and check schedulers against them:
//
//   - the ledger stays consistent (Check) after every step;
//   - the scheduler is work-conserving: after a decision no waiting job
//     fits the free GPUs;
//   - ASTRAEA's Phase 1 rule: the first job a decision starts belongs to a
//     tenant whose ρ is the lowest among the tenants with a job that fits.
//
// LowestRho keeps all three. FIFO, which starts jobs in submission order
// and stops at the first that does not fit, breaks the last two, and the
// tests show a workload on which it does. To test your own scheduler, put
// it where the tests put LowestRho.
package proptest
