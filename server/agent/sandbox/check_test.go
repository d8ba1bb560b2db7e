//go:build linux

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckMissingBwrap(t *testing.T) {
	err := Check(filepath.Join(t.TempDir(), "bwrap"))
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Check = %v, want ErrUnavailable", err)
	}
	for _, want := range []string{"bubblewrap is not installed", "apt-get install bubblewrap", `Mode to "off" explicitly`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

// TestCheckBwrapFails: a bwrap that cannot make namespaces (here, a fake
// one that fails as bwrap does) gets an error naming the kernel settings.
func TestCheckBwrapFails(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "bwrap")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Check(fake)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Check = %v, want ErrUnavailable", err)
	}
	for _, want := range []string{"cannot make the sandbox's namespaces", "No permissions to create new namespace", "user.max_user_namespaces", `Mode to "off"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

func TestDiagnose(t *testing.T) {
	write := func(proc, file, value string) {
		p := filepath.Join(proc, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(value+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		files map[string]string
		want  []string
		not   []string
	}{
		{"Debian's switch off", map[string]string{"sys/kernel/unprivileged_userns_clone": "0", "sys/user/max_user_namespaces": "1000"},
			[]string{"kernel.unprivileged_userns_clone is 0", "sysctl -w kernel.unprivileged_userns_clone=1"}, []string{"max_user_namespaces is"}},
		{"no namespaces at all", map[string]string{"sys/user/max_user_namespaces": "0"},
			[]string{"user.max_user_namespaces is 0", "sysctl -w user.max_user_namespaces="}, nil},
		{"Ubuntu's AppArmor", map[string]string{"sys/user/max_user_namespaces": "1000", "sys/kernel/apparmor_restrict_unprivileged_userns": "1"},
			[]string{"kernel.apparmor_restrict_unprivileged_userns is 1", "AppArmor profile"}, nil},
		{"nothing forbids them", map[string]string{"sys/user/max_user_namespaces": "1000"},
			[]string{"no kernel setting forbids", "user.max_user_namespaces = 1000", "kernel.unprivileged_userns_clone absent", "container"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := t.TempDir()
			for f, v := range tt.files {
				write(proc, f, v)
			}
			got := diagnose(proc)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("diagnose = %q, want %q", got, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("diagnose = %q, should not say %q", got, n)
				}
			}
		})
	}
}
