package tools

import (
	"encoding/json"
	"sort"
)

// The tools' names. Each is written here only: the table, the
// descriptions and the messages that point the model to another tool all
// use these constants.
const (
	nameListFiles  = "list_files"
	nameReadFile   = "read_file"
	nameSearch     = "search"
	nameWriteFile  = "write_file"
	nameEditFile   = "edit_file"
	nameDeleteFile = "delete_file"
)

// Definition describes a tool to the model.
type Definition struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the tool's input object.
	Schema json.RawMessage
}

// tool is one tool: what the model is told about it and what runs a call.
type tool struct {
	Definition
	// run decodes the call's input and does the work. Its error is non-nil
	// only for ErrChangeLimit, as Call documents.
	run func(w *Workspace, input json.RawMessage) (Result, error)
}

// table holds every tool, once. Call dispatches through it, Definitions
// reads it, and an unknown name is answered with its names in this order.
var table = []tool{
	{
		Definition: Definition{
			Name: nameListFiles,
			Description: "List the files under a folder of the repository, recursively, one path per line relative to the repository root. " +
				"The .git folder is never listed. Symbolic links are listed with a mark; no tool follows them.",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"Folder relative to the repository root; empty for the whole repository."},` +
				`"glob":{"type":"string","description":"Optional filter. Without a slash it matches file names (*.md, *.{md,mdx}); with one it matches paths below the folder, where ** spans folders (api/**/*.mdx)."}` +
				`},"additionalProperties":false}`),
		},
		run: runWith(func(w *Workspace, a struct{ Path, Glob string }) (Result, error) {
			return w.list(a.Path, a.Glob), nil
		}),
	},
	{
		Definition: Definition{
			Name:        nameReadFile,
			Description: "Read a text file of the repository, whole or a range of lines. Read a file before editing it.",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"File path relative to the repository root."},` +
				`"start_line":{"type":"integer","minimum":1,"description":"Optional first line to return, counting from 1."},` +
				`"end_line":{"type":"integer","minimum":1,"description":"Optional last line to return, inclusive."}` +
				`},"required":["path"],"additionalProperties":false}`),
		},
		run: runWith(func(w *Workspace, a struct {
			Path      string
			StartLine int `json:"start_line"`
			EndLine   int `json:"end_line"`
		}) (Result, error) {
			return w.read(a.Path, a.StartLine, a.EndLine), nil
		}),
	},
	{
		Definition: Definition{
			Name: nameSearch,
			Description: "Search the text files of the repository line by line. Answers path:line: text for each matching line. " +
				"The pattern is a plain substring unless regexp is true (RE2 syntax).",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"pattern":{"type":"string","description":"Text to find, or an RE2 regular expression when regexp is true."},` +
				`"regexp":{"type":"boolean","description":"Treat pattern as an RE2 regular expression."},` +
				`"ignore_case":{"type":"boolean","description":"Match regardless of letter case."},` +
				`"path":{"type":"string","description":"Optional folder or file to search in, relative to the repository root."},` +
				`"glob":{"type":"string","description":"Optional file filter, as for ` + nameListFiles + `."}` +
				`},"required":["pattern"],"additionalProperties":false}`),
		},
		run: runWith(func(w *Workspace, a struct {
			Pattern    string
			Regexp     bool
			IgnoreCase bool `json:"ignore_case"`
			Path, Glob string
		}) (Result, error) {
			return w.search(a.Pattern, a.Regexp, a.IgnoreCase, a.Path, a.Glob), nil
		}),
	},
	{
		Definition: Definition{
			Name:        nameWriteFile,
			Description: "Create a file, or replace a file's whole content. Folders are created as needed. Prefer " + nameEditFile + " for changes to an existing file.",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"File path relative to the repository root."},` +
				`"content":{"type":"string","description":"The complete new content of the file."}` +
				`},"required":["path","content"],"additionalProperties":false}`),
		},
		run: runWith(func(w *Workspace, a struct {
			Path    string
			Content *string
		}) (Result, error) {
			if a.Content == nil {
				return failure("content is required (it may be empty)"), nil
			}
			return w.write(a.Path, *a.Content)
		}),
	},
	{
		Definition: Definition{
			Name: nameEditFile,
			Description: "Replace one exact piece of text in a file. old_string must occur exactly once in the file, " +
				"white space included; add surrounding lines to make it unique.",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"File path relative to the repository root."},` +
				`"old_string":{"type":"string","description":"The exact text to replace; it must occur exactly once."},` +
				`"new_string":{"type":"string","description":"The text to put in its place."}` +
				`},"required":["path","old_string","new_string"],"additionalProperties":false}`),
		},
		run: runWith(func(w *Workspace, a struct {
			Path      string
			OldString string `json:"old_string"`
			NewString string `json:"new_string"`
		}) (Result, error) {
			return w.edit(a.Path, a.OldString, a.NewString)
		}),
	},
	{
		Definition: Definition{
			Name:        nameDeleteFile,
			Description: "Delete a file of the repository. Only when the instruction calls for removing it.",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"File path relative to the repository root."}` +
				`},"required":["path"],"additionalProperties":false}`),
		},
		run: runWith(func(w *Workspace, a struct{ Path string }) (Result, error) {
			return w.delete(a.Path)
		}),
	},
}

// runWith makes a tool's run function from the arguments it takes, A, and
// what it does with them. The arguments are decoded leniently (see decode);
// input the model cannot have meant is answered as a failed call.
func runWith[A any](do func(w *Workspace, a A) (Result, error)) func(*Workspace, json.RawMessage) (Result, error) {
	return func(w *Workspace, input json.RawMessage) (Result, error) {
		var a A
		if r, ok := decode(input, &a); !ok {
			return r, nil
		}
		return do(w, a)
	}
}

// Definitions returns the tools, sorted by name so that requests are the
// same from run to run (which also keeps provider-side prompt caches warm).
func Definitions() []Definition {
	out := make([]Definition, 0, len(table))
	for _, t := range table {
		out = append(out, t.Definition)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
