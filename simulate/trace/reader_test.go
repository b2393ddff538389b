package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
	"time"
)

func read(t *testing.T, in string, opts Options) ([]Job, *Reader, error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(in), opts)
	if err != nil {
		return nil, nil, err
	}
	jobs, err := ReadAll(r)
	return jobs, r, err
}

func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t
}

const venusFixture = `job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration
771544,u6vfj,vcWoR,4,1,FAILED,2020-09-07 00:00:19,453
771545,ufcLd,vcHvQ,1,1,CANCELLED,2020-09-07 00:01:53,181
771546,ufcLd,vcHvQ,8,6,COMPLETED,2020-09-07 00:01:53,0
`

const phillyFixture = `job_id,user,vc,gpu_num,state,submit_time,duration,source
pollux-31397,,6214e9,1,COMPLETED,2017-10-01 00:00:45,30,pollux
application_1506638472019_2058,066e99,11cb48,2,FAILED,2017-10-01 00:01:55,61,helios
`

const polluxFixture = `timestamp,duration,num_gpus,gpu_time,cluster
2017-10-09 07:01:55,66.0,1,66.0,11cb48
2017-10-09 06:13:03,2951.5,2,5903.0,6214e9
2017-10-09 06:13:03,10.0,4,40.0,6214e9

`

const artifactFixture = `job_id,user,num_gpu,submit_time,duration
0,11cb48,1,115,73
1,11cb48,1,715,66
2,ed69ec,8,1290,73528
`

const genericFixture = `tenant,job,gpus,submit,duration,state,weight
team-a,a1,8,2024-03-01T08:00:00Z,3600,COMPLETED,
team-b,b1,1,2024-03-01 08:00:00,1h30m,failed,2
team-a,a2,2,1709280060,90.5,,0.5
`

