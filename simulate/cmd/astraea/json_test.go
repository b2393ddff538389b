package main

import (
	"encoding/json"
	"regexp"
	"testing"
)

// snakeCase is the one key style of the -json document.
var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// dataMaps are the objects whose keys are data (tenant names, job states,
// reasons), not field names; their values are still checked.
var dataMaps = map[string]bool{
	"quotas": true, "tenant_rho": true, "states": true, "excluded": true,
	"by_reason": true, "first": true,
}

// checkKeys reports every field name in v, at any depth, that is not
// snake_case, and returns how many field names it saw.
func checkKeys(t *testing.T, path string, v any, data bool) int {
	t.Helper()
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !data {
				n++
				if !snakeCase.MatchString(k) {
					t.Errorf("key %s.%s is not snake_case", path, k)
				}
			}
			n += checkKeys(t, path+"."+k, x, !data && dataMaps[k])
		}
	case []any:
		for _, x := range v {
			n += checkKeys(t, path+"[]", x, false)
		}
	}
	return n
}

func TestJSONKeysAreSnakeCaseAndVersioned(t *testing.T) {
	// Two nodes of 8 GPUs leave the synthetic workload's largest jobs out,
	// so that the excluded list is in the document too.
	out := runArgs(t, "-json", "-jobs", "300", "-nodes", "2", "-policy", "astraea,fifo")
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if v, ok := doc["schema_version"].(float64); !ok || v != schemaVersion {
		t.Errorf("schema_version = %v, want %d", doc["schema_version"], schemaVersion)
	}
	for _, k := range []string{"excluded", "runs"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("the document has no %q", k)
		}
	}
	runs, _ := doc["runs"].([]any)
	for _, r := range runs {
		if _, ok := r.(map[string]any)["stats"]; !ok {
			t.Errorf("a run has no stats: %v", r)
		}
	}
	if n := checkKeys(t, "", doc, false); n < 50 {
		t.Errorf("saw only %d field names; the walk missed part of the document", n)
	}
}
