package slurm

import (
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/astraea-sched/astraea/ledger"
)

// ErrTree: the associations do not form a tree this package can account
// (an unknown parent, a cycle, a user listed outside its account, or a user
// with Fairshare=parent whose account has other children).
var ErrTree = errors.New("slurm: bad share tree")

// AssocCommand is the sacctmgr invocation whose output ParseAssoc reads.
// On a database serving several clusters, add `where cluster=NAME`.
const AssocCommand = "sacctmgr -P show assoc format=Account,User,ParentName,Share"

// Assoc is one association of Slurm's share tree: an account (User empty)
// or a user in an account.
type Assoc struct {
	Account string
	User    string  // "" for an account's own association
	Parent  string  // an account's parent account ("" for root); a user's is its Account
	Shares  float64 // RawShares; meaningless when UseParent
	// UseParent is Fairshare=parent: the association takes no share of its
	// own, and its children are accounted at its parent's level.
	UseParent bool
	Line      int
}

// key names an association uniquely: the account, or "account|user". '|'
// cannot occur in a Slurm name, so the key is also the ledger tenant id.
func (a Assoc) key() string {
	if a.User == "" {
		return a.Account
	}
	return a.Account + "|" + a.User
}

// Tree is Slurm's share tree with its Fairshare=parent rule applied, as
// Slurm's Fair Tree applies it: an association with Fairshare=parent is
// not a node of the accounting; its children are counted among its
// parent's children (recursively, through chains of such associations),
// so that their NormShares are their RawShares over the RawShares of that
// merged level; its own NormShares is its nearest ancestor's. A user with
// Fairshare=parent is charged to that ancestor, which must then have no
// other children (jobs hang under leaves of the ledger).
//
// Build one with [NewTree], [ParseShareTree] or [ParseAssoc].
type Tree struct {
	assocs   []Assoc // tree order: parents before children, siblings in input order
	parent   []int   // index of the parent, -1 for root
	children [][]int
	eff      []int // effective parent: nearest ancestor without UseParent; -1 for root
	level    []float64
	inner    []bool // a tenant with tenant children (jobs cannot hang under it)
	byKey    map[string]int
	root     int
}