func TestFormats(t *testing.T) {
	base := utc("2017-10-10 00:00:00")
	tests := []struct {
		name   string
		in     string
		opts   Options
		format Format
		want   []Job
	}{
		{"Venus rows keep vc as tenant and user, state and times", venusFixture, Options{}, FormatVenus, []Job{
			{ID: "771544", Tenant: "vcWoR", User: "u6vfj", GPUs: 4, Submit: utc("2020-09-07 00:00:19"), Duration: 453 * time.Second, State: "FAILED", Line: 2},
			{ID: "771545", Tenant: "vcHvQ", User: "ufcLd", GPUs: 1, Submit: utc("2020-09-07 00:01:53"), Duration: 181 * time.Second, State: "CANCELLED", Line: 3},
			{ID: "771546", Tenant: "vcHvQ", User: "ufcLd", GPUs: 8, Submit: utc("2020-09-07 00:01:53"), Duration: 0, State: "COMPLETED", Line: 4},
		}},
		{"Philly merged rows may have an empty user", phillyFixture, Options{}, FormatPhilly, []Job{
			{ID: "pollux-31397", Tenant: "6214e9", GPUs: 1, Submit: utc("2017-10-01 00:00:45"), Duration: 30 * time.Second, State: "COMPLETED", Line: 2},
			{ID: "application_1506638472019_2058", Tenant: "11cb48", User: "066e99", GPUs: 2, Submit: utc("2017-10-01 00:01:55"), Duration: 61 * time.Second, State: "FAILED", Line: 3},
		}},
		{"Pollux rows are sorted by submit time then line, named by line", polluxFixture, Options{}, FormatPollux, []Job{
			{ID: "pollux-3", Tenant: "6214e9", GPUs: 2, Submit: utc("2017-10-09 06:13:03"), Duration: 2951500 * time.Millisecond, Line: 3},
			{ID: "pollux-4", Tenant: "6214e9", GPUs: 4, Submit: utc("2017-10-09 06:13:03"), Duration: 10 * time.Second, Line: 4},
			{ID: "pollux-2", Tenant: "11cb48", GPUs: 1, Submit: utc("2017-10-09 07:01:55"), Duration: 66 * time.Second, Line: 2},
		}},
		{"artifact submit times count seconds from Base", artifactFixture, Options{Base: base}, FormatArtifact, []Job{
			{ID: "0", Tenant: "11cb48", GPUs: 1, Submit: base.Add(115 * time.Second), Duration: 73 * time.Second, Line: 2},
			{ID: "1", Tenant: "11cb48", GPUs: 1, Submit: base.Add(715 * time.Second), Duration: 66 * time.Second, Line: 3},
			{ID: "2", Tenant: "ed69ec", GPUs: 8, Submit: base.Add(1290 * time.Second), Duration: 73528 * time.Second, Line: 4},
		}},
		{"generic rows accept RFC 3339, naive and numeric times, Go durations and weights", genericFixture, Options{}, FormatGeneric, []Job{
			{ID: "a1", Tenant: "team-a", GPUs: 8, Submit: utc("2024-03-01 08:00:00"), Duration: time.Hour, State: "COMPLETED", Line: 2},
			{ID: "b1", Tenant: "team-b", GPUs: 1, Submit: utc("2024-03-01 08:00:00"), Duration: 90 * time.Minute, State: "FAILED", Weight: 2, Line: 3},
			{ID: "a2", Tenant: "team-a", GPUs: 2, Submit: utc("2024-03-01 08:01:00"), Duration: 90500 * time.Millisecond, Weight: 0.5, Line: 4},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, r, err := read(t, tt.in, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if r.Format() != tt.format {
				t.Errorf("format %v, want %v", r.Format(), tt.format)
			}
			if len(jobs) != len(tt.want) {
				t.Fatalf("%d jobs, want %d: %+v", len(jobs), len(tt.want), jobs)
			}
			for i := range jobs {
				if !jobs[i].Submit.Equal(tt.want[i].Submit) {
					t.Errorf("job %d submit %v, want %v", i, jobs[i].Submit, tt.want[i].Submit)
				}
				jobs[i].Submit, tt.want[i].Submit = time.Time{}, time.Time{}
				if jobs[i] != tt.want[i] {
					t.Errorf("job %d:\n got %+v\nwant %+v", i, jobs[i], tt.want[i])
				}
			}
		})
	}
}

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestGzipIsTransparent(t *testing.T) {
	r, err := NewReader(bytes.NewReader(gz(venusFixture)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := ReadAll(r)
	if err != nil || len(jobs) != 3 || jobs[2].ID != "771546" {
		t.Fatalf("gzip: %d jobs, %v", len(jobs), err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := NewReader(bytes.NewReader([]byte{0x1f, 0x8b, 1, 2}), Options{}); err == nil {
		t.Fatal("a corrupt gzip header was accepted")
	}
}

func TestBadRows(t *testing.T) {
	const hdr = "job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration\n"
	const ok = "1,u,vc1,1,1,COMPLETED,2020-09-07 00:00:00,10\n"
	tests := []struct {
		name   string
		row    string
		err    error
		line   int
		column string
	}{
		{"a short row names the first missing column", "2,u,vc1,1,1,COMPLETED,2020-09-07 00:00:01\n", ErrMissingColumn, 3, "duration"},
		{"a non-numeric GPU count", "2,u,vc1,x,1,COMPLETED,2020-09-07 00:00:01,10\n", ErrNumber, 3, "gpu_num"},
		{"zero GPUs", "2,u,vc1,0,1,COMPLETED,2020-09-07 00:00:01,10\n", ErrGPUs, 3, "gpu_num"},
		{"negative GPUs", "2,u,vc1,-8,1,COMPLETED,2020-09-07 00:00:01,10\n", ErrGPUs, 3, "gpu_num"},
		{"fractional GPUs", "2,u,vc1,1.5,1,COMPLETED,2020-09-07 00:00:01,10\n", ErrNumber, 3, "gpu_num"},
		{"an unparsable time", "2,u,vc1,1,1,COMPLETED,2020-09-07 25:00:01,10\n", ErrTime, 3, "submit_time"},
		{"February 30th", "2,u,vc1,1,1,COMPLETED,2020-02-30 00:00:01,10\n", ErrTime, 3, "submit_time"},
		{"a negative duration", "2,u,vc1,1,1,COMPLETED,2020-09-07 00:00:01,-1\n", ErrDuration, 3, "duration"},
		{"a non-numeric duration", "2,u,vc1,1,1,COMPLETED,2020-09-07 00:00:01,1h\n", ErrNumber, 3, "duration"},
		{"a NaN duration", "2,u,vc1,1,1,COMPLETED,2020-09-07 00:00:01,NaN\n", ErrNumber, 3, "duration"},
		{"a duplicate id", "1,u,vc1,1,1,COMPLETED,2020-09-07 00:00:01,10\n", ErrDuplicateID, 3, "job_id"},
		{"an earlier submit time", "2,u,vc1,1,1,COMPLETED,2020-09-06 23:59:59,10\n", ErrOutOfOrder, 3, "submit_time"},
		{"an empty tenant", "2,u,,1,1,COMPLETED,2020-09-07 00:00:01,10\n", ErrEmptyField, 3, "vc"},
		{"a bare quote", "2,u\"x,vc1,1,1,COMPLETED,2020-09-07 00:00:01,10\n", ErrSyntax, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := hdr + ok + tt.row + "3,u,vc1,1,1,COMPLETED,2020-09-07 00:00:02,10\n"
			jobs, r, err := read(t, in, Options{Name: "venus.csv"})
			var re *RowError
			if !errors.Is(err, tt.err) || !errors.As(err, &re) {
				t.Fatalf("error %v, want a *RowError matching %v", err, tt.err)
			}
			if re.File != "venus.csv" || re.Line != tt.line || re.Column != tt.column {
				t.Errorf("error at %s:%d column %q, want venus.csv:%d column %q (%v)", re.File, re.Line, re.Column, tt.line, tt.column, err)
			}
			if len(jobs) != 1 {
				t.Errorf("%d jobs before the error, want 1", len(jobs))
			}
			if _, again := r.Next(); again != err {
				t.Errorf("the error is not sticky: %v", again)
			}
			// Lenient: the bad row is skipped, counted, and reading goes on.
			jobs, r, err = read(t, in, Options{Lenient: true})
			if err != nil || len(jobs) != 2 {
				t.Fatalf("lenient: %d jobs, %v", len(jobs), err)
			}
			sk := r.Skipped()
			if sk.Rows != 1 || sk.ByReason[reasonOf(tt.err)] != 1 || sk.First[reasonOf(tt.err)] == "" {
				t.Errorf("lenient report %+v", sk)
			}
		})
	}
}

func TestHeaderErrors(t *testing.T) {
	for name, in := range map[string]string{
		"empty input":           "",
		"unknown columns":       "a,b,c\n1,2,3\n",
		"a partial header":      "job_id,vc,gpu_num\n",
		"a quote in the header": "\"job_id,vc\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := NewReader(strings.NewReader(in), Options{}); err == nil {
				t.Fatal("accepted")
			} else if name != "a quote in the header" && !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v, want ErrFormat", err)
			}
		})
	}
	if _, err := NewReader(strings.NewReader(venusFixture), Options{Format: FormatGeneric}); !errors.Is(err, ErrFormat) {
		t.Fatalf("forcing the wrong format: %v", err)
	}
	if _, err := NewReader(strings.NewReader(venusFixture), Options{Format: Format(99)}); !errors.Is(err, ErrFormat) {
		t.Fatalf("an unknown format: %v", err)
	}
}

