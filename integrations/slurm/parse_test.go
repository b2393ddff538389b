package slurm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.ParseInLocation(TimeLayout, s, time.UTC)
	if err != nil {
		panic(err)
	}
	return t
}

func openFixture(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

const sacctHeader = "JobIDRaw|Account|AllocTRES|ReqTRES|Submit|Start|End|State\n"

// gpuCount is a case of a GPU counter: its input, the count it gives, and
// whether it is refused.
type gpuCount struct {
	in   string
	want int
	bad  bool
}

// testGPUCounter runs the cases of count, named fn in messages: each gives
// its count, or an error matching ErrUnknownTRES.
func testGPUCounter(t *testing.T, fn string, count func(string) (int, error), cases map[string]gpuCount) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := count(tc.in)
			if (err != nil) != tc.bad || got != tc.want {
				t.Fatalf("%s(%q) = %d, %v; want %d, error %v", fn, tc.in, got, err, tc.want, tc.bad)
			}
			if err != nil && !errors.Is(err, ErrUnknownTRES) {
				t.Fatalf("%s(%q): error %v does not match ErrUnknownTRES", fn, tc.in, err)
			}
		})
	}
}

func TestTRESGPUs(t *testing.T) {
	testGPUCounter(t, "TRESGPUs", TRESGPUs, map[string]gpuCount{
		"an empty list has no GPUs":                     {"", 0, false},
		"a list without gres/gpu has no GPUs":           {"billing=1,cpu=4,mem=8G,node=1", 0, false},
		"the untyped entry counts":                      {"billing=1,cpu=1,gres/gpu=2,node=1", 2, false},
		"typed entries are summed":                      {"cpu=2,gres/gpu:a100=2,gres/gpu:v100=1", 3, false},
		"the untyped total wins over typed entries":     {"gres/gpu:a100=2,gres/gpu=2,mem=1G", 2, false},
		"other gres are ignored":                        {"gres/gpumem=40G,gres/mps=100,gres/gpu=1", 1, false},
		"an entry without '=' is unknown":               {"cpu=1,gres/gpu", 0, true},
		"an empty name is unknown":                      {"=3", 0, true},
		"a fractional GPU count is unknown":             {"gres/gpu=1.5", 0, true},
		"a negative GPU count is unknown":               {"gres/gpu=-1", 0, true},
		"an empty GPU type is unknown":                  {"gres/gpu:=1", 0, true},
		"the untyped entry twice is unknown":            {"gres/gpu=1,gres/gpu=2", 0, true},
		"an empty value is unknown":                     {"cpu=", 0, true},
		"a trailing comma leaves an empty entry":        {"cpu=1,", 0, true},
		"a huge typed sum is refused, not overflowed":   {"gres/gpu:a=1073741824,gres/gpu:b=1073741824", 0, true},
		"a count with a unit suffix is unknown for GPU": {"gres/gpu=2K", 0, true},
	})
}

func TestGresGPUs(t *testing.T) {
	testGPUCounter(t, "GresGPUs", GresGPUs, map[string]gpuCount{
		"an empty string has no GPUs":                {"", 0, false},
		"(null) has no GPUs":                         {"(null)", 0, false},
		"N/A has no GPUs":                            {"N/A", 0, false},
		"an untyped entry counts":                    {"gpu:8", 8, false},
		"a typed entry with a socket suffix":         {"gpu:a100:8(S:0-1)", 8, false},
		"prefixes are dropped":                       {"gres:gpu:2,gres/gpu:v100:1", 3, false},
		"commas inside parentheses do not split":     {"gpu:4(S:0,1),gpu:v100:2", 6, false},
		"other gres count nothing":                   {"nic:1,mps:100", 0, false},
		"a gpu entry without a count is unknown":     {"gpu", 0, true},
		"an empty name is unknown":                   {":1", 0, true},
		"an empty type is unknown":                   {"gpu::1", 0, true},
		"too many colons is unknown":                 {"gpu:a:b:1", 0, true},
		"an unbalanced parenthesis is unknown":       {"gpu:1(S:0", 0, true},
		"a negative count is unknown":                {"gpu:-1", 0, true},
		"a count above 2^20 is unknown":              {"gpu:1048577", 0, true},
		"an empty entry in a longer list is unknown": {"gpu:1,", 0, true},
	})
}

