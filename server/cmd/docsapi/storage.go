package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/docsapi/docsapi-go/server/sqlite"
	"github.com/docsapi/docsapi-go/server/store"
)

// dbFileName is the SQLite database's name inside the data folder.
const dbFileName = "docsapi.db"

// storageFlags are the flags of every command that works on the server's
// storage: serve, project and key.
type storageFlags struct {
	fs                     *flag.FlagSet
	data, database, config string
}

func (f *storageFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.data, "data", "", "`DIR` holding the SQLite database DIR/"+dbFileName+", created 0700 if missing\n(env DOCSAPI_DATA; default $XDG_DATA_HOME/docsapi, else ~/.local/share/docsapi)")
	fs.StringVar(&f.database, "database", "", "PostgreSQL `URL` (postgres://...) instead of SQLite; prefer the env\nDOCSAPI_DATABASE_URL for a URL with a password, which a flag shows to ps")
	fs.StringVar(&f.config, "config", "", "configuration `FILE` (JSON; see 'docsapi serve --help') (env DOCSAPI_CONFIG)")
}

// loadFile reads the configuration file named by --config or DOCSAPI_CONFIG,
// or returns nil when neither names one.
func (f *storageFlags) loadFile(getenv func(string) string) (*fileConfig, string, error) {
	path, from := f.config, "--config"
	if !given(f.fs, "config") {
		path, from = getenv("DOCSAPI_CONFIG"), "DOCSAPI_CONFIG"
	}
	if path == "" {
		return nil, "", nil
	}
	cfg, err := loadConfigFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, "", usagef("%s: %v", from, err)
		}
		return nil, "", &usageError{err: err}
	}
	abs, _ := filepath.Abs(path)
	return cfg, abs, nil
}

// storage is where the server keeps its data: a SQLite folder or a
// PostgreSQL URL, and which setting chose it.
type storage struct {
	dataDir  string
	database string
	from     string
	// pathCap is the cap on distinct paths per project and day that the
	// store applies to the views it adds (pageViews.maxPathsPerDay); 0 is
	// the store's default.
	pathCap int
}

// describe names the storage for messages and logs, never with a password.
func (s storage) describe() string {
	if s.database != "" {
		return "PostgreSQL " + redactURL(s.database)
	}
	return "SQLite " + filepath.Join(s.dataDir, dbFileName)
}

// resolve chooses the storage. Flags win over the environment, which wins
// over the configuration file, which wins over the default folder. The
// first of these that names any storage decides, so "--data DIR" is obeyed
// even when DOCSAPI_DATABASE_URL is set; naming both at one level is an error.
func (f *storageFlags) resolve(getenv func(string) string, file *fileConfig) (storage, error) {
	type level struct {
		data, database, dataName, databaseName string
		inFile                                 bool
	}
	levels := []level{
		{data: flagValue(f.fs, "data", f.data), database: flagValue(f.fs, "database", f.database), dataName: "--data", databaseName: "--database"},
		{data: getenv("DOCSAPI_DATA"), database: getenv("DOCSAPI_DATABASE_URL"), dataName: "DOCSAPI_DATA", databaseName: "DOCSAPI_DATABASE_URL"},
	}
	if file != nil {
		levels = append(levels, level{data: file.Data, database: file.Database, dataName: "the configuration file's data", databaseName: "its database", inFile: true})
	}
	for _, l := range levels {
		switch {
		case l.data != "" && l.database != "":
			return storage{}, usagef("%s and %s are both set; choose SQLite or PostgreSQL", l.dataName, l.databaseName)
		case l.database != "":
			if err := checkDatabaseURL(l.database, l.databaseName, l.inFile); err != nil {
				return storage{}, &usageError{err: err}
			}
			return storage{database: l.database, from: l.databaseName}, nil
		case l.data != "":
			dir, err := filepath.Abs(l.data)
			if err != nil {
				return storage{}, err
			}
			return storage{dataDir: dir, from: l.dataName}, nil
		}
	}
	dir, err := defaultDataDir(getenv)
	if err != nil {
		return storage{}, err
	}
	return storage{dataDir: dir, from: "default"}, nil
}

// flagValue is the flag's value if it was given, else "".
func flagValue(fs *flag.FlagSet, name, value string) string {
	if given(fs, name) {
		return value
	}
	return ""
}

// defaultDataDir follows the XDG base directory convention, so that serve
// and the admin commands find the same database from any working folder.
func defaultDataDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "docsapi"), nil
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "docsapi"), nil
	}
	return "", usagef("no storage given and no home folder to default to: pass --data DIR or --database URL")
}

// openStore opens the storage. With create false (the admin commands but
// project create), a missing SQLite database is an error rather than a new
// empty one: listing keys of a folder that is not the server's would
// otherwise print nothing and look fine.
// log, if not nil, receives what the backend reports on its own (PostgreSQL's
// migrations and lost notification connections).
func openStore(ctx context.Context, loc storage, create bool, log *slog.Logger) (store.Store, error) {
	if loc.database != "" {
		return openPostgres(ctx, loc.database, loc.pathCap, log)
	}
	path := filepath.Join(loc.dataDir, dbFileName)
	if !create {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, &hintError{
				err:  fmt.Errorf("no database at %s (storage from %s)", path, loc.from),
				hint: "point --data (or DOCSAPI_DATA) at the server's data folder, or create the database with 'docsapi project create' or 'docsapi serve'",
			}
		}
	}
	// 0700: the database holds key hashes and every job's prompts.
	if err := os.MkdirAll(loc.dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the data folder: %w", err)
	}
	var opts []sqlite.Option
	if loc.pathCap > 0 {
		opts = append(opts, sqlite.WithDailyPathCap(loc.pathCap))
	}
	st, err := sqlite.Open(ctx, path, opts...)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return st, nil
}

// dataDirWarning returns a warning when the data folder is open to other
// users, which a folder made by openStore never is.
func dataDirWarning(loc storage) string {
	if loc.database != "" {
		return ""
	}
	fi, err := os.Stat(loc.dataDir)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("the data folder %s is accessible to other users (mode %s); consider chmod 700", loc.dataDir, fi.Mode().Perm())
}
