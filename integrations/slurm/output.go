package slurm

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// Formats accepted by WriteReport.
const (
	FormatText = "text"
	FormatCSV  = "csv"
	FormatJSON = "json"
)

// WriteReport writes the report as an sshare-like table ("text"), as CSV
// with a header line, or as one JSON object. With a tree the text table
// indents accounts by depth and has a User column, CSV gains the columns
// user and depth and JSON the fields user, depth and use_parent, and
// RawShares reads "parent" for Fairshare=parent (text, CSV). Text and
// JSON then list the partitions' capacity and the pending jobs with why
// they wait (Report.Partitions, Report.Pending); CSV has the accounts only. GPU-hours are GPU-seconds ÷
// 3600; CSV and JSON also carry the exact GPU-seconds.
func WriteReport(w io.Writer, rep *Report, format string) error {
	switch format {
	case FormatText, "":
		return writeText(w, rep)
	case FormatCSV:
		return writeCSV(w, rep)
	case FormatJSON:
		return writeJSON(w, rep)
	}
	return fmt.Errorf("slurm: unknown format %q (want text, csv or json)", format)
}

func hours(s ledger.GPUSeconds) float64 { return float64(s) / 3600 }

func modeName(m ledger.Mode) string {
	if m == ledger.QuotaShare {
		return "quota"
	}
	return "demand"
}

