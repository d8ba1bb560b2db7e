// Package procgroup starts a child in a process group of its own, killed
// with the server, and kills the whole group in one step. The command agent
// uses it for an unsandboxed program, the sandbox for bubblewrap: coding
// agents run shells, test runners and language servers that would
// otherwise outlive a timeout or the server itself.
package procgroup