func TestSortOption(t *testing.T) {
	in := "job_id,user,num_gpu,submit_time,duration\n0,a,1,902,10\n1,b,4,688,20\n2,a,2,902,30\n"
	if _, _, err := read(t, in, Options{}); !errors.Is(err, ErrOutOfOrder) {
		t.Fatalf("unsorted input without Sort: %v", err)
	}
	jobs, _, err := read(t, in, Options{Sort: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := jobs[0].ID + jobs[1].ID + jobs[2].ID; got != "102" {
		t.Fatalf("sorted order %s, want 102 (stable on equal times)", got)
	}
	dup := in + "1,c,1,1000,5\n"
	if _, _, err := read(t, dup, Options{Sort: true}); !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("duplicate with Sort: %v", err)
	}
	jobs, r, err := read(t, dup, Options{Sort: true, Lenient: true})
	if err != nil || len(jobs) != 3 || r.Skipped().ByReason["duplicate job id"] != 1 {
		t.Fatalf("lenient duplicate with Sort: %d jobs, %v, %+v", len(jobs), err, r.Skipped())
	}
}

func TestNaiveTimesUseLocation(t *testing.T) {
	loc := time.FixedZone("UTC+8", 8*3600)
	jobs, _, err := read(t, venusFixture, Options{Location: loc})
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2020, 9, 7, 0, 0, 19, 0, loc); !jobs[0].Submit.Equal(want) {
		t.Fatalf("submit %v, want %v", jobs[0].Submit, want)
	}
}