// NewTree checks the associations and builds the tree. The root account
// ("root") may be listed or not; accounts whose parent is "" or "root" are
// its children. Errors are *ParseError matching ErrTree or ErrDuplicate,
// naming the line of the association at fault (src names the input).
// Complexity O(n).
func NewTree(assocs []Assoc, src string) (*Tree, error) {
	byKey := make(map[string]int, len(assocs)+1)
	all := make([]Assoc, 1, len(assocs)+1)
	all[0] = Assoc{Account: "root"}
	byKey["root"] = 0
	for _, a := range assocs {
		if a.Account == "root" && a.User == "" {
			if a.Line > 0 {
				all[0].Line = a.Line
			}
			continue
		}
		k := a.key()
		if prev, dup := byKey[k]; dup {
			return nil, perr(src, a.Line, "Account", k, ErrDuplicate, "also on line %d", all[prev].Line)
		}
		if a.User != "" {
			a.Parent = a.Account
		} else if a.Parent == "" {
			a.Parent = "root"
		}
		if !a.UseParent && (!(a.Shares >= 0) || math.IsInf(a.Shares, 0)) {
			return nil, perr(src, a.Line, "Share", strconv.FormatFloat(a.Shares, 'g', -1, 64), ErrMalformed, "not a share count")
		}
		byKey[k] = len(all)
		all = append(all, a)
	}
	n := len(all)
	par := make([]int, n)
	kids := make([][]int, n)
	par[0] = -1
	for i := 1; i < n; i++ {
		p, ok := byKey[all[i].Parent]
		if !ok || all[p].User != "" {
			return nil, perr(src, all[i].Line, "Parent", all[i].Parent, ErrTree, "no such account")
		}
		par[i] = p
		kids[p] = append(kids[p], i)
	}
	// Tree order, which also finds the associations cut off by a cycle.
	t := &Tree{byKey: byKey}
	old := make([]int, 0, n) // old index in tree order
	var walk func(i int)
	walk = func(i int) {
		old = append(old, i)
		for _, c := range kids[i] {
			walk(c)
		}
	}
	walk(0)
	if len(old) != n {
		seen := make([]bool, n)
		for _, i := range old {
			seen[i] = true
		}
		for i := range n {
			if !seen[i] {
				return nil, perr(src, all[i].Line, "Parent", all[i].Parent, ErrTree, "the account is its own ancestor")
			}
		}
	}
	at := make([]int, n)
	inOrder := true // sshare lists parents first, siblings in order
	for j, i := range old {
		at[i] = j
		inOrder = inOrder && i == j
	}
	t.assocs = all
	if !inOrder {
		t.assocs = make([]Assoc, n)
	}
	t.parent = make([]int, n)
	t.children = make([][]int, n)
	for j, i := range old {
		if !inOrder {
			t.assocs[j] = all[i]
			byKey[all[i].key()] = j // the same keys, now to tree order
		}
		if par[i] < 0 {
			t.parent[j] = -1
		} else {
			t.parent[j] = at[par[i]]
			t.children[at[par[i]]] = append(t.children[at[par[i]]], j)
		}
	}
	t.assocs[0].UseParent = false
	t.eff = make([]int, n)
	t.level = make([]float64, n)
	for j := n - 1; j >= 0; j-- {
		for _, c := range t.children[j] {
			if t.assocs[c].UseParent {
				t.level[j] += t.level[c]
			} else {
				t.level[j] += t.assocs[c].Shares
			}
		}
	}
	for j := range n {
		p := t.parent[j]
		for p > 0 && t.assocs[p].UseParent {
			p = t.parent[p]
		}
		t.eff[j] = p
	}
	t.inner = make([]bool, n)
	for j := 1; j < n; j++ {
		if !t.assocs[j].UseParent {
			t.inner[t.eff[j]] = true
		}
	}
	// A user with Fairshare=parent is charged to its effective account,
	// which must be a ledger leaf.
	for j := range n {
		a := t.assocs[j]
		if a.User == "" || !a.UseParent {
			continue
		}
		e := t.eff[j]
		if e <= 0 {
			return nil, perr(src, a.Line, "Share", "parent", ErrTree, "user %s: Fairshare=parent up to root", a.key())
		}
		if t.inner[e] {
			return nil, perr(src, a.Line, "Share", "parent", ErrTree,
				"user %s: Fairshare=parent charges account %s, which has other children", a.key(), t.assocs[e].Account)
		}
	}
	return t, nil
}

// tenantChildren are the nodes whose effective parent is i and that are
// ledger tenants (not UseParent).
func (t *Tree) tenantChildren(i int) []int {
	var out []int
	var visit func(p int)
	visit = func(p int) {
		for _, c := range t.children[p] {
			if t.assocs[c].UseParent {
				visit(c)
			} else {
				out = append(out, c)
			}
		}
	}
	visit(i)
	return out
}

// Len is the number of associations, root included.
func (t *Tree) Len() int { return len(t.assocs) }

// Assocs returns the associations in tree order (parents before children,
// siblings in input order), root first.
func (t *Tree) Assocs() []Assoc { return append([]Assoc(nil), t.assocs...) }

// NormShares is Slurm's Fair Tree NormShares of an association (user ""
// for an account): its RawShares over the RawShares of its level, the
// children of its nearest ancestor without Fairshare=parent with those
// with Fairshare=parent replaced by their children; for an association
// with Fairshare=parent, its nearest such ancestor's (0 for root, as sshare
// prints it). ok is false for an unknown association.
func (t *Tree) NormShares(account, user string) (float64, bool) {
	i, ok := t.byKey[Assoc{Account: account, User: user}.key()]
	if !ok {
		return 0, false
	}
	return t.norm(i), true
}

func (t *Tree) norm(i int) float64 {
	if i == 0 {
		return 0
	}
	if t.assocs[i].UseParent {
		return t.norm(t.eff[i])
	}
	if l := t.level[t.eff[i]]; l > 0 {
		return t.assocs[i].Shares / l
	}
	return 0
}

// Tenant returns the ledger tenant that the jobs of user in account are
// charged to: the user's association if the tree has it, else the account
// if it is a leaf of the accounting; a Fairshare=parent association is
// charged to its nearest ancestor without it. ok is false when neither
// fits (an unknown account, or a user not in an account that has users).
func (t *Tree) Tenant(account, user string) (ledger.TenantID, bool) {
	i, ok := t.charge(account, user)
	if !ok {
		return "", false
	}
	return ledger.TenantID(t.assocs[i].key()), true
}

