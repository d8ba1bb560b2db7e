package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/definitions.json from Definitions()")

// TestDefinitionsGolden holds Definitions() to the bytes the providers were
// sent so far: names, descriptions and each schema exactly as written (the
// schema as a string, so that not even its spacing can change unnoticed).
// Run with -update after a deliberate change, and review the diff.
func TestDefinitionsGolden(t *testing.T) {
	type definition struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Schema      string `json:"schema"`
	}
	var defs []definition
	for _, d := range Definitions() {
		defs = append(defs, definition{d.Name, d.Description, string(d.Schema)})
	}
	var got bytes.Buffer
	enc := json.NewEncoder(&got)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(defs); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "definitions.json")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("Definitions() changed; got:\n%s\nwant (%s):\n%s", got.Bytes(), golden, want)
	}
}

// An unknown tool is answered with the names of all of them, in the order
// they are declared.
func TestUnknownToolNamesEveryTool(t *testing.T) {
	f := newFixture(t, testLimits)
	r, err := f.ws.Call("run_shell", json.RawMessage(`{}`))
	want := `unknown tool "run_shell"; the tools are list_files, read_file, search, write_file, edit_file, delete_file`
	if err != nil || !r.IsError || r.Text != want {
		t.Fatalf("Call(run_shell) = %+v, %v; want the error %q", r, err, want)
	}
}
