package slurm

import (
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"pgregory.net/rapid"
)

// slurmNorm reads the NormShares column of sshare output: association key
// → NormShares as Slurm printed it.
func slurmNorm(t *testing.T, text string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for i, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Split(line, "|")
		if i == 0 || strings.TrimSpace(f[0]) == "root" && f[1] == "" {
			continue
		}
		v, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		out[Assoc{Account: strings.TrimSpace(f[0]), User: f[1]}.key()] = v
	}
	return out
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := io.ReadAll(openFixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The fixture is a real Slurm's sshare and sacctmgr output on the cluster
// of .ci/integration.d/slurm.sh: ai (10) with vision (2), nlp (2) and
// speech (Fairshare=parent). Our NormShares must be the ones sshare printed.
func TestTreeNormSharesMatchRealSshare(t *testing.T) {
	want := slurmNorm(t, readFixture(t, "real-tree/sshare.txt"))
	if len(want) != 13 {
		t.Fatalf("fixture has %d associations", len(want))
	}
	fromSshare, sk, err := ParseShareTree(openFixture(t, "real-tree/sshare.txt"), Options{})
	if err != nil || sk.Total() != 0 {
		t.Fatal(err, sk)
	}
	fromAssoc, sk, err := ParseAssoc(openFixture(t, "real-tree/assoc.txt"), Options{})
	if err != nil || sk.Total() != 0 {
		t.Fatal(err, sk)
	}
	for name, tree := range map[string]*Tree{"sshare": fromSshare, "sacctmgr": fromAssoc} {
		if tree.Len() != 14 {
			t.Errorf("%s: %d associations, want 14 with root", name, tree.Len())
		}
		for key, w := range want {
			acct, user, _ := strings.Cut(key, "|")
			got, ok := tree.NormShares(acct, user)
			if !ok || math.Abs(got-w) > 5e-7 {
				t.Errorf("%s: NormShares(%s) = %v, %v; sshare printed %v", name, key, got, ok, w)
			}
		}
	}
	// speech's user is reparented beside vision and nlp: 1/(2+2+1).
	if got, _ := fromSshare.NormShares("speech", "root"); got != 0.2 {
		t.Errorf("speech|root = %v, want exactly 0.2", got)
	}
	if p, ok := fromSshare.TenantParent("speech|root"); !ok || p != "ai" {
		t.Errorf("TenantParent(speech|root) = %q, %v; want ai", p, ok)
	}
	if _, ok := fromSshare.TenantParent("speech"); ok {
		t.Error("a Fairshare=parent account is a tenant")
	}
}

func TestTreeRules(t *testing.T) {
	const head = "Account|User|RawShares|NormShares\nroot|||0\n"
	for name, tc := range map[string]struct {
		in   string
		norm map[string]float64 // key → NormShares
		// charge: "account|user" of a job → the tenant it is charged to ("" : none)
		charge map[string]ledger.TenantID
	}{
		"the issue's example: speech's user counts beside vision and nlp": {
			in: " ai||10\n  vision||2\n   vision|u|1\n  nlp||2\n   nlp|u|1\n  speech||parent\n   speech|u|1\n",
			norm: map[string]float64{"ai": 1, "vision": 0.4, "nlp": 0.4, "speech": 1, "speech|u": 0.2,
				"vision|u": 1},
			charge: map[string]ledger.TenantID{"speech|u": "speech|u", "vision|u": "vision|u", "ai|u": "", "speech|": ""},
		},
		"a chain of parent accounts reparents through every link": {
			in:     " a||4\n  b||parent\n   c||parent\n    c|x|1\n    c|y|3\n  d||4\n",
			norm:   map[string]float64{"b": 1, "c": 1, "c|x": 0.125, "c|y": 0.375, "d": 0.5},
			charge: map[string]ledger.TenantID{"c|x": "c|x", "d|": "d"},
		},
		"a user with Fairshare=parent is charged to its account": {
			in:     " a||1\n  a|u|parent\n b||3\n",
			norm:   map[string]float64{"a": 0.25, "a|u": 0.25, "b": 0.75},
			charge: map[string]ledger.TenantID{"a|u": "a", "a|": "a", "b|z": "b"},
		},
		"a top-level parent account takes root's 0, its children count at the top": {
			in:     " a||parent\n  a|u|1\n b||3\n",
			norm:   map[string]float64{"a": 0, "a|u": 0.25, "b": 0.75},
			charge: map[string]ledger.TenantID{"a|u": "a|u"},
		},
		"zero shares everywhere give NormShares 0, not NaN": {
			in:   " a||0\n  a|u|0\n",
			norm: map[string]float64{"a": 0, "a|u": 0},
		},
	} {
		t.Run(name, func(t *testing.T) {
			tree, _, err := ParseShareTree(strings.NewReader(head+tc.in), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for key, w := range tc.norm {
				acct, user, _ := strings.Cut(key, "|")
				if got, ok := tree.NormShares(acct, user); !ok || math.Abs(got-w) > 1e-12 {
					t.Errorf("NormShares(%s) = %v, %v; want %v", key, got, ok, w)
				}
			}
			for key, w := range tc.charge {
				acct, user, _ := strings.Cut(key, "|")
				got, ok := tree.Tenant(acct, user)
				if got != w || ok != (w != "") {
					t.Errorf("Tenant(%s) = %q, %v; want %q", key, got, ok, w)
				}
			}
		})
	}
}

func TestTreeErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		parse func(string) error
		in    string
		kind  error
		line  int
	}{
		"sshare: a user row outside its account": {parseShare, "Account|User|RawShares\nroot||\n a||1\n b||1\n  a|u|1\n", ErrTree, 5},
		"sshare: an indented root":               {parseShare, "Account|User|RawShares\n a||1\n root||\n", ErrTree, 3},
		"sshare: a share that is not a number":   {parseShare, "Account|User|RawShares\n a||x\n", ErrMalformed, 2},
		"sshare: a user with Fairshare=parent beside a sub-account": {parseShare,
			"Account|User|RawShares\n a||1\n  b||1\n  a|u|parent\n", ErrTree, 4},
		"sshare: an account listed twice": {parseShare, "Account|User|RawShares\n a||1\n a||2\n", ErrDuplicate, 3},
		"sacctmgr: no header":             {parseAssoc, "a||root|1\n", ErrHeader, 1},
		"sacctmgr: an unknown parent":     {parseAssoc, "Account|User|ParentName|Share\na||nope|1\n", ErrTree, 2},
		"sacctmgr: a cycle": {parseAssoc,
			"Account|User|ParentName|Share\na||b|1\nb||a|1\n", ErrTree, 2},
		"sacctmgr: a user of an unknown account": {parseAssoc, "Account|User|ParentName|Share\nx|u||1\n", ErrTree, 2},
		"sacctmgr: a per-partition association": {parseAssoc,
			"Account|User|Partition|ParentName|Share\na||gpu|root|1\n", ErrTree, 2},
		"sacctmgr: a negative share": {parseAssoc, "Account|User|ParentName|Share\na||root|-1\n", ErrMalformed, 2},
		"sacctmgr: too few fields":   {parseAssoc, "Account|User|ParentName|Share\na|root\n", ErrMalformed, 2},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.parse(tc.in)
			var pe *ParseError
			if !errors.Is(err, tc.kind) || !errors.As(err, &pe) || pe.Line != tc.line {
				t.Fatalf("err = %v, want %v on line %d", err, tc.kind, tc.line)
			}
		})
	}
}