func (t *Tree) charge(account, user string) (int, bool) {
	i, ok := -1, false
	if user != "" {
		i, ok = t.byKey[account+"|"+user]
	}
	if !ok {
		i, ok = t.byKey[account]
		if !ok || i == 0 {
			return 0, false
		}
	}
	if t.assocs[i].UseParent {
		i = t.eff[i]
	}
	if i <= 0 || t.inner[i] {
		return 0, false
	}
	return i, true
}

// TenantParent is the ledger parent of tenant id: the tenant of the nearest
// ancestor without Fairshare=parent, "" for a child of root. ok is false
// for an id that is not a tenant of the tree.
func (t *Tree) TenantParent(id ledger.TenantID) (ledger.TenantID, bool) {
	i, ok := t.byKey[string(id)]
	if !ok || i == 0 || t.assocs[i].UseParent {
		return "", false
	}
	if e := t.eff[i]; e > 0 {
		return ledger.TenantID(t.assocs[e].key()), true
	}
	return "", true
}

// WithoutUsers returns the tree of the accounts alone: every user
// association is dropped, so jobs are charged to their account, which
// becomes a leaf when it had only users. Use it when the accounting lacks
// the User column. NormShares of accounts whose users were reparented by
// Fairshare=parent then differ from Slurm's.
func (t *Tree) WithoutUsers() (*Tree, error) {
	var as []Assoc
	for _, a := range t.assocs[1:] {
		if a.User == "" {
			as = append(as, a)
		}
	}
	return NewTree(as, "tree")
}

