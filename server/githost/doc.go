// Package githost is the home of the job engine's pull-request hosts: the
// implementations of engine.PullRequests that a server hands to its jobs
// through engine.Parts. Each lives in its own sub-package, so that a server
// compiles only the host library it uses:
//
//   - github: pull requests on GitHub.com and GitHub Enterprise Server
//     (go-github).
//   - gitlab: merge requests on GitLab.com and self-managed GitLab
//     (GitLab's client-go).
//   - pushonly: no pull request at all, for plain git remotes; the job ends
//     with its branch pushed and a null prLink.
//
// All of them keep the engine's promise of one pull request per job, whatever
// crashes and retries happen: a job's branch name is fixed, and Ensure looks
// for an open pull request from that branch before it opens one, and takes
// the existing one when another run wins the race to open it. They keep no
// state of their own, so any number of engines may share a repository.
// That sequence, and the rules below, are written once in internal/hostkit;
// each host package holds only the calls to its API, and
// internal/hostkit/hosttest is the suite both hosts pass.
//
// The GitHub and GitLab hosts share these rules:
//
//   - The token comes from the caller, as a string or as a function called
//     before every request (for tokens that expire); nothing is read from
//     the environment. It is sent only to the API's own scheme and host,
//     never after a redirect elsewhere, and never appears in an error, a log
//     record or a printed configuration.
//   - Errors a retry cannot mend (a malformed repository URL, bad
//     credentials, no access, no such repository, a refused request) are
//     marked with engine.Permanent, so the job fails at once with a reason.
//     Server errors, rate limits and network failures are left transient:
//     the engine tries the job again later. The libraries' own retries are
//     off, so a failing host costs a run one request, not a burst of them.
//   - A job's base ref "" means the repository's default branch, asked of
//     the host; "refs/heads/x" means the branch x.
//   - The repository's clone URL must be on the configured host (HTTPS or
//     SSH, including the scp-like "git@host:path" form), so that a project
//     pointed at the wrong host fails clearly instead of opening a pull
//     request somewhere else.
package githost
