package prompt

import "testing"

func TestFormat(t *testing.T) {
	tests := []struct {
		name    string
		prompts []string
		want    string
	}{
		{"none", nil, ""},
		{"one prompt is passed unchanged", []string{"  Document the v2 API.\n"}, "Document the v2 API."},
		{
			"follow-ups put the history first and the newest last",
			[]string{"Document the v2 API.", "Also add an example.\n", " Fix the title. "},
			"Earlier instructions of this job, oldest first. They were given before\n" +
				"and their changes, if any, are already in the files; they are context\n" +
				"only:\n\n" +
				"[Instruction 1]\nDocument the v2 API.\n\n" +
				"[Instruction 2]\nAlso add an example.\n\n" +
				"Carry out this new instruction now:\n\n" +
				"Fix the title.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Format(tt.prompts); got != tt.want {
				t.Errorf("Format() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