// ParseShareTree reads `sshare -a -P` output (see [SshareCommand]) as a
// tree of accounts and users: sshare indents the Account column by depth,
// and a row with a User is that user's association in the account (it
// must follow its account). Rows above which no account is less indented
// are root's children, whether root is listed or not. The
// RawShares "parent" is Fairshare=parent. Columns Account, User and
// RawShares are found by the header (without one, they are the first
// three). Errors are *ParseError naming the line and field. Complexity
// O(bytes).
func ParseShareTree(r io.Reader, opts Options) (*Tree, Skipped, error) {
	const src = "sshare"
	ls := newLines(r, src)
	skipped := Skipped{}
	type anc struct {
		name  string
		depth int
	}
	var stack []anc
	var out []Assoc
	err := eachShareRow(ls, func(fields []string, ai, ui, ri int) error {
		a, depth, err := shareRow(fields, ai, ui, ri, ls.n)
		if err == nil {
			for len(stack) > 0 && stack[len(stack)-1].depth >= depth {
				stack = stack[:len(stack)-1]
			}
			switch {
			case a.User != "":
				if len(stack) == 0 || stack[len(stack)-1].name != a.Account {
					err = perr(src, ls.n, "Account", fields[ai], ErrTree, "user row outside its account")
				}
			case a.Account == "root" && depth != 0:
				err = perr(src, ls.n, "Account", fields[ai], ErrTree, "root must not be indented")
			case depth > 0 && len(stack) > 0:
				a.Parent = stack[len(stack)-1].name
			}
		}
		if err != nil {
			return opts.skip(skipped, err)
		}
		if a.User == "" {
			stack = append(stack, anc{a.Account, depth})
		}
		out = append(out, a)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	t, err := NewTree(out, src)
	if err != nil {
		return nil, nil, err
	}
	return t, skipped, nil
}

// shareRow reads the association of one sshare row and its indentation.
func shareRow(fields []string, ai, ui, ri, line int) (Assoc, int, error) {
	const src = "sshare"
	if len(fields) <= max(ai, ui, ri) {
		return Assoc{}, 0, perr(src, line, "", strings.Join(fields, "|"), ErrMalformed, "too few fields")
	}
	raw := fields[ai]
	name := strings.TrimLeft(raw, " ")
	depth := len(raw) - len(name)
	name = strings.TrimSpace(name)
	if !validName(name) {
		return Assoc{}, 0, perr(src, line, "Account", raw, ErrMalformed, "not an account name")
	}
	a := Assoc{Account: name, User: strings.TrimSpace(fields[ui]), Line: line}
	if a.User != "" && !validName(a.User) {
		return Assoc{}, 0, perr(src, line, "User", a.User, ErrMalformed, "not a user name")
	}
	if name == "root" && a.User == "" {
		return a, depth, nil // root's RawShares is empty
	}
	var err error
	if a.Shares, a.UseParent, err = parseShares(strings.TrimSpace(fields[ri])); err != nil {
		return Assoc{}, 0, perr(src, line, "RawShares", fields[ri], ErrMalformed, "not a share count")
	}
	return a, depth, nil
}

// parseShares reads a share count or "parent".
func parseShares(s string) (float64, bool, error) {
	if strings.EqualFold(s, "parent") {
		return 0, true, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false, errors.New("not a share count")
	}
	return v, false, nil
}

var assocKnown = map[string]bool{"account": true, "user": true, "parentname": true, "share": true,
	"cluster": true, "fairshare": true, "partition": true}

// ParseAssoc reads `sacctmgr -P show assoc format=Account,User,ParentName,Share`
// output (see [AssocCommand]) as a tree. The header is required (sacctmgr
// prints it without -n); Share may also be named Fairshare. A row with a
// Partition is refused (ErrTree): per-partition associations are not
// modelled. Errors are *ParseError naming the line and field. Complexity
// O(bytes).
func ParseAssoc(r io.Reader, opts Options) (*Tree, Skipped, error) {
	const src = "sacctmgr"
	ls := newLines(r, src)
	skipped := Skipped{}
	var out []Assoc
	var idx map[string]int
	for ls.next() {
		if strings.TrimSpace(ls.text) == "" {
			continue
		}
		fields := strings.Split(ls.text, "|")
		if idx == nil {
			var ok bool
			if idx, ok = headerIndex(fields, assocKnown); !ok {
				return nil, nil, perr(src, ls.n, "", ls.text, ErrHeader, "want the header line Account|User|ParentName|Share")
			}
			if _, ok := idx["share"]; !ok {
				if i, ok := idx["fairshare"]; ok {
					idx["share"] = i
				}
			}
			for _, c := range []string{"account", "user", "parentname", "share"} {
				if _, ok := idx[c]; !ok {
					return nil, nil, perr(src, ls.n, c, "", ErrHeader, "missing column %s", c)
				}
			}
			continue
		}
		a, err := assocRow(fields, idx, ls.n)
		if err != nil {
			if err := opts.skip(skipped, err); err != nil {
				return nil, nil, err
			}
			continue
		}
		out = append(out, a)
	}
	if err := ls.err(); err != nil {
		return nil, nil, err
	}
	if idx == nil {
		return nil, nil, perr(src, 0, "", "", ErrHeader, "empty input")
	}
	t, err := NewTree(out, src)
	if err != nil {
		return nil, nil, err
	}
	return t, skipped, nil
}

func assocRow(fields []string, idx map[string]int, line int) (Assoc, error) {
	const src = "sacctmgr"
	need := 0
	for _, i := range idx {
		need = max(need, i+1)
	}
	if len(fields) < need {
		return Assoc{}, perr(src, line, "", strings.Join(fields, "|"), ErrMalformed, "%d fields, want %d", len(fields), need)
	}
	f := func(c string) string { return strings.TrimSpace(fields[idx[c]]) }
	a := Assoc{Account: f("account"), User: f("user"), Parent: f("parentname"), Line: line}
	switch {
	case !validName(a.Account):
		return Assoc{}, perr(src, line, "Account", a.Account, ErrMalformed, "not an account name")
	case a.User != "" && !validName(a.User):
		return Assoc{}, perr(src, line, "User", a.User, ErrMalformed, "not a user name")
	case a.Parent != "" && !validName(a.Parent):
		return Assoc{}, perr(src, line, "ParentName", a.Parent, ErrMalformed, "not an account name")
	}
	if i, ok := idx["partition"]; ok && strings.TrimSpace(fields[i]) != "" {
		return Assoc{}, perr(src, line, "Partition", fields[i], ErrTree, "per-partition associations are not modelled")
	}
	if a.Account == "root" && a.User == "" {
		return a, nil
	}
	var err error
	if a.Shares, a.UseParent, err = parseShares(f("share")); err != nil {
		return Assoc{}, perr(src, line, "Share", f("share"), ErrMalformed, "not a share count")
	}
	return a, nil
}
