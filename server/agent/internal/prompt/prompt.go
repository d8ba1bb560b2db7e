// Package prompt turns a job's prompt history into the one text an agent is
// given. Both agents use it, so a command-line agent and the LLM loop read
// the same words for the same job.
package prompt

import (
	"fmt"
	"strings"
)

// Format returns the text for an agent from prompts, oldest first.
//
// A job with one prompt gets that prompt unchanged (trimmed of surrounding
// white space), so a CLI agent sees exactly what the caller wrote. A job
// with follow-ups gets the earlier prompts as numbered context and the
// newest one last, marked as the instruction to carry out now:
//
//	Earlier instructions of this job, oldest first. They were given before
//	and their changes, if any, are already in the files; they are context
//	only:
//
//	[Instruction 1]
//	<first prompt>
//
//	[Instruction 2]
//	<second prompt>
//
//	Carry out this new instruction now:
//
//	<newest prompt>
//
// The earlier prompts come first because models weigh the end of a message
// most, and the newest instruction is the one that must be acted on.
func Format(prompts []string) string {
	if len(prompts) == 0 {
		return ""
	}
	newest := strings.TrimSpace(prompts[len(prompts)-1])
	if len(prompts) == 1 {
		return newest
	}
	var b strings.Builder
	b.WriteString(historyHeader)
	for i, p := range prompts[:len(prompts)-1] {
		fmt.Fprintf(&b, "[Instruction %d]\n%s\n\n", i+1, strings.TrimSpace(p))
	}
	b.WriteString(newestHeader)
	b.WriteString(newest)
	return b.String()
}

const (
	historyHeader = "Earlier instructions of this job, oldest first. They were given before\n" +
		"and their changes, if any, are already in the files; they are context\n" +
		"only:\n\n"
	newestHeader = "Carry out this new instruction now:\n\n"
)
