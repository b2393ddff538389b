package slurm

import (
	"io"
	"slices"
	"strconv"
	"strings"
)

// Partition is a partition's GPU capacity: the GPUs of its nodes and, when
// sinfo reported GresUsed, those free.
type Partition struct {
	Name  string
	Nodes int
	GPUs  int
	Free  int // -1 when the use is unknown
}

// Partitions sums the nodes by partition, in the order the partitions
// first appear. A node in several partitions counts in each. Nodes without
// a partition are left out. O(nodes × partitions per node).
func Partitions(nodes []Node) []Partition {
	var out []Partition
	at := map[string]int{}
	for _, n := range nodes {
		for _, p := range n.Partitions {
			i, ok := at[p]
			if !ok {
				i = len(out)
				at[p] = i
				out = append(out, Partition{Name: p})
			}
			out[i].Nodes++
			out[i].GPUs += n.GPUs
			if n.Used < 0 || out[i].Free < 0 {
				out[i].Free = -1
			} else {
				out[i].Free += n.GPUs - n.Used
			}
		}
	}
	return out
}

// SinfoCommand is the sinfo invocation whose output ParseSinfo reads: one
// line per node and partition, "node|partition|gres|gres-used", e.g.
// "gpu01|gpu*|gpu:a100:8(S:0-1)|gpu:a100:2(IDX:0-1)" (the default
// partition is marked with '*'). The older form "node|gres"
// (`sinfo -h -N -o "%n|%G"`) and "node|partition|gres"
// (`sinfo -h -N -o "%n|%P|%G"`) are read too.
const SinfoCommand = `sinfo -h -N -O "NodeHost:|,Partition:|,Gres:|,GresUsed:"`

// Node is a node, its GPU count, the partitions it is in and the GPUs in
// use when sinfo was taken.
type Node struct {
	Name string
	GPUs int
	// Partitions lists the node's partitions in input order, without the
	// default partition's '*'; empty when the input has no partition column.
	Partitions []string
	// Used is the GPUs allocated (GresUsed); -1 when the input has no such
	// column.
	Used int
	Line int
}

// ParseSinfo reads [SinfoCommand] output and returns the nodes, in input
// order, and their total GPUs: the capacity M. A node listed more than
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
		fields := strings.Split(t, "|")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		name := fields[0]
		if ls.n == 1 && (strings.EqualFold(name, "NODELIST") || strings.EqualFold(name, "HOSTNAMES")) {
			continue // a header, when -h was left out
		}
		var err error
		var hosts []string
		var part, gres string
		gpus, used := 0, -1
		switch len(fields) {
		case 2:
			gres = fields[1]
		case 3, 4:
			part, gres = strings.TrimSuffix(fields[1], "*"), fields[2]
		default:
			err = perr(src, ls.n, "", t, ErrMalformed, "want node|partition|gres|gres-used")
		}
		switch {
		case err != nil:
		case part == "" && len(fields) > 2 || part != "" && !validName(part):
			err = perr(src, ls.n, "partition", fields[1], ErrMalformed, "not a partition name")
		default:
			if hosts, err = expandHostlist(name); err != nil {
				err = perr(src, ls.n, "node", name, ErrMalformed, "%v", err)
			} else if gpus, err = GresGPUs(gres); err != nil {
				err = perr(src, ls.n, "gres", gres, ErrUnknownTRES, "%v", err)
			} else if len(fields) == 4 {
				if used, err = GresGPUs(fields[3]); err != nil {
					err = perr(src, ls.n, "gres-used", fields[3], ErrUnknownTRES, "%v", err)
				} else if used > gpus {
					err = perr(src, ls.n, "gres-used", fields[3], ErrMalformed, "%d GPUs used of %d", used, gpus)
				}
			}
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
			if err := opts.skip(skipped, err); err != nil {
				return nil, 0, nil, err
			}
			continue
		}
		for _, h := range hosts {
			if i, dup := at[h]; dup {
				if part != "" && !slices.Contains(nodes[i].Partitions, part) {
					nodes[i].Partitions = append(nodes[i].Partitions, part)
				}
				continue
			}
			at[h] = len(nodes)
			n := Node{Name: h, GPUs: gpus, Used: used, Line: ls.n}
			if part != "" {
				n.Partitions = []string{part}
			}
			nodes = append(nodes, n)
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