func TestParseSacctRecords(t *testing.T) {
	in := sacctHeader +
		"1|team-a|billing=1,cpu=1,gres/gpu=2,node=1|cpu=1,gres/gpu=2|2024-05-01T10:00:00|2024-05-01T10:00:05|2024-05-01T11:00:05|COMPLETED\n" +
		"2|team-b||cpu=1,gres/gpu:a100=4|2024-05-01T10:01:00|Unknown|Unknown|PENDING\n" +
		"3|team-b|cpu=1,gres/gpu:a100=1|cpu=1,gres/gpu:a100=1|2024-05-01T10:02:00|2024-05-01T10:03:00|2024-05-01T10:04:00|CANCELLED by 1000\n" +
		"4|team-a|||2024-05-01T10:05:00|None|2024-05-01T10:06:00|CANCELLED by 0\n" +
		"\n" +
		"5|team-a|cpu=1,gres/gpu=1|cpu=1,gres/gpu=1|2024-05-01T10:07:00|2024-05-01T10:07:01|Unknown|RUNNING\r\n"
	recs, skipped, err := ParseSacct(strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if skipped.Total() != 0 || len(recs) != 5 {
		t.Fatalf("got %d records, skipped %v", len(recs), skipped)
	}
	want := []Record{
		{JobID: "1", Account: "team-a", GPUs: 2, Submit: utc("2024-05-01T10:00:00"), Start: utc("2024-05-01T10:00:05"), End: utc("2024-05-01T11:00:05"), State: "COMPLETED", Line: 2},
		{JobID: "2", Account: "team-b", GPUs: 4, Submit: utc("2024-05-01T10:01:00"), State: "PENDING", Line: 3},
		{JobID: "3", Account: "team-b", GPUs: 1, Submit: utc("2024-05-01T10:02:00"), Start: utc("2024-05-01T10:03:00"), End: utc("2024-05-01T10:04:00"), State: "CANCELLED", Line: 4},
		{JobID: "4", Account: "team-a", GPUs: 0, Submit: utc("2024-05-01T10:05:00"), End: utc("2024-05-01T10:06:00"), State: "CANCELLED", Line: 5},
		{JobID: "5", Account: "team-a", GPUs: 1, Submit: utc("2024-05-01T10:07:00"), Start: utc("2024-05-01T10:07:01"), State: "RUNNING", Line: 7},
	}
	for i := range want {
		if recs[i] != want[i] {
			t.Errorf("record %d = %+v\nwant %+v", i, recs[i], want[i])
		}
	}
}

func TestParseSacctColumnsByHeader(t *testing.T) {
	in := "State|End|Start|Submit|ReqTRES|AllocTRES|Account|JobID|User\n" +
		"COMPLETED|2024-05-01T10:00:10|2024-05-01T10:00:00|2024-05-01T10:00:00|gres/gpu=1|gres/gpu=3|a|7|bob\n"
	recs, _, err := ParseSacct(strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := recs[0]; r.JobID != "7" || r.Account != "a" || r.GPUs != 3 || r.End.Sub(r.Start) != 10*time.Second {
		t.Fatalf("got %+v", r)
	}
	noHeader := "8|b|gres/gpu=2||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:00:01|FAILED\n"
	recs, _, err = ParseSacct(strings.NewReader(noHeader), Options{})
	if err != nil || recs[0].JobID != "8" || recs[0].GPUs != 2 {
		t.Fatalf("without header: %+v, %v", recs, err)
	}
}

func TestParseSacctTimeZones(t *testing.T) {
	in := sacctHeader + "1|a|gres/gpu=1||2024-03-31T01:30:00|2024-03-31T01:30:00|2024-03-31T03:30:00|COMPLETED\n"
	for name, tc := range map[string]struct {
		loc     *time.Location
		start   string // RFC 3339
		elapsed time.Duration
	}{
		"nil location is UTC":             {nil, "2024-03-31T01:30:00Z", 2 * time.Hour},
		"a fixed offset east of UTC":      {time.FixedZone("CET", 3600), "2024-03-31T00:30:00Z", 2 * time.Hour},
		"a fixed offset west of UTC":      {time.FixedZone("EST", -5*3600), "2024-03-31T06:30:00Z", 2 * time.Hour},
		"a zone that skips an hour (DST)": {berlin(t), "2024-03-31T00:30:00Z", time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			recs, _, err := ParseSacct(strings.NewReader(in), Options{Location: tc.loc})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := time.Parse(time.RFC3339, tc.start)
			if !recs[0].Start.Equal(want) || recs[0].End.Sub(recs[0].Start) != tc.elapsed {
				t.Fatalf("start %v (want %v), elapsed %v (want %v)", recs[0].Start.UTC(), want, recs[0].End.Sub(recs[0].Start), tc.elapsed)
			}
		})
	}
}

func berlin(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	return loc
}

func TestParseSacctErrorsNameTheLine(t *testing.T) {
	ok := "1|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:00:01|COMPLETED\n"
	for name, tc := range map[string]struct {
		bad   string
		kind  error
		field string
	}{
		"too few fields":                  {"2|a|gres/gpu=1\n", ErrMalformed, ""},
		"an unknown TRES form":            {"2|a|gres/gpu||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:00:01|COMPLETED\n", ErrUnknownTRES, "AllocTRES"},
		"an unknown TRES form in ReqTRES": {"2|a||gres/gpu=x|2024-05-01T10:00:00|Unknown|Unknown|PENDING\n", ErrUnknownTRES, "ReqTRES"},
		"End before Start":                {"2|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:05|2024-05-01T10:00:01|COMPLETED\n", ErrEndBeforeStart, "End"},
		"a bad time":                      {"2|a|gres/gpu=1||2024-05-01 10:00:00|Unknown|Unknown|PENDING\n", ErrBadTime, "Submit"},
		"an unknown Submit":               {"2|a|gres/gpu=1||Unknown|Unknown|Unknown|PENDING\n", ErrBadTime, "Submit"},
		"an unknown state":                {"2|a|gres/gpu=1||2024-05-01T10:00:00|Unknown|Unknown|SLEEPING\n", ErrUnknownState, "State"},
		"a final run without End":         {"2|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|Unknown|COMPLETED\n", ErrMalformed, "End"},
		"a job id with a space":           {"2 3|a|gres/gpu=1||2024-05-01T10:00:00|Unknown|Unknown|PENDING\n", ErrMalformed, "JobIDRaw"},
		"an account with a shell quote":   {"2|a'b|gres/gpu=1||2024-05-01T10:00:00|Unknown|Unknown|PENDING\n", ErrMalformed, "Account"},
	} {
		t.Run(name, func(t *testing.T) {
			in := sacctHeader + ok + tc.bad + ok
			_, _, err := ParseSacct(strings.NewReader(in), Options{})
			var pe *ParseError
			if !errors.Is(err, tc.kind) || !errors.As(err, &pe) || pe.Line != 3 || pe.Field != tc.field || pe.Source != "sacct" {
				t.Fatalf("err = %v (%#v); want %v on line 3 field %q", err, pe, tc.kind, tc.field)
			}
			if !strings.Contains(err.Error(), "line 3") {
				t.Fatalf("message %q does not name the line", err)
			}
			recs, skipped, err := ParseSacct(strings.NewReader(in), Options{Lenient: true})
			if err != nil || len(recs) != 2 || skipped.Total() != 1 {
				t.Fatalf("lenient: %d records, skipped %v, err %v", len(recs), skipped, err)
			}
			reason := strings.TrimPrefix(tc.kind.Error(), "slurm: ")
			if skipped[reason] != 1 {
				t.Fatalf("lenient: skipped %v, want 1 %q", skipped, reason)
			}
		})
	}
}

func TestParseSacctBadHeaderAndEmptyInput(t *testing.T) {
	_, _, err := ParseSacct(strings.NewReader("JobIDRaw|Account|State\n"), Options{Lenient: true})
	if !errors.Is(err, ErrHeader) {
		t.Fatalf("missing columns: %v", err)
	}
	_, _, err = ParseSacct(strings.NewReader(""), Options{})
	if !errors.Is(err, ErrHeader) {
		t.Fatalf("empty input: %v", err)
	}
	long := sacctHeader + strings.Repeat("x", MaxLineBytes+10) + "\n"
	_, _, err = ParseSacct(strings.NewReader(long), Options{Lenient: true})
	var pe *ParseError
	if !errors.Is(err, ErrLineTooLong) || !errors.As(err, &pe) || pe.Line != 2 {
		t.Fatalf("long line: %v", err)
	}
}

func TestLenientCountsPerReason(t *testing.T) {
	in := sacctHeader +
		"1|a|gres/gpu||2024-05-01T10:00:00|Unknown|Unknown|PENDING\n" +
		"2|a|gres/gpu=x||2024-05-01T10:00:00|Unknown|Unknown|PENDING\n" +
		"3|a|gres/gpu=1||2024-05-01T10:00:00|Unknown|Unknown|NAPPING\n" +
		"4|a\n" +
		"5|a|gres/gpu=1||2024-05-01T10:00:00|Unknown|Unknown|PENDING\n"
	recs, skipped, err := ParseSacct(strings.NewReader(in), Options{Lenient: true})
	if err != nil || len(recs) != 1 {
		t.Fatal(recs, err)
	}
	want := Skipped{"unknown TRES form": 2, "unknown job state": 1, "malformed line": 1}
	if skipped.String() != want.String() || skipped.Total() != 4 {
		t.Fatalf("skipped %v, want %v", skipped, want)
	}
	if got := (Skipped{}).String(); got != "none" {
		t.Fatalf("empty Skipped prints %q", got)
	}
}

func TestGroupJobsRequeue(t *testing.T) {
	recs, _, err := ParseSacct(openFixture(t, "real/sacct.txt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	jobs, skipped, err := GroupJobs(recs, false)
	if err != nil || skipped.Total() != 0 {
		t.Fatal(err, skipped)
	}
	if len(jobs) != len(recs)-1 {
		t.Fatalf("%d jobs from %d records; want one requeued job merged", len(jobs), len(recs))
	}
	var rq *Job
	for i := range jobs {
		if len(jobs[i].Runs) == 2 {
			rq = &jobs[i]
		}
	}
	if rq == nil {
		t.Fatal("no job with two runs")
	}
	if rq.State != "COMPLETED" || rq.Runs[0].End.After(rq.Runs[1].Start) || rq.End.IsZero() {
		t.Fatalf("requeued job %+v", *rq)
	}
	for i := 1; i < len(jobs); i++ {
		if jobs[i].Submit.Before(jobs[i-1].Submit) {
			t.Fatalf("jobs not in submit order: %v after %v", jobs[i].Submit, jobs[i-1].Submit)
		}
	}
}

func TestGroupJobsErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		line int
	}{
		"two runs that overlap": {
			"1|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:10:00|REQUEUED\n" +
				"1|a|gres/gpu=1||2024-05-01T10:05:00|2024-05-01T10:05:00|2024-05-01T10:20:00|COMPLETED\n", 3},
		"a run after a final state": {
			"1|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:10:00|COMPLETED\n" +
				"1|a|gres/gpu=1||2024-05-01T10:15:00|2024-05-01T10:15:00|2024-05-01T10:20:00|COMPLETED\n", 3},
		"one job charged to two accounts": {
			"1|a|gres/gpu=1||2024-05-01T10:00:00|2024-05-01T10:00:00|2024-05-01T10:10:00|REQUEUED\n" +
				"1|b|gres/gpu=1||2024-05-01T10:15:00|2024-05-01T10:15:00|2024-05-01T10:20:00|COMPLETED\n", 3},
	} {
		t.Run(name, func(t *testing.T) {
			recs, _, err := ParseSacct(strings.NewReader(sacctHeader+tc.in), Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = GroupJobs(recs, false)
			var pe *ParseError
			if !errors.Is(err, ErrOverlap) || !errors.As(err, &pe) || pe.Line != tc.line {
				t.Fatalf("err = %v, want ErrOverlap on line %d", err, tc.line)
			}
			jobs, skipped, err := GroupJobs(recs, true)
			if err != nil || len(jobs) != 0 || skipped["overlapping runs"] != 1 {
				t.Fatalf("lenient: %v %v %v", jobs, skipped, err)
			}
		})
	}
}

func TestParseSshare(t *testing.T) {
	shares, skipped, err := ParseSshare(openFixture(t, "real/sshare.txt"), Options{})
	if err != nil || skipped.Total() != 0 {
		t.Fatal(err, skipped)
	}
	w := Weights(shares)
	if len(w) != 2 || w["team-a"] != 3 || w["team-b"] != 1 {
		t.Fatalf("weights %v", w)
	}
	tree := "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare\n" +
		"root|||0.000000|0|1.000000|\n" +
		" physics||10|0.5|0|0|\n" +
		"  astro||parent|0.5|0|0|\n" +
		"   astro|alice|1|1|0|0|1\n" +
		"  hep||4|0.5|0|0|\n" +
		" chem||parent|0.5|0|0|\n" +
		"  chem|bob|parent|1|0|0|1\n"
	shares, _, err = ParseSshare(strings.NewReader(tree), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Share{
		{Account: "physics", Parent: "root", Depth: 1, RawShares: 10, Line: 3},
		{Account: "astro", Parent: "physics", Depth: 2, RawShares: 10, Inherited: true, Leaf: true, Line: 4},
		{Account: "hep", Parent: "physics", Depth: 2, RawShares: 4, Leaf: true, Line: 6},
		{Account: "chem", Parent: "root", Depth: 1, RawShares: 1, Inherited: true, Leaf: true, Line: 7},
	}
	if len(shares) != len(want) {
		t.Fatalf("got %+v", shares)
	}
	for i := range want {
		if shares[i] != want[i] {
			t.Errorf("share %d = %+v, want %+v", i, shares[i], want[i])
		}
	}
	if w := Weights(shares); len(w) != 3 || w["astro"] != 10 || w["hep"] != 4 || w["chem"] != 1 {
		t.Errorf("weights of the leaves: %v", w)
	}
}

func TestParseSshareErrors(t *testing.T) {
	head := "Account|User|RawShares\nroot||\n"
	for name, tc := range map[string]struct {
		in   string
		kind error
	}{
		"a non-numeric share": {" a||lots\n", ErrMalformed},
		"a negative share":    {" a||-1\n", ErrMalformed},
		"an account twice":    {" a||1\n a||2\n", ErrDuplicate},
		"too few fields":      {" a\n", ErrMalformed},
		"a name with a quote": {" a\"||1\n", ErrMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := ParseSshare(strings.NewReader(head+tc.in), Options{})
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
			_, skipped, err := ParseSshare(strings.NewReader(head+tc.in), Options{Lenient: true})
			if err != nil || skipped.Total() != 1 {
				t.Fatalf("lenient: %v %v", skipped, err)
			}
		})
	}
	_, _, err := ParseSshare(strings.NewReader("Account|NormShares\n"), Options{})
	if !errors.Is(err, ErrHeader) {
		t.Fatalf("header without RawShares: %v", err)
	}
}

func TestParseWeights(t *testing.T) {
	in := "# shares per account\naccount,weight\nteam-a, 3\n\nteam-b,1.5\n"
	w, _, err := ParseWeights(strings.NewReader(in), Options{})
	if err != nil || len(w) != 2 || w["team-a"] != 3 || w["team-b"] != 1.5 {
		t.Fatal(w, err)
	}
	for name, tc := range map[string]struct {
		in   string
		kind error
		line int
	}{
		"a missing comma":   {"a,1\nb 2\n", ErrMalformed, 2},
		"a negative weight": {"a,-1\n", ErrMalformed, 1},
		"a NaN weight":      {"a,NaN\n", ErrMalformed, 1},
		"three fields":      {"a,1,2\n", ErrMalformed, 1},
		"an account twice":  {"a,1\n#\na,2\n", ErrDuplicate, 3},
		"an empty account":  {",1\n", ErrMalformed, 1},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := ParseWeights(strings.NewReader(tc.in), Options{})
			var pe *ParseError
			if !errors.Is(err, tc.kind) || !errors.As(err, &pe) || pe.Line != tc.line {
				t.Fatalf("err = %v, want %v on line %d", err, tc.kind, tc.line)
			}
		})
	}
}

