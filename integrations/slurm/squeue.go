package slurm

import (
	"io"
	"strings"
)

// SqueueCommand is the squeue invocation whose output ParsePending reads:
// one pending job per line, "jobid|account|tres-per-node|user|partition",
// e.g. "1234|team-a|gres:gpu:2|alice|gpu" (Slurm 22 prints gres:gpu:2,
// later versions gres/gpu:2). The user and partition columns are optional
// (older captures have the first three only).
const SqueueCommand = `squeue -h -t PD -o "%i|%a|%b|%u|%P"`

// PendingJob is a job waiting in the queue.
type PendingJob struct {
	ID      string // as squeue prints it; array tasks look like 1234_7 or 1234_[1-9]
	Account string
	GPUs    int    // per node, from %b
	User    string // "" when the input has no user column
	// Partition is the partition the job waits for ("" when the input has
	// no partition column). A job submitted to several prints them
	// comma-separated.
	Partition string
	Line      int
}

// ParsePending reads `squeue -h -t PD -o "%i|%a|%b|%u|%P"` output, in input
// order. A header line (when -h was left out) is skipped. Job ids and
// account names must be plain Slurm names (no spaces or shell
// metacharacters), since they are printed into scontrol command lines.
// Complexity O(bytes).
func ParsePending(r io.Reader, opts Options) ([]PendingJob, Skipped, error) {
	const src = "squeue"
	ls := newLines(r, src)
	skipped := Skipped{}
	var out []PendingJob
	for ls.next() {
		t := strings.TrimSpace(ls.text)
		if t == "" {
			continue
		}
		fields := strings.Split(t, "|")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if ls.n == 1 && strings.EqualFold(fields[0], "JOBID") {
			continue
		}
		var err error
		var gpus int
		switch {
		case len(fields) < 3 || len(fields) > 5:
			err = perr(src, ls.n, "", t, ErrMalformed, "want jobid|account|tres-per-node[|user[|partition]]")
		case !validName(fields[0]):
			err = perr(src, ls.n, "jobid", fields[0], ErrMalformed, "not a job id")
		case !validName(fields[1]):
			err = perr(src, ls.n, "account", fields[1], ErrMalformed, "not an account name")
		case len(fields) > 3 && fields[3] != "" && !validName(fields[3]):
			err = perr(src, ls.n, "user", fields[3], ErrMalformed, "not a user name")
		case len(fields) > 4 && fields[4] != "" && !validName(fields[4]):
			err = perr(src, ls.n, "partition", fields[4], ErrMalformed, "not a partition name")
		default:
			if gpus, err = GresGPUs(fields[2]); err != nil {
				err = perr(src, ls.n, "tres-per-node", fields[2], ErrUnknownTRES, "%v", err)
			}
		}
		if err != nil {
			if err := opts.skip(skipped, err); err != nil {
				return nil, nil, err
			}
			continue
		}
		pj := PendingJob{ID: fields[0], Account: fields[1], GPUs: gpus, Line: ls.n}
		if len(fields) > 3 {
			pj.User = fields[3]
		}
		if len(fields) > 4 {
			pj.Partition = fields[4]
		}
		out = append(out, pj)
	}
	if err := ls.err(); err != nil {
		return nil, nil, err
	}
	return out, skipped, nil
}
