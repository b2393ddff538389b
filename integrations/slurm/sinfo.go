package slurm

import (
	"io"
	"strconv"
	"strings"
)

// SinfoCommand is the sinfo invocation whose output ParseSinfo reads: one
// line per node and partition, "node|gres", e.g. "gpu01|gpu:a100:8(S:0-1)".
const SinfoCommand = `sinfo -h -N -o "%n|%G"`

// Node is a node and its GPU count.
type Node struct {
	Name string
	GPUs int
	Line int
}

// ParseSinfo reads `sinfo -h -N -o "%n|%G"` output and returns the nodes, in
// input order, and their total GPUs: the capacity M. A node listed more than
// once (it is in several partitions) counts once; listed with different GRES
// it is ErrDuplicate. The node column may also be a host list such as
// "gpu[01-04,07]" (sinfo without -N groups nodes that way); every host in it
// gets the line's GPUs. GRES entries are "gpu:N", "gpu:TYPE:N", optionally
// followed by "(S:...)" or "(IDX:...)"; other GRES and "(null)" count 0.
// Complexity O(bytes + nodes).
func ParseSinfo(r io.Reader, opts Options) ([]Node, int, Skipped, error) {
	const src = "sinfo"
	ls := newLines(r, src)
	skipped := Skipped{}
	var nodes []Node
	at := map[string]int{} // name -> index in nodes
	total := 0
	for ls.next() {
		t := strings.TrimSpace(ls.text)
		if t == "" {
			continue
		}
		name, gres, ok := strings.Cut(t, "|")
		name, gres = strings.TrimSpace(name), strings.TrimSpace(gres)
		if ls.n == 1 && (strings.EqualFold(name, "NODELIST") || strings.EqualFold(name, "HOSTNAMES")) {
			continue // a header, when -h was left out
		}
		var err error
		var hosts []string
		gpus := 0
		if !ok || strings.Contains(gres, "|") {
			err = perr(src, ls.n, "", t, ErrMalformed, "want node|gres")
		} else if hosts, err = expandHostlist(name); err != nil {
			err = perr(src, ls.n, "node", name, ErrMalformed, "%v", err)
		} else if gpus, err = GresGPUs(gres); err != nil {
			err = perr(src, ls.n, "gres", gres, ErrUnknownTRES, "%v", err)
		}
		if err == nil {
			for _, h := range hosts {
				if i, dup := at[h]; dup && nodes[i].GPUs != gpus {
					err = perr(src, ls.n, "node", h, ErrDuplicate, "%d GPUs here, %d on line %d", gpus, nodes[i].GPUs, nodes[i].Line)
					break
				}
			}
		}
		if err != nil {
			if !opts.Lenient {
				return nil, 0, nil, err
			}
			skipped.add(err)
			continue
		}
		for _, h := range hosts {
			if _, dup := at[h]; dup {
				continue
			}
			at[h] = len(nodes)
			nodes = append(nodes, Node{Name: h, GPUs: gpus, Line: ls.n})
			total += gpus
		}
	}
	if err := ls.err(); err != nil {
		return nil, 0, nil, err
	}
	return nodes, total, skipped, nil
}

// GresGPUs returns the GPU count of a GRES string as sinfo %G or squeue %b
// print it: comma-separated entries "gpu:N", "gpu:TYPE:N" (with an optional
// "gres:" or "gres/" prefix and "(...)" suffix). Entries of other GRES count
// 0; "", "(null)" and "N/A" are 0 GPUs. An error names the entry at fault
// and matches ErrUnknownTRES.
func GresGPUs(gres string) (int, error) {
	switch gres {
	case "", "(null)", "N/A", "none":
		return 0, nil
	}
	total := 0
	for _, e := range splitOutside(gres, '(', ')') {
		if i := strings.IndexByte(e, '('); i >= 0 {
			if !strings.HasSuffix(e, ")") {
				return 0, &tresError{e, "unbalanced parenthesis"}
			}
			e = e[:i]
		}
		e = strings.TrimPrefix(strings.TrimPrefix(e, "gres:"), "gres/")
		parts := strings.Split(e, ":")
		if parts[0] == "" {
			return 0, &tresError{e, "empty GRES name"}
		}
		if parts[0] != "gpu" {
			continue
		}
		var ns string
		switch len(parts) {
		case 2:
			ns = parts[1]
		case 3:
			if parts[1] == "" {
				return 0, &tresError{e, "empty GPU type"}
			}
			ns = parts[2]
		default:
			return 0, &tresError{e, "want gpu:N or gpu:TYPE:N"}
		}
		n, err := strconv.Atoi(ns)
		if err != nil || n < 0 || n > 1<<20 {
			return 0, &tresError{e, "GPU count is not a whole number"}
		}
		total += n
		if total > 1<<30 {
			return 0, &tresError{e, "GPU count too large"}
		}
	}
	return total, nil
}

// splitOutside splits s at commas that are not inside an opening…closing
// group, such as the parentheses of a GRES entry or the brackets of a host
// list. A stray closing byte does not push the depth below zero.
func splitOutside(s string, opening, closing byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case opening:
			depth++
		case closing:
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// maxHosts bounds the expansion of one host list.
const maxHosts = 1 << 16

// expandHostlist expands a Slurm host list with at most one bracket group:
// "gpu[01-03,07]" → gpu01 gpu02 gpu03 gpu07 (zero padding kept); a plain
// name is itself. Comma-separated lists of such items are accepted too.
func expandHostlist(s string) ([]string, error) {
	var out []string
	for _, item := range splitOutside(s, '[', ']') {
		open := strings.IndexByte(item, '[')
		if open < 0 {
			if !validName(item) || strings.ContainsAny(item, "]") {
				return nil, &tresError{item, "not a host name"}
			}
			out = append(out, item)
			continue
		}
		cl := strings.IndexByte(item, ']')
		if cl < open || strings.Count(item, "[") != 1 || strings.Count(item, "]") != 1 {
			return nil, &tresError{item, "want one bracket group"}
		}
		prefix, body, suffix := item[:open], item[open+1:cl], item[cl+1:]
		if (prefix != "" && !validName(prefix)) || (suffix != "" && !validName(suffix)) {
			return nil, &tresError{item, "not a host name"}
		}
		for _, rg := range strings.Split(body, ",") {
			lo, hi, isRange := strings.Cut(rg, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if lo == "" || err1 != nil || err2 != nil || a < 0 || b < a || b-a >= maxHosts {
				return nil, &tresError{rg, "bad range"}
			}
			if len(out)+b-a+1 > maxHosts {
				return nil, &tresError{item, "too many hosts"}
			}
			for n := a; n <= b; n++ {
				d := strconv.Itoa(n)
				for len(d) < len(lo) {
					d = "0" + d
				}
				out = append(out, prefix+d+suffix)
			}
		}
	}
	return out, nil
}
