package slurm

import (
	"io"
	"math"
	"strconv"
	"strings"
)

// SshareCommand is the sshare invocation whose output ParseSshare reads.
const SshareCommand = "sshare -a -P"

// Share is an account of the sshare tree and its RawShares.
type Share struct {
	Account string
	Parent  string // the parent account; "root" for top-level accounts
	Depth   int    // 1 for top-level accounts (sshare's indentation)
	// RawShares is the account's share. An account whose shares are
	// "parent" takes the RawShares of its nearest ancestor that has a
	// number, or 1 when that ancestor is root (Inherited is then true).
	RawShares float64
	Inherited bool
	// Leaf is false for an account that has sub-accounts: its share is
	// divided among them, so it is not a tenant of its own (see [Weights]).
	Leaf bool
	Line int
}

var sshareKnown = map[string]bool{"account": true, "cluster": true}

// sshareHeader returns the columns Account, User and RawShares of a header
// line, or, when the line is not a header, the first three and false.
func sshareHeader(fields []string, line int) (ai, ui, ri int, header bool, err error) {
	idx, ok := headerIndex(fields, sshareKnown)
	if !ok {
		return 0, 1, 2, false, nil
	}
	var okA, okU, okR bool
	ai, okA = idx["account"]
	ui, okU = idx["user"]
	ri, okR = idx["rawshares"]
	if !okA || !okU || !okR {
		return 0, 0, 0, true, perr("sshare", line, "", strings.Join(fields, "|"), ErrHeader, "need Account, User and RawShares")
	}
	return ai, ui, ri, true, nil
}

