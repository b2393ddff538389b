package simulate

import (
	"fmt"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
	"pgregory.net/rapid"
)

// mapAccounts answers every id it holds; the fallback of roundAccounts.
type mapAccounts map[string]ledger.Account

func (m mapAccounts) TenantAccount(id ledger.TenantID) (ledger.Account, bool) {
	a, ok := m[string(id)]
	return a, ok
}

func (m mapAccounts) JobAccount(id ledger.JobID) (ledger.Account, bool) {
	a, ok := m[string(id)]
	return a, ok
}

// roundAccounts answers an id from the first read of it this round, else
// from the accounts behind it, whether the reads are scanned (up to
// scanReads) or indexed, and however one round's reads follow another's
// on the same value.
func TestPropertyRoundAccountsAnswerTheFirstRead(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var r roundAccounts
		for round := range rapid.IntRange(1, 4).Draw(t, "rounds") {
			ids := rapid.IntRange(1, 3*scanReads).Draw(t, "ids")
			behind := mapAccounts{}
			for i := range ids {
				if rapid.Bool().Draw(t, "behind") {
					behind[fmt.Sprint("x", i)] = ledger.Account{Rho: ledger.Rho(-1 - i)}
				}
			}
			draw := func(label string) []readAccount {
				var list []readAccount
				for k := range rapid.IntRange(0, 2*scanReads+2).Draw(t, label) {
					i := rapid.IntRange(0, ids-1).Draw(t, label+" id")
					list = append(list, readAccount{id: fmt.Sprint("x", i), a: ledger.Account{Rho: ledger.Rho(100*round + k)}})
				}
				return list
			}
			jobs, tenants := draw("job reads"), draw("tenant reads")
			r.reset(behind, jobs, tenants)
			want := func(list []readAccount, id string) (ledger.Account, bool) {
				for _, x := range list {
					if x.id == id {
						return x.a, true
					}
				}
				a, ok := behind[id]
				return a, ok
			}
			for i := range ids + 1 { // one id nobody holds
				id := fmt.Sprint("x", i)
				got, ok := r.JobAccount(ledger.JobID(id))
				if w, wok := want(jobs, id); ok != wok || got != w {
					t.Fatalf("round %d: job %s: got %v %v, want %v %v", round, id, got, ok, w, wok)
				}
				got, ok = r.TenantAccount(ledger.TenantID(id))
				if w, wok := want(tenants, id); ok != wok || got != w {
					t.Fatalf("round %d: tenant %s: got %v %v, want %v %v", round, id, got, ok, w, wok)
				}
			}
		}
	})
}
