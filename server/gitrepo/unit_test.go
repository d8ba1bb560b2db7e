package gitrepo

import (
	"strings"
	"testing"
)

func TestIsPermanent(t *testing.T) {
	t.Parallel()
	for stderr, want := range map[string]bool{
		"fatal: Authentication failed for 'https://git.example/o/r.git/'":                                   true,
		"fatal: could not read Username for 'https://git.example': terminal prompts disabled":               true,
		"fatal: unable to access 'https://git.example/o/r.git/': The requested URL returned error: 403":     true,
		"remote: Repository not found.; fatal: repository 'https://git.example/o/r.git/' not found":         true,
		"fatal: '/srv/gone.git' does not appear to be a git repository":                                     true,
		"fatal: Remote branch nope not found in upstream origin":                                            true,
		"fatal: couldn't find remote ref refs/heads/nope":                                                   true,
		"! [remote rejected] b -> b (pre-receive hook declined)":                                            true,
		"! [remote rejected] main -> main (protected branch hook declined)":                                 true,
		"remote: GitLab: You are not allowed to push code to protected branches on this project.":           true,
		"git@git.example: Permission denied (publickey).; fatal: Could not read from remote repository.":    true,
		"fatal: unable to access 'https://git.example/o/r.git/': Could not resolve host: git.example":       false,
		"fatal: unable to access 'https://git.example/o/r.git/': Failed to connect to git.example port 443": false,
		"fatal: unable to access 'https://git.example/o/r.git/': The requested URL returned error: 502":     false,
		"ssh: connect to host git.example port 22: Connection refused; fatal: Could not read from remote":   false,
		"! [rejected] b -> b (fetch first); error: failed to push some refs":                                false,
		"error: RPC failed; curl 92 HTTP/2 stream 0 was not closed cleanly":                                 false,
	} {
		if got := isPermanent(stderr); got != want {
			t.Errorf("isPermanent(%q) = %v, want %v", stderr, got, want)
		}
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	cred := &credential{url: "https://git.example/o/r.git", username: "x-access-token", password: "tok-abc"}
	in := "remote: you sent Authorization: Basic " + strings.TrimPrefix(cred.header(), "Authorization: Basic ") +
		"\nremote: token tok-abc\nfatal: unable to access 'https://user:pw@git.example/o/r.git/'\n" +
		"header: authorization: bearer other-token; done"
	got := scrub(in, cred.secrets())
	for _, leak := range []string{"tok-abc", strings.TrimPrefix(cred.header(), "Authorization: Basic "), "user:pw", "other-token"} {
		if strings.Contains(got, leak) {
			t.Errorf("scrub left %q in\n%s", leak, got)
		}
	}
	if want := "remote: token [REDACTED]"; !strings.Contains(got, want) {
		t.Errorf("scrub(...) = %q, want it to contain %q", got, want)
	}
	if got := scrub("nothing secret here", nil); got != "nothing secret here" {
		t.Errorf("scrub changed a clean string to %q", got)
	}
}

func TestCut(t *testing.T) {
	t.Parallel()
	got := cut("hint: Updates were rejected\n\nerror: failed to push\n  To origin  \n")
	if want := "error: failed to push; To origin"; got != want {
		t.Errorf("cut = %q, want %q", got, want)
	}
	long := "fatal: first line\n" + strings.Repeat("remote: noise\n", 500) + "error: the verdict\n"
	got = cut(long)
	if n := len([]rune(got)); n > maxDetail+5 {
		t.Errorf("cut kept %d characters", n)
	}
	if !strings.HasPrefix(got, "fatal: first line") || !strings.HasSuffix(got, "error: the verdict") || !strings.Contains(got, " … ") {
		t.Errorf("cut lost the start or the end: %q", got)
	}
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	b := &tailBuffer{max: 8}
	for _, s := range []string{"0123", "4567", "89ab"} {
		if n, err := b.Write([]byte(s)); n != 4 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if got := b.String(); got != "456789ab" {
		t.Errorf("tail = %q", got)
	}
}

func TestParseLsRemote(t *testing.T) {
	t.Parallel()
	refs := parseLsRemote("ref: refs/heads/trunk\tHEAD\n1111\tHEAD\n2222\trefs/heads/job\n3333\trefs/tags/v1\n4444\trefs/tags/v1^{}\n")
	if refs.head != "refs/heads/trunk" || refs.ids["HEAD"] != "1111" || refs.ids["refs/heads/job"] != "2222" || refs.ids["refs/tags/v1"] != "3333" {
		t.Errorf("parseLsRemote = %+v", refs)
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	for s, want := range map[string][2]int{
		"git version 2.39.5\n":                 {2, 39},
		"git version 2.39.3 (Apple Git-146)\n": {2, 39},
		"git version 2.45.1.windows.1\n":       {2, 45},
		"git version 3.0.0-rc1\n":              {3, 0},
	} {
		if got, ok := parseVersion(s); !ok || got != want {
			t.Errorf("parseVersion(%q) = %v, %v", s, got, ok)
		}
	}
	if _, ok := parseVersion("hub version 2.14"); ok {
		t.Error("parseVersion accepted a non-git answer")
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://x-access-token:tok@git.example/o/r.git": "https://x-access-token:xxxxx@git.example/o/r.git",
		"https://tok@git.example/o/r.git":                "https://xxxxx@git.example/o/r.git",
		"ssh://git@git.example/o/r.git":                  "ssh://git@git.example/o/r.git",
		"git@git.example:o/r.git":                        "git@git.example:o/r.git",
		"https://git.example/o/r.git":                    "https://git.example/o/r.git",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