func writeText(w io.Writer, rep *Report) error {
	hl := ""
	if rep.HalfLife > 0 {
		hl = ", half-life " + rep.HalfLife.String()
	}
	if _, err := fmt.Fprintf(w, "window %s .. %s, %d GPUs, %s mode%s, %d jobs\n",
		rep.From.Format(TimeLayout), rep.To.Format(TimeLayout), rep.Capacity, modeName(rep.Mode), hl, rep.Jobs); err != nil {
		return err
	}
	tree := isTree(rep)
	// Account names are left-aligned (padded here), numbers right-aligned.
	// With a tree the names are indented by depth, as sshare does.
	name := func(r Row) string {
		if !tree {
			return r.Account
		}
		return strings.Repeat(" ", max(r.Depth-1, 0)) + r.Account
	}
	aw, uw := len("Account"), len("User")
	for _, r := range rep.Rows {
		aw, uw = max(aw, len(name(r))), max(uw, len(r.User))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	user, userRule := "", ""
	if tree {
		user, userRule = fmt.Sprintf("%-*s\t", uw, "User"), strings.Repeat("-", uw)+"\t"
	}
	fmt.Fprintf(tw, "%-*s\t%sRawShares\tNormShares\tGPUh-Used\tGPUh-Owed\tRho\tRank\t\n", aw, "Account", user)
	fmt.Fprintf(tw, "%s\t%s---------\t----------\t---------\t---------\t------\t----\t\n", strings.Repeat("-", aw), userRule)
	for _, r := range rep.Rows {
		if tree {
			user = fmt.Sprintf("%-*s\t", uw, r.User)
		}
		rank := ""
		if r.Rank > 0 {
			rank = strconv.Itoa(r.Rank)
		}
		fmt.Fprintf(tw, "%-*s\t%s%s\t%.6f\t%.3f\t%.3f\t%s\t%s\t\n", aw, name(r), user,
			rawShares(r), r.NormShares, hours(r.Used), hours(r.Owed), r.Rho, rank)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writePartsAndPending(w, rep)
}

// writePartsAndPending prints the partition capacities and the pending
// jobs with why they wait, when the report has them.
func writePartsAndPending(w io.Writer, rep *Report) error {
	for _, p := range rep.Partitions {
		free := ""
		if p.Free >= 0 {
			free = fmt.Sprintf(", %d free", p.Free)
		}
		nodes := "nodes"
		if p.Nodes == 1 {
			nodes = "node"
		}
		if _, err := fmt.Fprintf(w, "partition %s: %d GPUs on %d %s%s\n", p.Name, p.GPUs, p.Nodes, nodes, free); err != nil {
			return err
		}
	}
	if len(rep.Pending) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JobID\tAccount\tUser\tPartition\tGPUs\tWhy")
	for _, p := range rep.Pending {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", p.ID, p.Account, p.User, p.Partition, p.GPUs, p.Why)
	}
	return tw.Flush()
}

// isTree reports whether the report's rows come from a [Tree].
func isTree(rep *Report) bool {
	for _, r := range rep.Rows {
		if r.Depth > 0 {
			return true
		}
	}
	return false
}

// rawShares prints a row's RawShares as sshare does: a number, or "parent".
func rawShares(r Row) string {
	if r.UseParent {
		return "parent"
	}
	return strconv.FormatFloat(r.RawShares, 'g', -1, 64)
}

func writeCSV(w io.Writer, rep *Report) error {
	cw := csv.NewWriter(w)
	tree := isTree(rep)
	head := []string{"account", "raw_shares", "norm_shares", "used_gpu_hours", "owed_gpu_hours",
		"used_gpu_seconds", "owed_gpu_seconds", "rho", "rank"}
	if tree {
		head = append(head, "user", "depth")
	}
	_ = cw.Write(head)
	for _, r := range rep.Rows {
		rec := []string{r.Account,
			rawShares(r),
			strconv.FormatFloat(r.NormShares, 'f', 6, 64),
			strconv.FormatFloat(hours(r.Used), 'f', 6, 64),
			strconv.FormatFloat(hours(r.Owed), 'f', 6, 64),
			strconv.FormatFloat(float64(r.Used), 'f', 3, 64),
			strconv.FormatFloat(float64(r.Owed), 'f', 3, 64),
			r.Rho.String(),
			strconv.Itoa(r.Rank)}
		if tree {
			rec = append(rec, r.User, strconv.Itoa(r.Depth))
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

type jsonRow struct {
	Account        string     `json:"account"`
	User           string     `json:"user,omitempty"`
	Depth          int        `json:"depth,omitempty"`
	UseParent      bool       `json:"use_parent,omitempty"`
	RawShares      float64    `json:"raw_shares"`
	NormShares     float64    `json:"norm_shares"`
	UsedGPUHours   float64    `json:"used_gpu_hours"`
	OwedGPUHours   float64    `json:"owed_gpu_hours"`
	UsedGPUSeconds float64    `json:"used_gpu_seconds"`
	OwedGPUSeconds float64    `json:"owed_gpu_seconds"`
	Rho            ledger.Rho `json:"rho"`
	Rank           int        `json:"rank"`
}

type jsonReport struct {
	From     time.Time      `json:"from"`
	To       time.Time      `json:"to"`
	Now      time.Time      `json:"now"`
	Mode     string         `json:"mode"`
	Capacity int            `json:"capacity"`
	HalfLife string         `json:"half_life,omitempty"`
	Jobs     int            `json:"jobs"`
	Ignored  map[string]int `json:"ignored,omitempty"`
	Skipped  map[string]int `json:"skipped,omitempty"`
	Accounts []jsonRow      `json:"accounts"`

	Partitions []jsonPartition `json:"partitions,omitempty"`
	Pending    []jsonPending   `json:"pending,omitempty"`
}

type jsonPartition struct {
	Name  string `json:"name"`
	Nodes int    `json:"nodes"`
	GPUs  int    `json:"gpus"`
	Free  int    `json:"free"` // -1: unknown
}

type jsonPending struct {
	JobID     string `json:"job_id"`
	Account   string `json:"account"`
	User      string `json:"user,omitempty"`
	Partition string `json:"partition,omitempty"`
	GPUs      int    `json:"gpus"`
	Next      bool   `json:"next"`
	Why       string `json:"why"`
}

func writeJSON(w io.Writer, rep *Report) error {
	out := jsonReport{From: rep.From, To: rep.To, Now: rep.Now, Mode: modeName(rep.Mode),
		Capacity: int(rep.Capacity), Jobs: rep.Jobs, Ignored: rep.Ignored, Skipped: rep.Skipped,
		Accounts: []jsonRow{}}
	if rep.HalfLife > 0 {
		out.HalfLife = rep.HalfLife.String()
	}
	for _, r := range rep.Rows {
		out.Accounts = append(out.Accounts, jsonRow{r.Account, r.User, r.Depth, r.UseParent, r.RawShares, r.NormShares,
			hours(r.Used), hours(r.Owed), float64(r.Used), float64(r.Owed), r.Rho, r.Rank})
	}
	for _, p := range rep.Partitions {
		out.Partitions = append(out.Partitions, jsonPartition{p.Name, p.Nodes, p.GPUs, p.Free})
	}
	for _, p := range rep.Pending {
		out.Pending = append(out.Pending, jsonPending{p.ID, p.Account, p.User, p.Partition, p.GPUs, p.Next, p.Why})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