// TestRFC3339Offsets: a generic trace's RFC 3339 times keep their offset,
// and an offset RFC 3339 does not allow (hours above 23, minutes above 59),
// which time.Parse would read as another offset, is a bad time.
func TestRFC3339Offsets(t *testing.T) {
	const hdr = "tenant,job,gpus,submit,duration\n"
	jobs, _, err := read(t, hdr+
		"a,j1,1,2024-03-01T00:00:00+23:59,60\n"+
		"a,j2,1,2024-03-01T08:00:00+05:30,60\n"+
		"a,j3,1,2024-03-01T08:00:00Z,60\n"+
		"a,j4,1,2024-03-01T08:00:00.5-08:00,60\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"2024-02-29 00:01:00", "2024-03-01 02:30:00", "2024-03-01 08:00:00", "2024-03-01 16:00:00"} {
		w := utc(want)
		if i == 3 {
			w = w.Add(500 * time.Millisecond)
		}
		if !jobs[i].Submit.Equal(w) {
			t.Errorf("job %s submitted %v, want %v", jobs[i].ID, jobs[i].Submit.UTC(), w)
		}
	}
	for _, off := range []string{"+24:00", "-24:00", "+24:60", "+00:60", "-23:60", "+99:99"} {
		_, _, err := read(t, hdr+"a,j1,1,2024-03-01T08:00:00"+off+",60\n", Options{Name: "g.csv"})
		var re *RowError
		if !errors.Is(err, ErrTime) || !errors.As(err, &re) || re.Line != 2 || re.Column != "submit" {
			t.Errorf("offset %s: error %v, want a bad time at g.csv:2, column submit", off, err)
		}
	}
}

func TestJobDefaults(t *testing.T) {
	var j Job
	if j.FinalState() != "COMPLETED" || j.EffectiveWeight() != 1 {
		t.Fatalf("zero Job: state %q, weight %v", j.FinalState(), j.EffectiveWeight())
	}
	j = Job{State: "FAILED", Weight: 3}
	if j.FinalState() != "FAILED" || j.EffectiveWeight() != 3 {
		t.Fatalf("explicit values not kept")
	}
	for f := FormatAuto; f <= FormatGeneric+1; f++ {
		if f.String() == "" {
			t.Errorf("format %d has no name", int(f))
		}
	}
}

