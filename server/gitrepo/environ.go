package gitrepo

import (
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// environ is git's whole environment for one command, built from nothing:
// the server's own environment (which holds its secrets) never reaches
// git.
//
// Credentials travel as an extra header rather than through GIT_ASKPASS:
// the header needs no helper program on disk, git adds it only to requests
// for the URL it is scoped to (http.<url>.extraHeader matches scheme, host,
// port and path prefix), so a URL rewritten or redirected elsewhere does
// not receive it, and it never involves git's credential helpers, one of
// which ("store") would write the secret to a file. Through the
// environment rather than -c: command lines are visible to every user in
// ps; a process's environment only to its own user. They are given only to
// http and https remotes: git passes the GIT_CONFIG_VALUE_n variables on
// to the processes it starts, and for a local or file:// remote those
// include the remote repository's hooks.
func (r *Repositories) environ(spec cmdSpec) []string {
	env := []string{
		"PATH=" + r.path,
		// ssh asks for passwords and unknown host keys on the terminal,
		// bypassing GIT_TERMINAL_PROMPT; a server must fail instead. Set,
		// it also outranks core.sshCommand, a command any config could name.
		"GIT_SSH_COMMAND=ssh -o BatchMode=yes",
		// core.gitProxy names a command that carries git:// connections,
		// and git takes the first config file's, not the last; this
		// variable outranks them all, and empty means a direct connection.
		"GIT_PROXY_COMMAND=",
	}
	env = append(env, r.cfg.Env...) // may replace the ones above
	env = append(env,
		// The server user's ~/.gitconfig, the system gitconfig and
		// their credential helpers would change what git does and might
		// hand it other secrets: an empty home, and neither file read.
		"HOME="+spec.home,
		"XDG_CONFIG_HOME="+spec.home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		// Nor the host's gitattributes. Attributes cannot run anything
		// themselves: a filter, diff or merge attribute only names a
		// driver, and drivers are defined in configuration, which here
		// is the workspace's own config alone; the tree's .gitattributes
		// (the agent's) can name no driver that exists. Left out, the
		// host's file would still change what add stages (eol, text).
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		// The "ext" and "fd" transports run commands named in the URL.
		"GIT_ALLOW_PROTOCOL=file:git:http:https:ssh",
		// Git's messages in English: isPermanent reads them.
		"LC_ALL=C",
		"GIT_AUTHOR_NAME="+r.cfg.AuthorName,
		"GIT_AUTHOR_EMAIL="+r.cfg.AuthorEmail,
		"GIT_COMMITTER_NAME="+r.cfg.AuthorName,
		"GIT_COMMITTER_EMAIL="+r.cfg.AuthorEmail,
	)
	if spec.gitDir != "" {
		// Named outright, git looks for no .git anywhere: not in the
		// working tree, which is the agent's, nor above it. A mirror is
		// bare: it has no working tree.
		env = append(env, "GIT_DIR="+spec.gitDir)
		if spec.workTree != "" {
			env = append(env, "GIT_WORK_TREE="+spec.workTree)
		}
	} else {
		// No repository: git must not find one in a folder above the
		// one it runs in (the workspace's, or Config.Dir's parents) and
		// read its configuration.
		env = append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(spec.dir))
	}
	config := r.forcedConfig(spec)
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(config)))
	for i, kv := range config {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	return env
}

// forcedConfig is configuration given through GIT_CONFIG_COUNT, which
// outranks every config file, the repository's included. The only config
// file git reads is the workspace's git directory's: out of the agent's
// reach, and rewritten as Open left it before Publish runs git (see
// Publish). These settings are the second line: each one a config file
// could use to make add, commit, diff-index, rev-parse, merge-base, push,
// fetch, ls-remote or clone run a program or send data elsewhere is pinned
// to its harmless value.
//
// What cannot be pinned this way is what git does not take from the last
// config it reads: url.<base>.insteadOf and pushInsteadOf (the longest
// match wins, the first among equals); the sections of a remote named by
// the URL itself, which git push <url> and git fetch <url> read, with
// their url and pushurl (accumulated) and uploadpack and receivepack
// (programs, run locally for a local remote; the first wins); and filter
// drivers (a tree's .gitattributes names them; see environ). For those
// the config file being ours is the whole defence.
func (r *Repositories) forcedConfig(spec cmdSpec) [][2]string {
	config := [][2]string{
		// Hooks are the repository's code; none runs on the server's
		// commits and pushes (commit --no-verify skips only some).
		{"core.hooksPath", os.DevNull},
		// A file system monitor is a program that add and diff run.
		{"core.fsmonitor", "false"},
		// Credential helpers are programs; an empty value empties the
		// list of those configured before. Credentials come from
		// Config.Credentials alone.
		{"credential.helper", ""},
		// The program git asks for a password. GIT_ASKPASS, should
		// Config.Env set it, still wins, as it does over core.askPass.
		{"core.askPass", ""},
		// Signing runs gpg.program.
		{"commit.gpgSign", "false"},
		{"push.gpgSign", "false"},
		// Recursing into submodules runs git in their repositories, with
		// their configurations; the tree check refuses them anyway.
		{"submodule.recurse", "false"},
		{"push.recurseSubmodules", "no"},
		{"fetch.recurseSubmodules", "false"},
		// commit starts automatic maintenance, which may detach a gc
		// that outlives the command and races Close.
		{"maintenance.auto", "false"},
		{"gc.auto", "0"},
	}
	if isHTTPURL(spec.url) {
		// A proxy receives the push and the Authorization header (over
		// http in clear; over https it could still withhold or replay
		// the push). Scoped to the exact URL, the pin outranks any
		// http.<url>.proxy a config could hold for it; remote.<url>.proxy
		// outranks http.proxy inside git, so it is pinned too. The value
		// is the proxy Config.Env gives, as git would choose it.
		proxy := r.proxyFor(spec.url)
		config = append(config,
			[2]string{"http." + spec.url + ".proxy", proxy},
			[2]string{"remote." + spec.url + ".proxy", proxy},
			// GIT_SSL_NO_VERIFY, should Config.Env set it, still wins.
			[2]string{"http." + spec.url + ".sslVerify", "true"},
		)
	}
	if spec.cred != nil {
		config = append(config, [2]string{"http." + spec.cred.url + ".extraHeader", spec.cred.header()})
	}
	return config
}

// proxyFor is the proxy git would take from Config.Env for repo when no
// configuration names one, in git's order (http.c): https_proxy, then
// HTTPS_PROXY, for https; http_proxy for http; then all_proxy, then
// ALL_PROXY. Set but empty counts, as in git. "" means none: git then
// connects directly.
func (r *Repositories) proxyFor(repo string) string {
	vars := map[string]string{}
	for _, kv := range r.cfg.Env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v // a later entry wins, as in the environment
	}
	names := []string{"http_proxy"}
	if u, err := url.Parse(repo); err == nil && u.Scheme == "https" {
		names = []string{"https_proxy", "HTTPS_PROXY"}
	}
	for _, n := range append(names, "all_proxy", "ALL_PROXY") {
		if v, ok := vars[n]; ok {
			return v
		}
	}
	return ""
}
