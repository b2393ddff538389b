package main

import (
	"bytes"
	"go/parser"
	"go/printer"
	"go/token"
	"strings"
	"testing"
)

const src = `package p

const limit = 3

func f(a, b int) (int, error) {
	if a < 0 {
		return 0, errNeg
	}
	for i := 0; i < b && a != 2; i++ {
		a = a*2 + 1
	}
	return a, nil
}
`

func TestSitesMutateOnePointAndUndo(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	ms := sites(fset, f, "p.go")
	var got []string
	for _, m := range ms {
		m.apply()
		var b bytes.Buffer
		if err := printer.Fprint(&b, fset, f); err != nil {
			t.Fatal(err)
		}
		m.undo()
		if b.String() == src {
			t.Errorf("%v: changes nothing", m)
		}
		got = append(got, m.op+" "+m.desc)
	}
	var after bytes.Buffer
	printer.Fprint(&after, fset, f)
	if after.String() != src {
		t.Errorf("undo left the file changed:\n%s", after.String())
	}
	want := []string{
		"guard drop guard a < 0",
		"negate negate a < 0",
		"cmp < → <=",
		"const 0 → 1",
		"const 0 → 1",
		"negate negate i < b && a != 2",
		"const 0 → 1",
		"logic && → ||",
		"cmp < → <=",
		"cmp != → ==",
		"const 2 → 0",
		"incdec ++ → --",
		"arith + → -",
		"arith * → /",
		"const 2 → 0",
		"const 1 → 0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sites:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