func TestReadQuotas(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]float64
	}{
		{"official Venus sizes use the weight column", "vc,gpus_official_2020_09_07,weight,quota_gpus_800\nvc8Gr,48,0.044444,35.56\nvcEwI,72,0.066667,53.33\n",
			map[string]float64{"vc8Gr": 0.044444, "vcEwI": 0.066667}},
		{"derived tables use share", "vc,jobs,users,gpu_request_sum,gpu_seconds,share,quota_gpus_800\nvc8Gr,302,14,2656,60176754,0.019569,16\n",
			map[string]float64{"vc8Gr": 0.019569}},
		{"official sizes without a weight use the GPU column", "vc,gpus_official_2020_09_07\na,48\nb,16\n",
			map[string]float64{"a": 48, "b": 16}},
		{"artifact share files", "name,share\n6214e9,2690\n7f04ca,2568\n", map[string]float64{"6214e9": 2690, "7f04ca": 2568}},
		{"an unnamed tenant column with node counts", ",num\nvcEwI,9\nvcWoR,5\n", map[string]float64{"vcEwI": 9, "vcWoR": 5}},
		{"node counts with a space in the name", "vc,node num\n6214e9,64\n", map[string]float64{"6214e9": 64}},
		{"generic tenant and gpus", "tenant,gpus\nteam-a,16\nteam-b,1\n", map[string]float64{"team-a": 16, "team-b": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseQuotas(strings.NewReader(tt.in), "q.csv")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: %v, want %v", k, got[k], v)
				}
			}
		})
	}
	for name, in := range map[string]string{
		"no value column":     "vc,jobs2\na,1\n",
		"a duplicate tenant":  "vc,weight\na,1\na,2\n",
		"a negative weight":   "vc,weight\na,-1\n",
		"a non-number":        "vc,weight\na,x\n",
		"all zero":            "vc,weight\na,0\n",
		"one zero":            "vc,weight\na,1\nb,0\n",
		"a weight above 1e12": "vc,weight\na,1\nb,1e13\n",
		"a short row":         "vc,weight\na\n",
		"an empty tenant":     "vc,weight\n,1\n",
		"empty input":         "",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseQuotas(strings.NewReader(in), "q.csv"); !errors.Is(err, ErrQuota) {
				t.Fatalf("error %v, want ErrQuota", err)
			}
		})
	}
	if _, err := ParseQuotas(bytes.NewReader(gz("vc,weight\na,1\n")), "q.csv.gz"); err != nil {
		t.Fatalf("gzip quota table: %v", err)
	}
}

// TestQuotaErrorsNameFileAndLine: a weight the ledger would refuse, and a
// quota path that is a directory, are reported with the file (and line).
func TestQuotaErrorsNameFileAndLine(t *testing.T) {
	_, err := ParseQuotas(strings.NewReader("vc,weight\na,1\nb,0\n"), "q.csv")
	var re *RowError
	if !errors.Is(err, ErrQuota) || !errors.As(err, &re) || re.File != "q.csv" || re.Line != 3 {
		t.Fatalf("zero weight: %v, want a row error at q.csv:3", err)
	}
	dir := t.TempDir()
	if _, err := ReadQuotas(dir); !errors.Is(err, ErrQuota) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a directory: %v, want ErrQuota naming %s", err, dir)
	}
}

func TestRequestedAndEqualQuotas(t *testing.T) {
	r, _ := NewReader(strings.NewReader(venusFixture), Options{})
	got, err := RequestedQuotas(r)
	if err != nil || got["vcWoR"] != 4 || got["vcHvQ"] != 9 || len(got) != 2 {
		t.Fatalf("RequestedQuotas = %v, %v", got, err)
	}
	r, _ = NewReader(strings.NewReader(venusFixture), Options{})
	eq, err := EqualQuotas(r)
	if err != nil || eq["vcWoR"] != 1 || eq["vcHvQ"] != 1 || len(eq) != 2 {
		t.Fatalf("EqualQuotas = %v, %v", eq, err)
	}
	bad, _ := NewReader(strings.NewReader(venusFixture+"9,u,vc,0,1,X,2020-09-07 00:02:00,1\n"), Options{})
	if _, err := RequestedQuotas(bad); !errors.Is(err, ErrGPUs) {
		t.Fatalf("a bad row in RequestedQuotas: %v", err)
	}
	if q := SyntheticQuotas(); len(q) != 15 || q["vcJsw"] != 256 {
		t.Fatalf("SyntheticQuotas = %v", q)
	}
}

