package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/docsapi/docsapi-go/server"
)

// The server's secret seals the dashboard's sessions and the exports'
// cursors (server.Config.Secret). It lives outside the database, which is
// the point: a copy of the database (a backup, a dump) must not be enough
// to seal a session. serve reads it from a file of exactly
// server.SecretBytes random bytes that only its owner may read, or from
// DOCSAPI_SECRET (the same bytes in base64). By default the file is
// secret.key in the data folder, made at the first start.

// secretFileName is the default secret file's name in the data folder.
const secretFileName = "secret.key"

// secretEnv holds the secret itself, in base64; secretFileEnv names the
// file that holds it.
const (
	secretEnv     = "DOCSAPI_SECRET"
	secretFileEnv = "DOCSAPI_SECRET_FILE"
)

// secretHowTo says how to make a secret file by hand.
const secretHowTo = "make one with: (umask 077; head -c 32 /dev/urandom > FILE)"

// resolveSecret picks where the secret comes from: --secret-file, then
// DOCSAPI_SECRET_FILE or DOCSAPI_SECRET, then the file's secretFile, then
// secret.key in the data folder (with PostgreSQL, which has no data
// folder, in the default one). It sets set.secretFile (absolute; "" when
// DOCSAPI_SECRET holds the secret), set.secretDefault and
// set.sources["secretFile"].
func (set *serveSettings) resolveSecret(f *serveFlags, getenv func(string) string) error {
	fileEnv, valueEnv := getenv(secretFileEnv), getenv(secretEnv)
	var path string
	switch {
	case given(f.storage.fs, "secret-file"):
		path, set.sources["secretFile"] = f.secretFile, "--secret-file"
	case fileEnv != "" && valueEnv != "":
		return usagef("%s and %s are both set; give the secret one way", secretFileEnv, secretEnv)
	case valueEnv != "":
		set.sources["secretFile"] = secretEnv
		return nil
	case fileEnv != "":
		path, set.sources["secretFile"] = fileEnv, secretFileEnv
	case set.file.SecretFile != "":
		path, set.sources["secretFile"] = set.file.SecretFile, "configuration file"
	default:
		dir := set.storage.dataDir
		if set.storage.database != "" {
			var err error
			if dir, err = defaultDataDir(getenv); err != nil {
				return usagef("no folder for the server's secret file: set secretFile (or --secret-file, %s) or %s", secretFileEnv, secretEnv)
			}
		}
		path, set.sources["secretFile"], set.secretDefault = filepath.Join(dir, secretFileName), "default", true
	}
	if path == "" {
		return usagef("the secret file's path (from %s) is empty", set.sources["secretFile"])
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	set.secretFile = abs
	return nil
}

// loadSecret returns the server's secret as set says where it is. The
// default file is made if it is missing (create false, for
// --print-config, only checks it when it exists); a file named by a
// setting must exist. A secret that is not exactly server.SecretBytes
// long, or a file that others may read, that is not a regular file or
// cannot be read, is refused with an error naming it.
func (set *serveSettings) loadSecret(getenv func(string) string, create bool, log *slog.Logger) ([]byte, error) {
	from := set.sources["secretFile"]
	if set.secretFile == "" {
		return decodeSecretEnv(getenv(secretEnv))
	}
	secret, err := readSecretFile(set.secretFile, from)
	if !errors.Is(err, fs.ErrNotExist) {
		return secret, err
	}
	switch {
	case !set.secretDefault:
		return nil, usagef("the secret file %s (from %s) does not exist: give the file every server sharing this database uses, or %s", set.secretFile, from, secretHowTo)
	case !create:
		return nil, nil // made at the first start
	}
	if err := makeSecretFile(set.secretFile); err != nil {
		return nil, fmt.Errorf("making the secret file %s: %w", set.secretFile, err)
	}
	if log != nil {
		msg := "docsapi: made the secret file that seals sessions and cursors; keep it out of backups of the database, and to rotate it, replace it and restart"
		if set.storage.database != "" {
			msg = "docsapi: made the secret file that seals sessions and cursors; every replica on this PostgreSQL database needs this same file (or DOCSAPI_SECRET), or each refuses the others' sessions and cursors"
			log.Warn(msg, slog.String("file", set.secretFile))
		} else {
			log.Info(msg, slog.String("file", set.secretFile))
		}
	}
	return readSecretFile(set.secretFile, from)
}

// decodeSecretEnv reads DOCSAPI_SECRET, never repeating its value.
func decodeSecretEnv(v string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil || len(b) != server.SecretBytes {
		return nil, usagef("%s must hold %d random bytes in base64 (%d characters, such as the output of: base64 < secret.key)",
			secretEnv, server.SecretBytes, base64.StdEncoding.EncodedLen(server.SecretBytes))
	}
	return b, nil
}

// readSecretFile reads the secret file path, which from named. A missing
// file is an error that matches fs.ErrNotExist; a link to nothing is not
// missing, but unreadable.
func readSecretFile(path, from string) ([]byte, error) {
	f, err := os.Open(path)
	if _, lerr := os.Lstat(path); errors.Is(err, fs.ErrNotExist) && errors.Is(lerr, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, usagef("the secret file %s (from %s) cannot be read: %v", path, from, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, usagef("the secret file %s (from %s) cannot be read: %v", path, from, err)
	case !fi.Mode().IsRegular():
		return nil, usagef("the secret file %s (from %s) is not a regular file", path, from)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, usagef("the secret file %s (from %s) has mode %s, which lets other users read it: chmod 600 %s", path, from, fi.Mode().Perm(), path)
	}
	// One byte more than a secret, to tell a longer file.
	b := make([]byte, server.SecretBytes+1)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, usagef("the secret file %s (from %s) cannot be read: %v", path, from, err)
	}
	if n != server.SecretBytes {
		size := fmt.Sprintf("%d bytes", n)
		if n > server.SecretBytes {
			size = "more than that"
		}
		return nil, usagef("the secret file %s (from %s) must hold exactly %d random bytes, and holds %s: is it the right file? %s",
			path, from, server.SecretBytes, size, secretHowTo)
	}
	return b[:n], nil
}

// makeSecretFile writes a new random secret to path, mode 0600, in its
// folder (made 0700 if missing). The secret is written whole to a file of
// its own, then linked to path, so that a server that reads path never
// finds half a secret, and of two servers making it at once, one wins and
// both read its secret.
func makeSecretFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".secret-*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	secret := make([]byte, server.SecretBytes)
	rand.Read(secret)
	_, err = tmp.Write(secret)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	// The link is durable once the folder is.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
