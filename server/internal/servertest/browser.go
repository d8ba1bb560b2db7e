package servertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The server's pages in a real browser: chromedp driving Chromium
// (Debian's chromium, which .ci/test-env.sh installs). A test skips only
// where no browser is found, and .ci/test-env.sh sets
// DOCSAPI_TEST_BROWSER=required wherever it installed one, which makes a
// skip a failure.
//
// Screenshots go to the folder DOCSAPI_TEST_SCREENSHOTS names (.ci/run
// sets it and checks them), else to the test's artifact folder (go test
// -artifacts on Go 1.26).

// browserNames are the programs looked for on PATH, in order;
// DOCSAPI_TEST_BROWSER_PATH names one elsewhere.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// FindBrowser returns the browser's program, or skips the test (fails it
// when DOCSAPI_TEST_BROWSER=required).
func FindBrowser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DOCSAPI_TEST_BROWSER_PATH"); p != "" {
		return p
	}
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("no browser: none of %s is on PATH, and DOCSAPI_TEST_BROWSER_PATH is not set", strings.Join(browserNames, ", "))
	if os.Getenv("DOCSAPI_TEST_BROWSER") == "required" {
		t.Fatal(msg + " (DOCSAPI_TEST_BROWSER=required)")
	}
	t.Skip(msg)
	return ""
}

// screenshotDir is where the test's screenshots go.
func screenshotDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("DOCSAPI_TEST_SCREENSHOTS")
	if root == "" {
		return artifactDir(t)
	}
	// Stat the folder before writing into it: go test then keys its cached
	// result on the folder (one inside the module, as .ci/run's is), so a
	// run after the folder was removed runs the test again instead of
	// reporting a result whose screenshots are gone.
	os.Stat(root)
	dir := filepath.Join(root, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Tab is a browser tab on the pages under Base.
type Tab struct {
	T    *testing.T
	ctx  context.Context
	Base string
	dir  string // screenshots
}

// NewTab opens a tab of browser on the pages under base.
func NewTab(t *testing.T, browser, base string) *Tab {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.WindowSize(DesktopWidth, 900),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root with its sandbox (CI runs as
		// root); the pages it opens are the test's own.
		opts = append(opts, chromedp.NoSandbox)
	}
	// Every wait below ends with this context: a page that never shows
	// what the test waits for fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(ctx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelTab)
	return &Tab{T: t, ctx: ctx, Base: base, dir: screenshotDir(t)}
}

// Do runs steps, failing the test on an error.
func (b *Tab) Do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.T.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.T.Fatalf("%s: %v", what, err)
	}
}

// Open goes to path and waits for sel.
func (b *Tab) Open(path, sel string) {
	b.T.Helper()
	b.Do("opening "+path, chromedp.Navigate(b.Base+path), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// Text returns the text of the element sel.
func (b *Tab) Text(sel string) string {
	b.T.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		b.T.Fatalf("reading %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// Eval returns the value of a script run in the page, as DevTools runs
// it (the pages' policy may forbid scripts of their own).
func Eval[T any](b *Tab, expr string) T {
	b.T.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.T.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// Run runs an action that returns a value (an element's screenshot, a
// script whose promise it awaits), failing the test on an error.
func Run[T any](b *Tab, what string, a chromedp.Action[T]) T {
	b.T.Helper()
	v, err := chromedp.Run(b.ctx, a)
	if err != nil {
		b.T.Fatalf("%s: %v", what, err)
	}
	return v
}

// Rows returns the text of the cells of the rows of a table's body.
func (b *Tab) Rows(table string) [][]string {
	b.T.Helper()
	return Eval[[][]string](b, `Array.from(document.querySelectorAll(`+"`"+table+` tbody tr`+"`"+`)).
		filter(r => r.cells.length > 1).
		map(r => Array.from(r.cells).map(c => c.textContent.trim()))`)
}

// Present reports whether the page has an element sel.
func (b *Tab) Present(sel string) bool {
	b.T.Helper()
	return Eval[bool](b, `document.querySelector(`+"`"+sel+"`"+`) !== null`)
}

// Screenshot saves the whole page as name.png.
func (b *Tab) Screenshot(name string) {
	b.T.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.T.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, name+".png"), png, 0o644); err != nil {
		b.T.Fatal(err)
	}
}

// ScreenshotBoth saves the page as a desktop shows it (name.png) and as a
// phone 390 pixels wide does (name-phone.png), failing the test if at the
// phone's width the page is wider than the screen: a table or a chart
// must scroll inside its own box, never the page. The tab is left at the
// desktop's size.
func (b *Tab) ScreenshotBoth(name string) {
	b.T.Helper()
	b.Screenshot(name)
	b.Do("a phone's screen", chromedp.EmulateViewport(PhoneWidth, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	// clientWidth, not innerWidth: a phone's browser zooms out to show a
	// page wider than its screen, and innerWidth grows with the page.
	if wide := Eval[bool](b, `document.documentElement.scrollWidth > document.documentElement.clientWidth`); wide {
		b.T.Errorf("%s: the page is wider than a phone's screen", name)
	}
	b.Screenshot(name + "-phone")
	b.Do("a desktop's screen", chromedp.EmulateViewport(DesktopWidth, 900))
}

// The widths, in CSS pixels, at which the pages are tested.
const (
	PhoneWidth   = 390
	DesktopWidth = 1280
)

// WaitText waits until the element sel says text.
func (b *Tab) WaitText(sel, text string) {
	b.T.Helper()
	b.Do("waiting for "+sel+" to say "+text, chromedp.Poll[chromedp.Void](
		`document.querySelector(`+"`"+sel+"`"+`)?.textContent === `+"`"+text+"`"))
}