// TestRowsTheSimulatorCannotRepresent: a reader refuses the submit times
// and durations the ledger and the progress model cannot count, so that a
// lenient run skips them instead of failing half-way.
func TestRowsTheSimulatorCannotRepresent(t *testing.T) {
	const hdr = "tenant,job,gpus,submit,duration\n"
	tests := []struct {
		name string
		row  string
		err  error // nil: accepted
	}{
		{"a submission in 1600", "a,j,1,1600-01-01T00:00:00Z,10", ErrTime},
		{"a submission in 2263", "a,j,1,2263-01-01 00:00:00,10", ErrTime},
		{"a submission in 1679", "a,j,1,1679-01-01T00:00:00Z,10", nil},
		{"a submission in 2261", "a,j,1,2261-12-31 23:59:59,10", nil},
		{"a duration of 60 years in seconds", "a,j,1,0,1892160000", ErrLongDuration},
		{"a duration a nanosecond over the limit", "a,j,1,0,438000h0m0.000000001s", ErrLongDuration},
		{"a duration of 290 years as a Go duration", "a,j,1,0,2540400h", ErrLongDuration},
		{"a duration of exactly the limit", "a,j,1,0,438000h", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, _, err := read(t, hdr+tt.row+"\n", Options{Name: "r.csv"})
			if tt.err == nil {
				if err != nil || len(jobs) != 1 {
					t.Fatalf("%d jobs, %v", len(jobs), err)
				}
				return
			}
			var re *RowError
			if !errors.Is(err, tt.err) || !errors.As(err, &re) || re.Line != 2 {
				t.Fatalf("%v, want %v on line 2", err, tt.err)
			}
			jobs, r, err := read(t, hdr+tt.row+"\n", Options{Lenient: true})
			if err != nil || len(jobs) != 0 || r.Skipped().ByReason[tt.err.Error()] != 1 {
				t.Fatalf("lenient: %d jobs, %+v, %v", len(jobs), r.Skipped(), err)
			}
		})
	}
}

// TestWeightsTheLedgerRefusesAreBadRows: a job weight outside the ledger's
// range is a bad row, not a failed run.
func TestWeightsTheLedgerRefusesAreBadRows(t *testing.T) {
	for _, w := range []string{"5e-324", "1e-300", "1e13", "1e308", "0", "NaN"} {
		_, _, err := read(t, "tenant,job,gpus,submit,duration,weight\na,j,1,0,10,"+w+"\n", Options{})
		if !errors.Is(err, ErrWeight) {
			t.Errorf("weight %s: %v, want ErrWeight", w, err)
		}
	}
}

// TestParseNaive: the readers' hot path parses a wall-clock time in the
// given location and refuses, rather than normalises, a day its month does
// not have. Its fallbacks (RFC 3339, seconds) would read some of these
// too, in UTC, so the function is tested on its own.
func TestParseNaive(t *testing.T) {
	loc := time.FixedZone("UTC+8", 8*3600)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2020-09-07 00:00:19", time.Date(2020, 9, 7, 0, 0, 19, 0, loc)},
		{"2020-02-29 23:59:59", time.Date(2020, 2, 29, 23, 59, 59, 0, loc)},
		{"2021-12-31T12:30:00", time.Date(2021, 12, 31, 12, 30, 0, 0, loc)},
		{"2000-02-29 00:00:00", time.Date(2000, 2, 29, 0, 0, 0, 0, loc)},
		{"2020-04-30 01:02:03", time.Date(2020, 4, 30, 1, 2, 3, 0, loc)},
	} {
		got, err := parseNaive(tc.in, loc)
		if err != nil || !got.Equal(tc.want) || got.Location() != loc {
			t.Errorf("parseNaive(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{
		"2021-02-29 00:00:00", "1900-02-29 00:00:00", "2020-04-31 00:00:00", "2020-13-01 00:00:00",
		"2020-00-10 00:00:00", "2020-01-00 00:00:00", "2020-01-01 24:00:00", "2020-01-01 00:60:00",
		"2020-01-01 00:00:60", "2020-01-01 00:00", "2020/01/01 00:00:00", "2020-01-0a 00:00:00",
	} {
		if got, err := parseNaive(in, loc); !errors.Is(err, ErrTime) {
			t.Errorf("parseNaive(%q) = %v, %v; want ErrTime", in, got, err)
		}
	}
}
