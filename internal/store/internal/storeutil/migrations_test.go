package storeutil

import (
	"testing"
	"testing/fstest"
)

func TestLoadMigrationsOrdersByNumber(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0010_later.sql": {Data: []byte("B")},
		"m/0002_first.sql": {Data: []byte("A")},
		"m/README.md":      {Data: []byte("ignored")},
	}
	got, err := LoadMigrations(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Version != 2 || got[0].SQL != "A" || got[1].Version != 10 || got[1].Name != "0010_later.sql" {
		t.Fatalf("LoadMigrations = %+v", got)
	}
}

func TestLoadMigrationsRejectsBadNames(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"duplicate version": {"m/1_a.sql": {}, "m/0001_b.sql": {}},
		"no number":         {"m/init.sql": {}},
		"zero":              {"m/0000_zero.sql": {}},
		"no separator":      {"m/0001.sql": {}},
	} {
		if _, err := LoadMigrations(fsys, "m"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