func parseShare(in string) error {
	_, _, err := ParseShareTree(strings.NewReader(in), Options{})
	return err
}

func parseAssoc(in string) error {
	_, _, err := ParseAssoc(strings.NewReader(in), Options{})
	return err
}

// The real run: a tree report of the captured accounting, quota mode.
func TestReplayTreeOnRealOutput(t *testing.T) {
	tree, _, err := ParseShareTree(openFixture(t, "real-tree/sshare.txt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	jobs := mustJobs(t, readFixture(t, "real-tree/sacct.txt"))
	at := func(s string) time.Time {
		v, err := time.Parse(TimeLayout, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	from, to := at("2026-12-02T01:18:43"), at("2026-12-02T01:18:59")
	rep, err := Replay(jobs, Config{Mode: ledger.QuotaShare, Capacity: 4, Tree: tree,
		Now: at("2026-12-02T01:19:05"), From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]Row{}
	for _, r := range rep.Rows {
		rows[Assoc{Account: r.Account, User: r.User}.key()] = r
	}
	w := to.Sub(from).Seconds()
	for key, want := range map[string]struct{ used, owed float64 }{
		// 2×5 + 1×3; the array's three tasks 1×2 each; speech has
		// Fairshare=parent, so its row sums its user's.
		"team-a": {13, 4 * 0.2 * w}, "team-a|root": {13, 4 * 0.2 * w},
		"speech|root": {6, 4 * (10.0 / 15) * 0.2 * w}, "speech": {6, 4 * (10.0 / 15) * 0.2 * w},
		"nlp|root": {3, 4 * (10.0 / 15) * 0.4 * w}, "ai": {9, 4 * (10.0 / 15) * w},
		"vision|alice": {0, 4 * (10.0 / 15) * 0.4 * 0.75 * w},
	} {
		r, ok := rows[key]
		if !ok || math.Abs(float64(r.Used)-want.used) > 1e-9 || math.Abs(float64(r.Owed)-want.owed) > 1e-6 {
			t.Errorf("%s: used %v owed %v, want %v %v", key, r.Used, r.Owed, want.used, want.owed)
		}
	}
	// Ranks: only leaves, 1..7 with ties; every leaf ranked.
	ranked := 0
	for _, r := range rep.Rows {
		leaf := r.Charge != "" && !r.UseParent
		if (r.Rank > 0) != leaf {
			t.Errorf("%s|%s: rank %d, leaf %v", r.Account, r.User, r.Rank, leaf)
		}
		if r.Rank > 0 {
			ranked++
		}
	}
	if ranked != 7 {
		t.Errorf("%d ranked rows, want 7", ranked)
	}
	if rows["team-b|root"].Rank != 7 || rows["root|root"].Rank != 1 {
		t.Errorf("ranks: team-b|root %d (ρ %v), root|root %d", rows["team-b|root"].Rank, rows["team-b|root"].Rho, rows["root|root"].Rank)
	}
	// A pending job is matched to its user's association.
	ups, err := SiteFactors(rep.Rows, []PendingJob{{ID: "10", Account: "team-b", User: "root"}, {ID: "11", Account: "speech", User: "nobody"}}, 600)
	if err != nil || ups[0].SiteFactor != 0 || ups[0].Rank != 7 || ups[1].Rank != 0 {
		t.Fatalf("%v %+v", err, ups)
	}
}

// Property: in any tree, the tenants that share an effective parent have
// NormShares adding up to 1 (or all 0), and the ledger's quota of every
// tenant under QuotaShare is M × the product of NormShares on its path.
func TestTreeQuotaIsNormSharesProduct(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(rt, "accounts")
		var as []Assoc
		for i := range n {
			parent := "root"
			if i > 0 && rapid.Bool().Draw(rt, "nested") {
				parent = "a" + strconv.Itoa(rapid.IntRange(0, i-1).Draw(rt, "parent"))
			}
			as = append(as, Assoc{Account: "a" + strconv.Itoa(i), Parent: parent,
				Shares: float64(rapid.IntRange(1, 9).Draw(rt, "shares")), UseParent: i > 0 && rapid.Bool().Draw(rt, "useParent")})
		}
		for i := range n {
			for u := range rapid.IntRange(0, 2).Draw(rt, "users") {
				as = append(as, Assoc{Account: "a" + strconv.Itoa(i), User: "u" + strconv.Itoa(u),
					Shares: float64(rapid.IntRange(1, 9).Draw(rt, "ushares"))})
			}
		}
		tree, err := NewTree(as, "gen")
		if err != nil {
			rt.Fatal(err)
		}
		sums := map[int]float64{}
		for i := 1; i < tree.Len(); i++ {
			if !tree.assocs[i].UseParent {
				sums[tree.eff[i]] += tree.norm(i)
			}
		}
		for p, s := range sums {
			if math.Abs(s-1) > 1e-9 {
				rt.Fatalf("level of %s: NormShares add up to %v", tree.assocs[p].key(), s)
			}
		}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		const m = 64
		l, err := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Capacity: m, Start: t0})
		if err != nil {
			rt.Fatal(err)
		}
		if _, err := addTreeTenants(l, tree, t0); err != nil {
			rt.Fatal(err)
		}
		for i := 1; i < tree.Len(); i++ {
			if tree.assocs[i].UseParent {
				continue
			}
			want := float64(m)
			for j := i; j > 0; j = tree.eff[j] {
				want *= tree.norm(j)
			}
			info, _ := l.Tenant(ledger.TenantID(tree.assocs[i].key()))
			if math.Abs(info.Quota-want) > 1e-9*m {
				rt.Fatalf("%s: quota %v, want %v", tree.assocs[i].key(), info.Quota, want)
			}
		}
	})
}
