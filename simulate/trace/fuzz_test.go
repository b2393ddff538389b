package trace

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// checkStream reads all of in, strictly and leniently, and checks the
// guarantees every reader gives whatever the input: no panic; jobs in
// non-decreasing submit order with unique ids, a tenant, GPUs ≥ 1 and
// duration ≥ 0; strict errors are *RowError (or header errors); lenient
// reading never fails on a row and accounts for every skipped row.
func checkStream(t *testing.T, in string, opts Options) {
	t.Helper()
	for _, lenient := range []bool{false, true} {
		opts.Lenient = lenient
		r, err := NewReader(strings.NewReader(in), opts)
		if err != nil {
			if r != nil {
				t.Fatal("a reader returned with an error")
			}
			return
		}
		seen := map[string]bool{}
		n := 0
		var prev Job
		for {
			j, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var re *RowError
				if !errors.As(err, &re) {
					t.Fatalf("a non-row error from Next: %v", err)
				}
				if lenient {
					t.Fatalf("lenient reading failed on a row: %v", err)
				}
				if re.Line < 1 || re.File == "" || reasonOf(err) == "other" {
					t.Fatalf("row error without a place or reason: %#v", re)
				}
				break
			}
			if j.GPUs < 1 || j.Duration < 0 || j.Tenant == "" || j.ID == "" || seen[j.ID] {
				t.Fatalf("bad job returned: %+v", j)
			}
			if n > 0 && j.Submit.Before(prev.Submit) {
				t.Fatalf("job %s at %v before %s at %v", j.ID, j.Submit, prev.ID, prev.Submit)
			}
			if j.Weight < 0 {
				t.Fatalf("negative weight: %+v", j)
			}
			seen[j.ID] = true
			prev = j
			n++
		}
		sk := r.Skipped()
		total := 0
		for _, c := range sk.ByReason {
			total += c
		}
		if total != sk.Rows || (!lenient && sk.Rows != 0) {
			t.Fatalf("skip report does not add up: %+v", sk)
		}
		// A record is one line: in lenient mode every line after the
		// header is either a job or a skipped row, so a stray quote cannot
		// take the lines after it along.
		if rows := nonEmptyLines(in) - 1; lenient && n+sk.Rows != rows {
			t.Fatalf("%d jobs and %d skipped rows from %d rows", n, sk.Rows, rows)
		}
	}
}

// nonEmptyLines counts the lines of in that hold more than a line ending.
func nonEmptyLines(in string) int {
	n := 0
	for l := range strings.SplitSeq(in, "\n") {
		if strings.TrimSuffix(l, "\r") != "" {
			n++
		}
	}
	return n
}

func fuzzFormat(f *testing.F, header string, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkStream(t, header+body, Options{Name: "fuzz.csv"})
	})
}

func FuzzVenusCSV(f *testing.F) {
	fuzzFormat(f, "job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration\n",
		strings.SplitN(venusFixture, "\n", 2)[1],
		"1,u,vc,1,1,COMPLETED,2020-09-07 00:00:00,10\n1,u,vc,1,1,COMPLETED,2020-09-07 00:00:00,10\n",
		"1,u,vc,0,1,COMPLETED,2020-09-07 00:00:00,10\n",
		"2,u,vc,1,1,COMPLETED,2020-09-07 00:00:01,10\n1,u,vc,1,1,COMPLETED,2020-09-07 00:00:00,10\n",
		"1,u,vc,1,1,,2020-13-07 00:00:00,-5\n\"x\n",
		"1,u,vc,1\n",
		"\"x,u,vc,1,1,COMPLETED,2020-09-07 00:00:00,10\n1,u,vc,1,1,COMPLETED,2020-09-07 00:00:00,10\n2,u,vc,1,1,COMPLETED,2020-09-07 00:00:00,10\n")
}

func FuzzPhillyCSV(f *testing.F) {
	fuzzFormat(f, "job_id,user,vc,gpu_num,state,submit_time,duration,source\n",
		strings.SplitN(phillyFixture, "\n", 2)[1],
		"a,,v,32,FAILED,2017-10-10 00:00:00,4179627,helios\n",
		"a,,v,1e3,FAILED,2017-10-10 00:00:00,1.5,helios\n")
}

func FuzzPolluxCSV(f *testing.F) {
	fuzzFormat(f, "timestamp,duration,num_gpus,gpu_time,cluster\n",
		strings.SplitN(polluxFixture, "\n", 2)[1],
		"2017-10-09 07:01:55,NaN,1,66.0,c\n2017-10-09 07:01:55,1e400,1,66.0,c\n",
		"2017-10-09 07:01:55,66,1,66.0,\n")
}

func FuzzArtifactCSV(f *testing.F) {
	fuzzFormat(f, "job_id,user,num_gpu,submit_time,duration\n",
		strings.SplitN(artifactFixture, "\n", 2)[1],
		"0,a,1,9223372036854775807,1\n1,a,1,-1,1\n",
		"0,a,1,1.5,1\n0,a,1,2,1\n")
}

func FuzzGenericCSV(f *testing.F) {
	fuzzFormat(f, "tenant,job,gpus,submit,duration,state,weight\n",
		strings.SplitN(genericFixture, "\n", 2)[1],
		"t,j,1,2024-03-01T08:00:00+08:00,-1h,,\n",
		"t,j,1,2024-03-01T08:00:00Z,1h,,0\nt,k,1,2024-03-01T08:00:00Z,1h,,Inf\n",
		"t,j,1,1e300,1,,1\n")
}

// FuzzOpen feeds whole inputs, header included, to format detection.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{venusFixture, phillyFixture, polluxFixture, artifactFixture, genericFixture, "", "\ufeffa,b\n", "tenant,job,gpus,submit,duration\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkStream(t, in, Options{})
		checkStream(t, in, Options{Sort: true})
	})
}

func FuzzQuotas(f *testing.F) {
	for _, s := range []string{"vc,weight\na,1\nb,2\n", ",num\nvcEwI,9\n", "name,share\nx,0.1\n", "vc,node num\na,-1\n", "vc,weight\na,1\na,1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		q, err := ParseQuotas(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			if !errors.Is(err, ErrQuota) {
				t.Fatalf("error %v does not match ErrQuota", err)
			}
			return
		}
		total := 0.0
		for k, v := range q {
			if k == "" || v < 0 || v != v {
				t.Fatalf("bad quota %q = %v", k, v)
			}
			total += v
		}
		if !(total > 0) {
			t.Fatalf("quotas without a positive weight accepted: %v", q)
		}
	})
}