func TestParseSinfo(t *testing.T) {
	nodes, total, _, err := ParseSinfo(openFixture(t, "real/sinfo.txt"), Options{})
	if err != nil || total != 4 || len(nodes) != 1 || nodes[0].Name != "localhost" {
		t.Fatal(nodes, total, err)
	}
	in := "NODELIST|GRES\n" +
		"gpu01|gpu:a100:8(S:0-1)\n" +
		"gpu01|gpu:a100:8(S:0-1)\n" + // the same node in a second partition
		"gpu[02-04]|gpu:4,gpu:v100:2(S:0,1)\n" +
		"cpu01|(null)\n" +
		"mix01|gpu:2,nic:1\n"
	nodes, total, _, err = ParseSinfo(strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if total != 8+3*6+0+2 || len(nodes) != 6 || nodes[1].Name != "gpu02" || nodes[3].Name != "gpu04" {
		t.Fatalf("total %d nodes %+v", total, nodes)
	}
	for name, tc := range map[string]struct {
		in   string
		kind error
	}{
		"a node listed with two GPU counts": {"n1|gpu:4\nn1|gpu:8\n", ErrDuplicate},
		"a GRES count that is not a number": {"n1|gpu:four\n", ErrUnknownTRES},
		"a GRES with too many colons":       {"n1|gpu:a:b:4\n", ErrUnknownTRES},
		"a missing separator":               {"n1 gpu:4\n", ErrMalformed},
		"a reversed host range":             {"n[4-1]|gpu:1\n", ErrMalformed},
		"two bracket groups":                {"r[1-2]n[1-2]|gpu:1\n", ErrMalformed},
		"an unbalanced parenthesis":         {"n1|gpu:4(S:0\n", ErrUnknownTRES},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, _, err := ParseSinfo(strings.NewReader(tc.in), Options{})
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
		})
	}
}