// ParseSshare reads `sshare -a -P` output. It keeps the account rows (those
// with an empty User column) except root, in input order, and skips user
// rows. sshare indents the Account column by depth; the indentation gives
// each account's parent and tells leaves from accounts with sub-accounts.
// Columns Account, User and RawShares are found by the header (without one,
// they are the first three). Complexity O(bytes).
func ParseSshare(r io.Reader, opts Options) ([]Share, Skipped, error) {
	const src = "sshare"
	ls := newLines(r, src)
	skipped := Skipped{}
	type anc struct {
		name   string
		depth  int
		shares float64 // NaN for root or when unknown
	}
	var stack []anc
	var out []Share
	seen := map[string]int{}
	fail := func(err error) error { return opts.skip(skipped, err) }
	err := eachShareRow(ls, func(fields []string, ai, ui, ri int) error {
		if len(fields) <= max(ai, ui, ri) {
			if err := fail(perr(src, ls.n, "", ls.text, ErrMalformed, "too few fields")); err != nil {
				return err
			}
			return nil
		}
		raw := fields[ai]
		name := strings.TrimLeft(raw, " ")
		depth := len(raw) - len(name)
		name = strings.TrimSpace(name)
		if strings.TrimSpace(fields[ui]) != "" {
			return nil // a user row
		}
		if !validName(name) {
			if err := fail(perr(src, ls.n, "Account", raw, ErrMalformed, "not an account name")); err != nil {
				return err
			}
			return nil
		}
		for len(stack) > 0 && stack[len(stack)-1].depth >= depth {
			stack = stack[:len(stack)-1]
		}
		if depth == 0 {
			stack = append(stack, anc{name, 0, math.NaN()})
			return nil // root
		}
		rs := strings.TrimSpace(fields[ri])
		sh := Share{Account: name, Parent: "root", Depth: depth, Line: ls.n}
		if len(stack) > 0 {
			sh.Parent = stack[len(stack)-1].name
		}
		if strings.EqualFold(rs, "parent") {
			sh.RawShares, sh.Inherited = 1, true
			for i := len(stack) - 1; i >= 0; i-- {
				if !math.IsNaN(stack[i].shares) {
					sh.RawShares = stack[i].shares
					break
				}
			}
		} else {
			v, err := strconv.ParseFloat(rs, 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				if err := fail(perr(src, ls.n, "RawShares", rs, ErrMalformed, "not a share count")); err != nil {
					return err
				}
				return nil
			}
			sh.RawShares = v
		}
		if prev, dup := seen[name]; dup {
			if err := fail(perr(src, ls.n, "Account", name, ErrDuplicate, "also on line %d", prev)); err != nil {
				return err
			}
			return nil
		}
		seen[name] = ls.n
		stack = append(stack, anc{name, depth, sh.RawShares})
		out = append(out, sh)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	parents := map[string]bool{}
	for _, s := range out {
		parents[s.Parent] = true
	}
	for i := range out {
		out[i].Leaf = !parents[out[i].Account]
	}
	return out, skipped, nil
}

// Weights returns the account → RawShares map of the leaf accounts: the
// tree is flattened to the accounts that jobs are charged to, each a tenant
// weighted by its own RawShares (an account with sub-accounts is left out,
// since its share is theirs). For another mapping, build the map yourself
// or use a weights file ([ParseWeights]).
func Weights(shares []Share) map[string]float64 {
	w := make(map[string]float64, len(shares))
	for _, s := range shares {
		if s.Leaf {
			w[s.Account] = s.RawShares
		}
	}
	return w
}

// ParseWeights reads a weights file: one "account,weight" per line, blank
// lines and lines starting with '#' ignored, an optional first line
// "account,weight" as header. Weights are non-negative finite numbers; an
// account listed twice is ErrDuplicate. Complexity O(bytes).
func ParseWeights(r io.Reader, opts Options) (map[string]float64, Skipped, error) {
	const src = "weights"
	ls := newLines(r, src)
	skipped := Skipped{}
	out := map[string]float64{}
	lineOf := map[string]int{}
	first := true
	for ls.next() {
		t := strings.TrimSpace(ls.text)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		acct, ws, ok := strings.Cut(t, ",")
		acct, ws = strings.TrimSpace(acct), strings.TrimSpace(ws)
		if first {
			first = false
			if strings.EqualFold(acct, "account") && strings.EqualFold(ws, "weight") {
				continue
			}
		}
		var err error
		w, perr2 := strconv.ParseFloat(ws, 64)
		switch {
		case !ok || strings.Contains(ws, ","):
			err = perr(src, ls.n, "", t, ErrMalformed, "want account,weight")
		case !validName(acct):
			err = perr(src, ls.n, "account", acct, ErrMalformed, "not an account name")
		case perr2 != nil || w < 0 || math.IsInf(w, 0) || math.IsNaN(w):
			err = perr(src, ls.n, "weight", ws, ErrMalformed, "not a non-negative number")
		default:
			if prev, dup := lineOf[acct]; dup {
				err = perr(src, ls.n, "account", acct, ErrDuplicate, "also on line %d", prev)
			}
		}
		if err != nil {
			if err := opts.skip(skipped, err); err != nil {
				return nil, nil, err
			}
			continue
		}
		out[acct] = w
		lineOf[acct] = ls.n
	}
	if err := ls.err(); err != nil {
		return nil, nil, err
	}
	return out, skipped, nil
}

// eachShareRow calls row with the fields of every line of ls that is not
// blank and not sshare's header, with the header's column positions (the
// Account, User and RawShares columns), and stops at row's first error or
// the input's.
func eachShareRow(ls *lines, row func(fields []string, ai, ui, ri int) error) error {
	ai, ui, ri := 0, 1, 2
	first := true
	for ls.next() {
		if strings.TrimSpace(ls.text) == "" {
			continue
		}
		fields := strings.Split(ls.text, "|")
		if first {
			first = false
			var header bool
			var err error
			if ai, ui, ri, header, err = sshareHeader(fields, ls.n); err != nil {
				return err
			} else if header {
				continue
			}
		}
		if err := row(fields, ai, ui, ri); err != nil {
			return err
		}
	}
	return ls.err()
}