func TestParsePending(t *testing.T) {
	pending, _, err := ParsePending(openFixture(t, "real/squeue.txt"), Options{})
	if err != nil || len(pending) != 2 {
		t.Fatal(pending, err)
	}
	if p := pending[0]; p.Account != "team-a" || p.GPUs != 1 || pending[1].GPUs != 2 {
		t.Fatalf("%+v", pending)
	}
	in := "JOBID|ACCOUNT|TRES_PER_NODE\n12_[1-3]|a|gres/gpu:a100:2\n13|b|N/A\n14|c|gres:gpu:1,gres:nic:1\n"
	pending, _, err = ParsePending(strings.NewReader(in), Options{})
	if err != nil || len(pending) != 3 || pending[0].ID != "12_[1-3]" || pending[0].GPUs != 2 || pending[1].GPUs != 0 || pending[2].GPUs != 1 {
		t.Fatal(pending, err)
	}
	for name, bad := range map[string]string{
		"a job id with a semicolon": "1;reboot|a|N/A\n",
		"two fields":                "1|a\n",
		"an empty account":          "1||N/A\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := ParsePending(strings.NewReader(bad), Options{})
			var pe *ParseError
			if !errors.Is(err, ErrMalformed) || !errors.As(err, &pe) || pe.Line != 1 {
				t.Fatalf("err = %v", err)
			}
		})
	}
}
